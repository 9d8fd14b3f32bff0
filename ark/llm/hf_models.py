"""Helpers shared by the trainers and the local back-end for Hugging Face causal LMs: the device and dtype to use,
the checks of a chat template, and the fingerprint that ties a LoRA adapter to its base model. Needs the ``train``
extra."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ark.errors import ArkError
from ark.llm.messages import AssistantMessage, ToolCall, ToolMessage, UserMessage, to_openai

# Written beside every adapter this package trains: which base it was made for (path, id and fingerprint).
ADAPTER_META = "ark_adapter.json"
# Written into every student this package trains (adapter, full model, merged export): what its run needs of the
# tool loop, read from its training data. A teacher step of 40 to 60 tool calls (the offline policy's verify step)
# taught the student to write such replies; a run capped below that would cut them where the teacher did not.
STUDENT_META = "ark_student.json"
# Config keys that change with where and how a model is saved or loaded, not with what it is.
_VOLATILE_CONFIG_KEYS = {"_name_or_path", "transformers_version", "dtype", "torch_dtype", "use_cache",
                         "architectures", "_attn_implementation_autoset", "output_attentions",
                         "output_hidden_states", "return_dict"}


class ChatTemplateError(ValueError, ArkError):
    """A tokenizer whose chat template cannot drive a tool-calling agent."""


def pick_device(device: str | None = None) -> str:
    """``device`` when given, else ``cuda`` when available, else ``cpu``."""
    if device:
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def pick_dtype(device: str):
    """bfloat16 on a GPU that supports it, float32 otherwise (CPU training and inference stay exact)."""
    import torch

    if device.startswith("cuda") and torch.cuda.is_available() and torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return torch.float32


def load_trainable_base(base: str | Path, tokenizer: Any, device: str, bf16: bool | None,
                        error: type[Exception]) -> tuple[Any, bool, str]:
    """The causal LM ``base`` in float32 for a trainer (which casts under bf16 mixed precision), whether to train in
    bf16 (``bf16`` when given, else on a GPU that supports it) and the base's fingerprint (with ``tokenizer``'s size);
    ``error`` (the trainer's own error type) names the base when it cannot be loaded."""
    import torch
    from transformers import AutoModelForCausalLM

    use_bf16 = bf16 if bf16 is not None else pick_dtype(device) == torch.bfloat16
    try:
        model = AutoModelForCausalLM.from_pretrained(str(base), dtype=torch.float32)
    except (OSError, ValueError) as exc:
        raise error(f"cannot load a causal LM from base {str(base)!r}: {exc}") from exc
    return model, use_bf16, model_fingerprint(model.config, len(tokenizer))


def model_fingerprint(config: Any, vocab_size: int | None = None) -> str:
    """A short hash of a model's architecture (its config without load-time keys) and tokenizer size.

    Two bases an adapter cannot move between (other sizes, layers, vocabulary) get different fingerprints.
    """
    values = config.to_dict() if hasattr(config, "to_dict") else dict(config)
    kept = {k: v for k, v in values.items() if k not in _VOLATILE_CONFIG_KEYS}
    payload = json.dumps({"config": kept, "vocab": vocab_size}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def read_adapter_meta(adapter_dir: str | Path) -> dict[str, Any] | None:
    """The base-model record written beside an adapter by :func:`ark.training.sft.train_sft`, if any."""
    path = Path(adapter_dir) / ADAPTER_META
    return json.loads(path.read_text()) if path.is_file() else None


def most_tool_calls_per_turn(samples: Any) -> int:
    """The most tool calls one assistant message of the chat ``samples`` holds (0 for none)."""
    return max((len(message.get("tool_calls") or []) for sample in samples for message in sample["messages"]
                if message.get("role") == "assistant"), default=0)


def trained_tool_calls_per_turn(*folders: str | Path | None) -> int | None:
    """The most tool calls per turn the student's training data held, from the first of ``folders`` (an adapter,
    then its model) that records it; None when none does (a model not trained here)."""
    for folder in folders:
        path = Path(folder) / STUDENT_META if folder else None
        if path is not None and path.is_file():
            value = json.loads(path.read_text()).get("max_tool_calls_per_turn")
            if isinstance(value, int) and value > 0:
                return value
    return None


_PROBE_TOOL, _PROBE_CALL, _PROBE_VALUE, _PROBE_RESULT = ("probe_schema_q7x", "probe_call_k2w", "probe_value_m5z",
                                                         "probe_result_t9y")


def check_tool_chat_template(tokenizer: Any, where: str) -> None:
    """Raise :class:`ChatTemplateError` unless ``tokenizer`` has a chat template that renders tool schemas, the
    assistant's tool calls with their arguments, and tool results (what an agent conversation needs)."""
    if not getattr(tokenizer, "chat_template", None):
        raise ChatTemplateError(
            f"{where} has no chat template, so it cannot hold a conversation; use an instruct/chat model, or a "
            f"model built by ark.training.tiny_model (set tokenizer.chat_template before training)")
    tools = [{"type": "function", "function": {"name": _PROBE_TOOL, "description": "probe",
                                               "parameters": {"type": "object", "properties": {}}}}]
    messages = to_openai([
        UserMessage("probe"),
        AssistantMessage("", [ToolCall("c0", _PROBE_CALL, json.dumps({"key": _PROBE_VALUE}))]),
        ToolMessage("c0", _PROBE_RESULT),
    ])
    try:
        text = tokenizer.apply_chat_template(messages, tools=tools, tokenize=False)
    except Exception as exc:  # noqa: BLE001 - templates raise anything (jinja errors, raise_exception)
        raise ChatTemplateError(f"the chat template of {where} cannot render a tool-calling conversation: "
                                f"{type(exc).__name__}: {exc}") from exc
    missing = [what for what, probe in (("tool schemas", _PROBE_TOOL), ("tool calls", _PROBE_CALL),
                                        ("tool-call arguments", _PROBE_VALUE), ("tool results", _PROBE_RESULT))
               if probe not in text]
    if missing:
        raise ChatTemplateError(f"the chat template of {where} has no tool support: it drops the "
                                f"{', '.join(missing)}; use a model whose template supports tools")
