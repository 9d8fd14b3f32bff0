"""`LocalChatClient`: a :class:`~ark.llm.ChatPolicy` that runs a Hugging Face causal LM in this process.

It renders the conversation and the tool schemas with the model's own chat template, generates (greedy, or sampled
with a temperature and a seed), and parses the model's ``<tool_call>`` blocks into OpenAI-format tool calls (see
:mod:`ark.llm.tool_calls`), so the ARK loop, fusion and trajectory records work exactly as with a remote model.
Generation runs in a worker thread (the event loop stays free) under a concurrency limit. ``--model hf:PATH`` selects
it through :func:`make_chat_client`. Needs the ``train`` extra (torch, transformers; peft for adapters).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ark.llm.cache import ResponseCache, request_key
from ark.llm.messages import AssistantMessage, Message, to_openai
from ark.llm.policy import DEFAULT_MAX_TOOL_CALLS_PER_TURN, LLMError, PolicyReply, Usage
from ark.llm.settings import LOCAL_PREFIX

from .hf_models import (
    ChatTemplateError,
    check_tool_chat_template,
    model_fingerprint,
    pick_device,
    pick_dtype,
    read_adapter_meta,
    trained_tool_calls_per_turn,
)
from .tool_calls import offered_names, parse_tool_calls


class LocalChatClient:
    """Chat policy backed by a local Hugging Face model (``model_path``: a folder or a hub id already cached).

    ``adapter``: a LoRA adapter folder trained for this base (merged into the weights at load time).
    ``temperature`` 0 means greedy decoding; above 0, sampling seeded by ``seed``, the agent index and the
    conversation, so a rerun replays the same samples. Greedy output depends on the conversation alone, so agents that
    reach the same conversation share one generation (the others get it as a cached reply): n greedy agents cost
    what one costs. ``cache_dir``: replies cached on disk like the OpenAI client's (keyed on the weights' files, the
    decoding settings, the conversation and, when sampling, the agent index). Counters: ``calls`` (generations),
    ``cache_hits`` (replies served from the disk cache or shared between greedy agents) and ``usage_total`` (tokens
    of the generations).
    """

    def __init__(self, model_path: str | Path, *, adapter: str | Path | None = None, temperature: float = 0.0,
                 top_p: float = 1.0, max_new_tokens: int = 1024, seed: int | None = None, concurrency: int = 1,
                 device: str | None = None, cache_dir: str | Path | None = None) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        if temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        self.model_path = str(model_path)
        self.adapter = str(adapter) if adapter is not None else None
        self.name = f"{LOCAL_PREFIX}{self.model_path}" + (f"+{self.adapter}" if self.adapter else "")
        self.temperature = temperature
        self.top_p = top_p
        self.max_new_tokens = max_new_tokens
        self.seed = seed
        self.concurrency = concurrency
        self.device = pick_device(device)
        self.calls = 0
        self.cache_hits = 0
        self.usage_total = Usage()
        self.cache = ResponseCache(cache_dir) if cache_dir is not None else None
        self.tokenizer, self.model = self._load()
        # A student trained here records the most tool calls one turn of its data held (the offline teacher's
        # verify step: 40 to 60); the tool loop runs that many of its replies' calls, not fewer.
        self.trained_tool_calls_per_turn = trained_tool_calls_per_turn(self.adapter, self.model_path)
        self.max_tool_calls_per_turn = max(DEFAULT_MAX_TOOL_CALLS_PER_TURN, self.trained_tool_calls_per_turn or 0)
        self._weights_id = self._weights_identity()
        self._stop_ids = self._stop_token_ids()
        self._rng_lock = threading.Lock()  # sampling seeds torch's global RNG: one sampled generation at a time
        self._loop: asyncio.AbstractEventLoop | None = None
        self._semaphore: asyncio.Semaphore | None = None
        # Greedy replies by request key: finished ones (a few, most recent last) and ones being generated.
        self._recent: OrderedDict[str, tuple[dict, Usage]] = OrderedDict()
        self._pending: dict[str, asyncio.Future] = {}

    def __repr__(self) -> str:
        return f"LocalChatClient({self.name!r}, device={self.device!r}, temperature={self.temperature})"

    def _load(self) -> tuple[Any, Any]:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        try:
            tokenizer = AutoTokenizer.from_pretrained(self.model_path)
        except (OSError, ValueError) as exc:
            raise LLMError(f"cannot load a tokenizer from {self.model_path!r}: {exc}") from exc
        try:
            check_tool_chat_template(tokenizer, repr(self.model_path))
        except ChatTemplateError as exc:
            raise LLMError(str(exc)) from exc
        try:
            model = AutoModelForCausalLM.from_pretrained(self.model_path, dtype=pick_dtype(self.device))
        except (OSError, ValueError) as exc:
            raise LLMError(f"cannot load a causal LM from {self.model_path!r}: {exc}") from exc
        if self.adapter is not None:
            model = self._with_adapter(model, tokenizer)
        model.to(self.device)  # type: ignore[arg-type]  # transformers types .to() for devices as PreTrainedModel
        model.eval()
        return tokenizer, model

    def _with_adapter(self, model: Any, tokenizer: Any) -> Any:
        """The base with the LoRA adapter merged in; a clear error when the adapter was made for another base."""
        from peft import PeftModel

        assert self.adapter is not None
        adapter = Path(self.adapter)
        if not (adapter / "adapter_config.json").is_file():
            raise LLMError(f"{self.adapter!r} is not a LoRA adapter folder (no adapter_config.json)")
        meta = read_adapter_meta(adapter) or {}
        made_for = meta.get("base", "?")
        expected = meta.get("base_fingerprint")
        actual = model_fingerprint(model.config, len(tokenizer))
        if expected is not None and expected != actual:
            raise LLMError(f"adapter {self.adapter!r} was trained for base {made_for!r}, which differs from "
                           f"{self.model_path!r} (architecture/vocabulary fingerprint {expected} != {actual}); "
                           f"load it on its own base model")
        try:
            return PeftModel.from_pretrained(model, str(adapter)).merge_and_unload()
        except (RuntimeError, ValueError, KeyError) as exc:
            raise LLMError(f"adapter {self.adapter!r} does not fit base {self.model_path!r} (it was made for "
                           f"{made_for!r}): {exc}") from exc

    def _stop_token_ids(self) -> list[int]:
        ids: list[int] = []
        configured = getattr(self.model.generation_config, "eos_token_id", None)
        for value in (configured if isinstance(configured, list) else [configured]) + [self.tokenizer.eos_token_id]:
            if isinstance(value, int) and value not in ids:
                ids.append(value)
        end_of_turn = self.tokenizer.convert_tokens_to_ids("<|im_end|>")
        if isinstance(end_of_turn, int) and end_of_turn != self.tokenizer.unk_token_id and end_of_turn not in ids:
            ids.append(end_of_turn)
        return ids

    def _weights_identity(self) -> list:
        """Name, size and modification time of every weight file of the model and adapter (cache key part)."""
        files = []
        for folder in filter(None, (self.model_path, self.adapter)):
            path = Path(folder)
            if path.is_dir():
                files += [[str(f.resolve()), f.stat().st_size, f.stat().st_mtime_ns] for f in sorted(path.iterdir())
                          if f.suffix in (".safetensors", ".bin", ".json", ".jinja")]
        return files or [self.model_path, self.adapter]

    def cache_key(self, messages: list[dict], tools: list[dict], agent_index: int) -> str:
        """Key of a request: the weights, the decoding settings, the conversation, the tools and, when sampling,
        the agent index (a greedy reply is the same for every agent)."""
        return request_key({"weights": self._weights_id, "temperature": self.temperature, "top_p": self.top_p,
                            "max_new_tokens": self.max_new_tokens, "seed": self.seed, "messages": messages,
                            "tools": tools, "sample": agent_index if self.temperature > 0 else None})

    def _call_seed(self, messages: list[dict], agent_index: int) -> int:
        """A seed that depends on the client's seed, the agent and the conversation (order of calls irrelevant)."""
        key = json.dumps([self.seed, agent_index, messages], sort_keys=True, default=str)
        return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16)

    def generate_text(self, messages: list[dict], tools: list[dict], agent_index: int = 0) -> tuple[str, Usage]:
        """The model's raw next assistant turn (special tokens removed) and its token usage; blocking."""
        import torch

        inputs = self.tokenizer.apply_chat_template(messages, tools=tools or None, add_generation_prompt=True,
                                                    return_dict=True, return_tensors="pt")
        inputs = {k: v.to(self.device) for k, v in inputs.items()}
        prompt_length = int(inputs["input_ids"].shape[1])
        options: dict[str, Any] = {"max_new_tokens": self.max_new_tokens, "eos_token_id": self._stop_ids,
                                   "pad_token_id": self.tokenizer.pad_token_id or self._stop_ids[0]}
        if self.temperature > 0:
            options.update(do_sample=True, temperature=self.temperature, top_p=self.top_p)
        else:
            options.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        with torch.inference_mode():
            if self.temperature > 0:
                with self._rng_lock:
                    torch.manual_seed(self._call_seed(messages, agent_index))
                    output = self.model.generate(**inputs, **options)
            else:
                output = self.model.generate(**inputs, **options)
        new_tokens = output[0, prompt_length:].tolist()
        while new_tokens and new_tokens[-1] in self._stop_ids:
            new_tokens.pop()
        completion = len(output[0]) - prompt_length
        text = self.tokenizer.decode(new_tokens, skip_special_tokens=True)
        return text, Usage(prompt_length, completion, prompt_length + completion)

    def _semaphore_for_loop(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._semaphore is None or self._loop is not loop:
            self._loop, self._semaphore = loop, asyncio.Semaphore(self.concurrency)
        return self._semaphore

    async def next_message(self, messages: Sequence[Message | dict], tools: list[dict], *, agent_index: int = 0,
                           tool_choice: str = "required") -> PolicyReply:
        """Generate the next assistant message; see :class:`~ark.llm.ChatPolicy`.

        ``tool_choice`` cannot be enforced on a local model; a turn without a tool call gets the loop's correction.
        """
        started = time.perf_counter()
        wire = to_openai(messages)  # what the model sees: no in-memory extras
        key = self.cache_key(wire, tools, agent_index)
        shared = self._shared_reply(key)
        if shared is None and self.temperature == 0 and key in self._pending:
            shared = await asyncio.shield(self._pending[key])  # another agent is generating this very reply
        if shared is None and self.cache is not None:
            entry = self.cache.get(key)
            if entry is not None:
                shared = (entry["message"], Usage(**entry["usage"]))
        if shared is not None:
            self.cache_hits += 1
            return PolicyReply(AssistantMessage.from_openai(shared[0]), shared[1], cached=True,
                               latency_s=time.perf_counter() - started)
        future = None
        if self.temperature == 0:
            future = asyncio.get_running_loop().create_future()
            self._pending[key] = future
        try:
            async with self._semaphore_for_loop():
                started = time.perf_counter()
                text, usage = await asyncio.to_thread(self.generate_text, wire, tools, agent_index)
                latency = time.perf_counter() - started
        except BaseException:
            if future is not None:
                future.set_result(None)  # waiting agents generate for themselves (and meet the same error)
            raise
        finally:
            self._pending.pop(key, None)
        self.calls += 1
        self.usage_total = self.usage_total + usage
        message = parse_tool_calls(text, id_prefix=f"call_{self.calls}", tool_names=offered_names(tools))
        if future is not None:
            self._remember(key, message, usage)
            future.set_result((message, usage))
        if self.cache is not None:
            self.cache.put(key, {"message": message, "usage": usage.to_dict(), "model": self.name, "text": text})
        return PolicyReply(AssistantMessage.from_openai(message), usage, cached=False, latency_s=latency)

    def _shared_reply(self, key: str) -> tuple[dict, Usage] | None:
        found = self._recent.get(key)
        if found is not None:
            self._recent.move_to_end(key)
        return found

    def _remember(self, key: str, message: dict, usage: Usage, keep: int = 256) -> None:
        self._recent[key] = (message, usage)
        while len(self._recent) > keep:
            self._recent.popitem(last=False)

    async def aclose(self) -> None:
        """Nothing to close (the weights stay loaded for the next run)."""

    async def __aenter__(self) -> LocalChatClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def make_chat_client(model_spec: str | None = None, settings: Any = None, *, adapter: str | Path | None = None,
                     device: str | None = None, concurrency: int | None = None) -> Any:
    """The chat client for ``model_spec``: ``hf:PATH`` gives a :class:`LocalChatClient` (temperature, max tokens and
    seed from ``settings`` when given, else greedy); any other name an ``OpenAIChatClient`` for that model under
    ``settings`` (default: :func:`ark.llm.resolve_settings`)."""
    from ark.llm import OpenAIChatClient, resolve_settings

    model_spec = model_spec or (settings.model if settings is not None else None)
    if model_spec and model_spec.startswith(LOCAL_PREFIX):
        path = model_spec[len(LOCAL_PREFIX):]
        if not path:
            raise LLMError(f"{model_spec!r}: give the model folder or id after '{LOCAL_PREFIX}', e.g. hf:./student")
        options: dict[str, Any] = {"adapter": adapter, "device": device, "concurrency": concurrency or 1}
        if settings is not None:
            options.update(temperature=settings.temperature, seed=settings.seed, cache_dir=settings.cache_dir)
            if settings.max_tokens is not None:
                options["max_new_tokens"] = settings.max_tokens
        client = LocalChatClient(path, **options)
        if settings is not None:  # the configured cap, raised to what the student's training data held
            client.max_tool_calls_per_turn = max(settings.max_tool_calls_per_turn,
                                                 client.trained_tool_calls_per_turn or 0)
        return client
    if adapter is not None:
        raise LLMError(f"an adapter needs a local model (--model hf:PATH), not {model_spec!r}")
    if settings is None:
        settings = resolve_settings(model=model_spec)
    elif model_spec and settings.model != model_spec:
        settings = settings.model_copy(update={"model": model_spec})
    if concurrency is not None:
        settings = settings.model_copy(update={"concurrency": concurrency})
    return OpenAIChatClient(settings)
