"""Supervised fine-tuning on chat trajectories with TRL's ``SFTTrainer`` (LoRA through PEFT, or full fine-tuning).

The ARK paper's distillation recipe (§4.3; the reference's settings): LoRA r = 32, α = 64, dropout 0.1 on the
attention and MLP projections, AdamW at 1e-5, one epoch, 16,384-token context, early stopping on the validation
loss, loss on assistant tokens only. :class:`SFTSettings` holds those defaults; every run writes
``training_config.json`` (settings, base model and its fingerprint, library versions, dataset digests, truncation
count) and ``training_result.json`` (losses, steps, time). Checkpoints go to ``<out>/checkpoints`` and a rerun with
``resume=True`` continues from the newest one. Any Hugging Face causal LM path or id works as the base; CPU works,
CUDA and bf16 are used when present. Needs the ``train`` extra.

Layout of ``out_dir``: ``adapter/`` (LoRA runs) or ``model/`` (full fine-tuning), each with the tokenizer;
``checkpoints/``; the two JSON records. :func:`export_merged` turns an adapter into a standalone model folder.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ark.errors import ArkError

from ..llm.hf_models import (
    ADAPTER_META,
    STUDENT_META,
    check_tool_chat_template,
    load_trainable_base,
    model_fingerprint,
    most_tool_calls_per_turn,
    pick_device,
    read_adapter_meta,
)
from ..storage.atomic import atomic_directory, atomic_file
from .datasets import ChatDatasetError, read_chat_dataset

log = logging.getLogger(__name__)

LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
TRAINING_LIBRARIES = ("torch", "transformers", "trl", "peft", "datasets", "accelerate", "tokenizers")
CONFIG_FILE = "training_config.json"
RESULT_FILE = "training_result.json"


class SFTSettings(BaseModel):
    """Every setting of one SFT run. Defaults: the paper's distillation recipe (§4.3) and the reference's LoRA."""

    model_config = ConfigDict(extra="forbid")

    lora: bool = Field(default=True, description="Train a LoRA adapter (paper); False: full fine-tuning.")
    lora_r: int = Field(default=32, ge=1, description="LoRA rank r (reference recipe: 32).")
    lora_alpha: int = Field(default=64, ge=1, description="LoRA scaling α (reference recipe: 64).")
    lora_dropout: float = Field(default=0.1, ge=0.0, lt=1.0, description="LoRA dropout (reference recipe: 0.1).")
    target_modules: list[str] = Field(default_factory=lambda: list(LORA_TARGETS),
                                      description="Modules given adapters: attention and MLP projections.")
    learning_rate: float = Field(default=1e-5, gt=0, description="AdamW learning rate (paper §4.3: 1e-5).")
    epochs: float = Field(default=1.0, gt=0, description="Passes over the training set (paper: one epoch).")
    max_length: int = Field(default=16384, ge=16, description="Context length in tokens (paper: 16,384); longer "
                                                              "samples are cut at the end and counted.")
    batch_size: int = Field(default=1, ge=1, description="Samples per device step.")
    gradient_accumulation_steps: int = Field(default=1, ge=1, description="Steps accumulated per update.")
    lr_scheduler: str = Field(default="linear", description="transformers learning-rate schedule name.")
    warmup_ratio: float = Field(default=0.0, ge=0.0, lt=1.0, description="Fraction of updates spent warming up.")
    weight_decay: float = Field(default=0.0, ge=0.0, description="AdamW weight decay.")
    max_grad_norm: float = Field(default=1.0, gt=0, description="Gradient clipping norm.")
    early_stopping_patience: int | None = Field(
        default=3, ge=1, description="Evaluations without a better validation loss before stopping (paper: early "
                                     "stopping on the validation split); None: off. Needs a validation set.")
    evaluations: int = Field(default=10, ge=1, description="Validation passes over the run (when eval_steps unset).")
    eval_steps: int | None = Field(default=None, ge=1, description="Updates between validation passes.")
    save_steps: int | None = Field(default=None, ge=1, description="Updates between checkpoints (default: at each "
                                                                   "validation pass, else 500).")
    save_total_limit: int = Field(default=2, ge=1, description="Checkpoints kept.")
    logging_steps: int = Field(default=10, ge=1, description="Updates between loss logs.")
    gradient_checkpointing: bool = Field(default=False, description="Trade compute for memory on long contexts.")
    bf16: bool | None = Field(default=None, description="bfloat16 mixed precision; None: on when CUDA supports it.")
    device: str | None = Field(default=None, description="'cpu' or 'cuda'; None: CUDA when present.")
    cpu_threads: int | None = Field(default=None, ge=1, description="torch CPU threads during training; None: torch's "
                                    "default. 1 is fastest for tiny models on a busy machine.")
    seed: int = Field(default=0, description="Seed of initialisation, shuffling and dropout.")
    progress: bool = Field(default=True, description="Show progress bars.")


@dataclass
class SFTResult:
    """What a run produced: where the trained weights are and how it went."""

    out_dir: str
    weights_dir: str  # adapter/ or model/
    train_samples: int
    validation_samples: int
    truncated_samples: int
    max_tokens: int
    steps: int
    train_loss: float | None
    best_validation_loss: float | None
    wall_s: float
    resumed_from: str | None = None
    log_history: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class SFTError(ValueError, ArkError):
    """A base model, dataset or setting that cannot be trained."""


def library_versions() -> dict[str, str | None]:
    """Installed versions of the training libraries (None when missing)."""
    versions: dict[str, str | None] = {}
    for name in TRAINING_LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def file_digest(path: str | Path) -> str:
    """sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def training_chat_template(tokenizer: Any) -> str:
    """The template TRL trains with: the tokenizer's own when it has ``{% generation %}`` markers, else TRL's
    training variant of a known template (e.g. Qwen3's); an error when neither exists, since assistant-only loss
    would then have nothing to mask by."""
    from trl.chat_template_utils import get_training_chat_template, has_generation_markers

    template = tokenizer.chat_template
    if isinstance(template, dict):
        template = template.get("default")
    if not template:
        raise SFTError("the base model's tokenizer has no chat template; assistant-only loss needs one")
    try:
        patched = get_training_chat_template(tokenizer)
    except ValueError:  # TRL knows no training variant of this template
        patched = None
    if patched is not None:
        return patched
    if has_generation_markers(template):
        return template
    raise SFTError("the base model's chat template has no {% generation %} markers and TRL knows no training "
                   "variant of it, so assistant tokens cannot be told apart; give the tokenizer a template with "
                   "{% generation %} around the assistant's output")


def trained_token_mask(sample: Mapping[str, Any], tokenizer: Any,
                       chat_template: str | None = None) -> tuple[list[int], list[int]]:
    """``(input_ids, mask)`` of one chat sample as the trainer sees it: mask 1 on the tokens that carry loss (the
    assistant's turns), 0 on system, user and tool tokens. ``chat_template`` defaults to
    :func:`training_chat_template`."""
    template = chat_template or training_chat_template(tokenizer)
    tools = sample.get("tools")
    tools = json.loads(tools) if isinstance(tools, str) else tools
    out = tokenizer.apply_chat_template(list(sample["messages"]), tools=tools, chat_template=template,
                                        tokenize=True, return_dict=True, return_assistant_tokens_mask=True)
    return list(out["input_ids"]), list(out["assistant_masks"])


def _load_samples(path: str | Path, what: str) -> list[dict[str, Any]]:
    try:
        return read_chat_dataset(path)
    except ChatDatasetError as exc:
        raise SFTError(f"{what} dataset: {exc}") from exc


@dataclass
class _Lengths:
    """Token counts of a training set under the training template and the context cut."""

    truncated: int = 0  # samples longer than max_length
    longest: int = 0
    unusable: int = 0  # samples whose assistant tokens all fall past the cut
    tokens: int = 0  # tokens the trainer sees (each sample cut at max_length)
    trained_tokens: int = 0  # of which assistant tokens (the loss)


def _length_statistics(samples: Sequence[Mapping[str, Any]], tokenizer: Any, template: str,
                       max_length: int) -> _Lengths:
    lengths = _Lengths()
    for sample in samples:
        ids, mask = trained_token_mask(sample, tokenizer, template)
        lengths.longest = max(lengths.longest, len(ids))
        lengths.tokens += min(len(ids), max_length)
        lengths.trained_tokens += sum(mask[:max_length])
        if len(ids) > max_length:
            lengths.truncated += 1
            if not any(mask[:max_length]):
                lengths.unusable += 1
    return lengths


def _latest_checkpoint(folder: Path) -> str | None:
    from transformers.trainer_utils import get_last_checkpoint

    return get_last_checkpoint(str(folder)) if folder.is_dir() else None


def train_sft(dataset_path: str | Path, base: str | Path, out_dir: str | Path, settings: SFTSettings | None = None,
              *, validation_path: str | Path | None = None, resume: bool = False) -> SFTResult:
    """Fine-tune ``base`` on the chat dataset at ``dataset_path`` (see :mod:`ark.training.datasets`), loss on the
    assistant's tokens only; write the result under ``out_dir`` and return an :class:`SFTResult`.

    ``validation_path``: a chat dataset for the validation loss, early stopping and the best checkpoint. ``resume``:
    continue from the newest checkpoint in ``out_dir/checkpoints`` (a fresh start when there is none).
    """
    import torch
    from transformers import EarlyStoppingCallback, TrainerCallback
    from trl import SFTTrainer

    settings = settings or SFTSettings()
    started = time.perf_counter()
    out = Path(out_dir)
    checkpoints = out / "checkpoints"
    train_samples = _load_samples(dataset_path, "training")
    validation = _load_samples(validation_path, "validation") if validation_path is not None else []
    if settings.early_stopping_patience is not None and not validation:
        log.warning("no validation set: early stopping and best-checkpoint selection are off")

    tokenizer, lengths = _checked_tokenizer(base, train_samples, settings.max_length)
    truncated, longest = lengths.truncated, lengths.longest

    device = pick_device(settings.device)
    model, use_bf16, fingerprint = load_trainable_base(base, tokenizer, device, settings.bf16, SFTError)

    peft_config = _lora_config(settings, model, base) if settings.lora else None
    total_updates, eval_steps, save_steps = _step_plan(settings, len(train_samples), bool(validation))
    config = _sft_config(settings, checkpoints, bool(validation), eval_steps, save_steps, use_bf16, device)
    from datasets import Dataset

    if not settings.progress:  # the libraries' own bars too (tokenising, writing shards), not just the trainer's
        _disable_library_progress_bars()
    callbacks: list[TrainerCallback] = []
    if validation and settings.early_stopping_patience is not None:
        callbacks.append(EarlyStoppingCallback(early_stopping_patience=settings.early_stopping_patience))
    trainer = SFTTrainer(model=model, args=config, train_dataset=Dataset.from_list(train_samples),
                         eval_dataset=Dataset.from_list(validation) if validation else None,
                         processing_class=tokenizer, peft_config=peft_config, callbacks=callbacks)
    resumed_from = _latest_checkpoint(checkpoints) if resume else None
    threads = torch.get_num_threads()
    if settings.cpu_threads is not None:
        torch.set_num_threads(settings.cpu_threads)
    try:
        output = trainer.train(resume_from_checkpoint=resumed_from)
    finally:
        torch.set_num_threads(threads)

    tool_calls = most_tool_calls_per_turn([*train_samples, *validation])
    weights = _save_student(out, trainer.model, tokenizer, settings.lora, {"base": str(base),
                                                                          "base_fingerprint": fingerprint}, tool_calls)
    history = list(trainer.state.log_history)
    eval_losses = [entry["eval_loss"] for entry in history if "eval_loss" in entry]
    result = SFTResult(
        out_dir=str(out), weights_dir=str(weights), train_samples=len(train_samples),
        validation_samples=len(validation), truncated_samples=truncated, max_tokens=longest,
        steps=int(trainer.state.global_step), train_loss=output.training_loss,
        best_validation_loss=min(eval_losses) if eval_losses else None, wall_s=time.perf_counter() - started,
        resumed_from=resumed_from, log_history=history,
    )
    _write_json(out / CONFIG_FILE, {
        "settings": settings.model_dump(mode="json"), "base": str(base), "base_fingerprint": fingerprint,
        "device": device, "bf16": use_bf16, "libraries": library_versions(),
        "dataset": {"path": str(dataset_path), "sha256": file_digest(dataset_path), "samples": len(train_samples)},
        "validation": ({"path": str(validation_path), "sha256": file_digest(validation_path),
                        "samples": len(validation)} if validation_path is not None else None),
        "truncated_samples": truncated, "max_tokens": longest, "updates": total_updates, "eval_steps": eval_steps,
        "tokens_per_epoch": lengths.tokens, "trained_tokens_per_epoch": lengths.trained_tokens,
        "max_tool_calls_per_turn": tool_calls,
    })
    _write_json(out / RESULT_FILE, result.to_dict())
    return result


def _checked_tokenizer(base: str | Path, train_samples: list[dict[str, Any]], max_length: int) -> tuple[Any, _Lengths]:
    """The base's tokenizer (with a tool-calling chat template) and the training samples' lengths under it; refuses
    a set where no sample has an assistant token within ``max_length``."""
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(str(base))
    except (OSError, ValueError) as exc:
        raise SFTError(f"cannot load a tokenizer from base {str(base)!r}: {exc}") from exc
    check_tool_chat_template(tokenizer, f"base {str(base)!r}")
    template = training_chat_template(tokenizer)
    lengths = _length_statistics(train_samples, tokenizer, template, max_length)
    if lengths.truncated:
        log.warning("%d of %d training samples are longer than max_length=%d tokens (longest %d) and are cut",
                    lengths.truncated, len(train_samples), max_length, lengths.longest)
    if lengths.unusable == len(train_samples):
        raise SFTError(f"every training sample's assistant tokens lie past max_length={max_length}: "
                       f"nothing would be trained; raise max_length (longest sample: {lengths.longest} tokens)")
    return tokenizer, lengths


def _lora_config(settings: SFTSettings, model: Any, base: str | Path) -> Any:
    """PEFT's LoRA configuration, refusing target modules the base does not have."""
    from peft import LoraConfig

    present = {name.rsplit(".", 1)[-1] for name, _ in model.named_modules()}
    missing = [m for m in settings.target_modules if m not in present]
    if missing:
        raise SFTError(f"base {str(base)!r} has no module(s) {missing} for LoRA; its linear layers include "
                       f"{sorted(n for n in present if n.endswith('proj'))[:12]}")
    return LoraConfig(r=settings.lora_r, lora_alpha=settings.lora_alpha, lora_dropout=settings.lora_dropout,
                      target_modules=list(settings.target_modules), task_type="CAUSAL_LM")


def _step_plan(settings: SFTSettings, train_samples: int, validation: bool) -> tuple[int, int, int]:
    """Total optimizer updates, eval_steps and save_steps; save_steps must be a multiple of eval_steps to keep the
    best checkpoint."""
    updates_per_epoch = math.ceil(train_samples / (settings.batch_size * settings.gradient_accumulation_steps))
    total_updates = max(1, math.ceil(updates_per_epoch * settings.epochs))
    eval_steps = settings.eval_steps or max(1, total_updates // settings.evaluations)
    save_steps = settings.save_steps or (eval_steps if validation else 500)
    if validation and save_steps % eval_steps:
        raise SFTError(f"save_steps={save_steps} must be a multiple of eval_steps={eval_steps} to keep the best "
                       f"checkpoint")
    return total_updates, eval_steps, save_steps


def _sft_config(settings: SFTSettings, checkpoints: Path, validation: bool, eval_steps: int, save_steps: int,
                use_bf16: bool, device: str) -> Any:
    """TRL's training arguments for these settings: evaluation, early stopping and the best checkpoint only with a
    validation set."""
    from trl import SFTConfig

    return SFTConfig(
        output_dir=str(checkpoints), assistant_only_loss=True, max_length=settings.max_length,
        learning_rate=settings.learning_rate, num_train_epochs=settings.epochs,
        per_device_train_batch_size=settings.batch_size, per_device_eval_batch_size=settings.batch_size,
        gradient_accumulation_steps=settings.gradient_accumulation_steps, lr_scheduler_type=settings.lr_scheduler,
        warmup_steps=settings.warmup_ratio, weight_decay=settings.weight_decay, max_grad_norm=settings.max_grad_norm,
        optim="adamw_torch", logging_steps=settings.logging_steps, save_strategy="steps", save_steps=save_steps,
        save_total_limit=settings.save_total_limit, eval_strategy="steps" if validation else "no",
        eval_steps=eval_steps if validation else None, load_best_model_at_end=bool(validation),
        metric_for_best_model="eval_loss" if validation else None, greater_is_better=False if validation else None,
        bf16=use_bf16, use_cpu=device == "cpu", seed=settings.seed, data_seed=settings.seed,
        gradient_checkpointing=settings.gradient_checkpointing, report_to="none",
        disable_tqdm=not settings.progress, dataset_num_proc=None, save_only_model=False,
    )


def _disable_library_progress_bars() -> None:
    """Silence the bars of datasets and transformers (tokenising, writing shards), not just the trainer's."""
    import datasets
    import transformers

    datasets.disable_progress_bars()
    transformers.utils.logging.disable_progress_bar()


def _save_student(out: Path, model: Any, tokenizer: Any, lora: bool, base: dict[str, str], tool_calls: int
                  ) -> Path:
    """Write the trained weights (``adapter/`` or ``model/``) with the tokenizer, the adapter's base record and the
    student's record (:data:`STUDENT_META`: the most tool calls one turn of its data held); return the folder."""
    weights = out / ("adapter" if lora else "model")
    with atomic_directory(weights) as staging:
        model.save_pretrained(str(staging))
        tokenizer.save_pretrained(str(staging))
        if lora:
            _write_json(staging / ADAPTER_META, base)
        _write_json(staging / STUDENT_META, {"max_tool_calls_per_turn": tool_calls, "source": "the most tool "
                                             "calls of one assistant turn in the training and validation data"})
    return weights


def export_merged(adapter_dir: str | Path, out_dir: str | Path, base: str | Path | None = None) -> Path:
    """Merge a LoRA adapter into its base's weights and save a standalone model folder (with the tokenizer) that
    any Hugging Face, vLLM or llama.cpp conversion tool loads. ``base`` defaults to the one the adapter records."""
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    adapter = Path(adapter_dir)
    meta = read_adapter_meta(adapter) or {}
    base = base or meta.get("base")
    if base is None:
        raise SFTError(f"{adapter} records no base model; pass base=")
    model = AutoModelForCausalLM.from_pretrained(str(base))
    tokenizer = AutoTokenizer.from_pretrained(str(adapter) if (adapter / "tokenizer_config.json").is_file()
                                              else str(base))
    expected = meta.get("base_fingerprint")
    if expected is not None and expected != model_fingerprint(model.config, len(tokenizer)):
        raise SFTError(f"adapter {adapter} was trained for base {meta.get('base')!r}, not {str(base)!r}")
    merged = PeftModel.from_pretrained(model, str(adapter)).merge_and_unload()
    out = Path(out_dir)
    with atomic_directory(out) as staging:
        merged.save_pretrained(str(staging))
        tokenizer.save_pretrained(str(staging))
        if (adapter / STUDENT_META).is_file():  # the merged student runs with the loop its data needs, too
            (staging / STUDENT_META).write_bytes((adapter / STUDENT_META).read_bytes())
    return out


def _write_json(path: Path, payload: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path, "w") as handle:
        handle.write(json.dumps(payload, indent=2, default=str) + "\n")
