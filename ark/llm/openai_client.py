"""`OpenAIChatClient`: a `ChatPolicy` over any OpenAI-compatible chat-completions endpoint.

Works with OpenAI, vLLM, Ollama, llama.cpp server and anything else speaking the protocol with tool calling.
The `openai` SDK does the HTTP work and retries 408/409/429/5xx, timeouts and connection errors with
exponential backoff (``settings.max_retries`` times, honouring ``Retry-After``). A successful status whose body is
not a chat completion (a proxy's HTML page, a truncated body) is retried the same number of times by this client.
On top of it this client adds a response cache, a concurrency limit shared by every agent using the client, and
token accounting. Every failure is an :class:`~ark.llm.policy.LLMError` naming the endpoint and model.

Hard limits on what an endpoint can do to a run:

- ``settings.timeout_s`` bounds each whole HTTP request (connect, send, headers and the complete body), not just
  each read: an endpoint dripping a byte now and then cannot hold a request longer (:class:`DeadlineHttpClient`).
  A timeout's error gives the real time spent and the endpoint.
- A reply is cached only when its reader accepts it (:meth:`~ark.llm.policy.PolicyReply.accept`, after parsing),
  so a reply that breaks the reader is asked for again next run.
- A response body over :data:`MAX_RESPONSE_BYTES` is a read error (an endpoint streaming without end would fill the
  memory before any deadline); its error says the reply was over the cap, and a body cut mid-way says after how
  many bytes, not "could not connect" (:func:`_reply_body_problem`).
- ``usage`` fields that are not token counts are ignored with a warning naming the endpoint.
- ``max_tool_calls_per_turn`` is exposed for the tool loop (extra calls get an observation, not a run).

The concurrency limit is the client's own semaphore (``settings.concurrency`` requests at a time) unless a
:class:`ConcurrencyLimiter` is set as ``client.limiter``: then each request holds one of its slots for the client's
endpoint instead, so clients in several processes share one budget (``ark eval --ray`` does this).
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import time
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from types import ModuleType
from typing import Any, Protocol

import openai
from openai.types import CompletionUsage

from ark.errors import ArkError
from ark.llm.cache import ResponseCache, request_key
from ark.llm.messages import AssistantMessage, Message, to_openai
from ark.llm.negotiation import (
    AUTO,
    TOOL_CHOICES,
    body_text,
    is_validation_error,
    mark_refusal,
    refusal_hint,
    refuses_tool_choice,
)
from ark.llm.policy import LLMError, PolicyReply, Usage
from ark.llm.settings import LLMSettings

log = logging.getLogger(__name__)

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Local servers (vLLM, Ollama, llama.cpp) ignore the key, but the SDK insists on one.
PLACEHOLDER_API_KEY = "not-needed"
# Backoff before retrying a reply that is not a chat completion: this, doubled per attempt, at most 8 s.
MALFORMED_RETRY_BASE_S = 0.5
MAX_RESPONSE_BYTES = 32 * 2**20  # the largest response body read from the endpoint


class ConcurrencyLimiter(Protocol):
    """A concurrency budget shared beyond one client: ``slot(endpoint)`` is held while a request is in flight."""

    def slot(self, endpoint: str) -> AbstractAsyncContextManager[Any]: ...


def _httpx() -> ModuleType:
    """The httpx package the installed SDK is built on (``httpx``; ``httpx2`` in its later versions)."""
    for cls in openai.DefaultAsyncHttpxClient.__mro__:
        root = cls.__module__.split(".")[0]
        if root.startswith("httpx"):
            return importlib.import_module(root)
    raise ImportError("the openai SDK's HTTP client is not an httpx client")  # pragma: no cover


class DeadlineHttpClient(openai.DefaultAsyncHttpxClient):
    """The SDK's HTTP client with one deadline over each whole request. httpx's timeouts apply to each connect,
    write and read separately, so a server sending a byte every few seconds never trips them; here the request,
    its response headers and its complete body must arrive within ``deadline_s``, else httpx's ``ReadTimeout``
    (which the SDK retries like any timeout)."""

    def __init__(self, deadline_s: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.deadline_s = deadline_s

    async def send(self, request: Any, **kwargs: Any) -> Any:
        try:
            async with asyncio.timeout(self.deadline_s):
                response = await super().send(request, **{**kwargs, "stream": True})
                response.stream = _CappedStream(response.stream, MAX_RESPONSE_BYTES, request,
                                                _announced_length(response))
                await response.aread()  # the whole body, within the deadline and the size limit
                mark_refusal(response)  # a refused request is not retried as transient (ark.llm.negotiation)
                return response
        except TimeoutError as exc:
            raise _httpx().ReadTimeout(f"no complete response within {self.deadline_s:g} s", request=request) from exc


class ReplyTooLarge(_httpx().ReadError, ArkError):  # type: ignore[misc]  # the SDK's httpx, known at import
    """A response body past the size cap (httpx's ``ReadError``, so the SDK handles it as a failed read)."""

    def __init__(self, limit: int, request: Any, announced: int | None = None) -> None:
        said = f" (it announced {announced:,} bytes)" if announced is not None else ""
        super().__init__(f"the response is larger than the {limit:,}-byte cap{said}",  # type: ignore[call-arg]
                         request=request)  # httpx's ReadError takes the request (mypy sees ArkError's init)
        self.limit, self.announced = limit, announced


class ReplyCut(_httpx().ReadError, ArkError):  # type: ignore[misc]
    """A response body that ended before it was complete: the connection closed or broke mid-body."""

    def __init__(self, received: int, announced: int | None, request: Any, cause: Exception) -> None:
        of = f" of the {announced:,} announced" if announced is not None else ""
        super().__init__(  # type: ignore[call-arg]  # httpx's ReadError takes the request
            f"the response was cut off after {received:,} bytes{of} ({type(cause).__name__}: {cause})",
            request=request)
        self.received, self.announced = received, announced


def _announced_length(response: Any) -> int | None:
    """The body length a response's ``Content-Length`` announces (None when absent or not a number)."""
    text = response.headers.get("content-length", "")
    return int(text) if text.isdigit() else None


class _CappedStream(_httpx().AsyncByteStream):  # type: ignore[misc]  # the SDK's httpx, known at import
    """A response body that stops with :class:`ReplyTooLarge` past ``limit`` bytes (an endpoint streaming without
    end would fill the memory of the process, and of every agent sharing it, before any deadline), and with
    :class:`ReplyCut` when it breaks off mid-body (both are httpx ``ReadError``s, which the SDK retries)."""

    def __init__(self, inner: Any, limit: int, request: Any, announced: int | None = None) -> None:
        self.inner, self.limit, self.request, self.announced = inner, limit, request, announced

    async def __aiter__(self) -> Any:
        if self.announced is not None and self.announced > self.limit:
            raise ReplyTooLarge(self.limit, self.request, self.announced)
        received = 0
        try:
            async for chunk in self.inner:
                received += len(chunk)
                if received > self.limit:
                    raise ReplyTooLarge(self.limit, self.request)
                yield chunk
        except (ReplyTooLarge, _httpx().TimeoutException):
            raise
        except _httpx().TransportError as exc:  # closed early, reset, an incomplete chunk: the body was cut
            raise ReplyCut(received, self.announced, self.request, exc) from exc

    async def aclose(self) -> None:
        await self.inner.aclose()


class OpenAIChatClient:
    """Chat policy backed by an OpenAI-compatible endpoint.

    Counters: ``calls`` (replies fetched from the endpoint), ``cache_hits`` (replies served from the cache)
    and ``usage_total`` (tokens of the fetched replies; cache hits cost nothing, though their
    `PolicyReply.usage` still reports what the original call used).
    """

    def __init__(self, settings: LLMSettings) -> None:
        if not settings.model:
            raise LLMError("no model configured: pass --model, set ARK_MODEL, or add `model = ...` "
                           "under [llm] in $ARK_HOME/config.toml")
        self.settings = settings
        self.base_url = (settings.base_url or OPENAI_DEFAULT_BASE_URL).rstrip("/")
        self.name = f"openai:{settings.model}"
        self.cache = ResponseCache(settings.cache_dir) if settings.cache_dir is not None else None
        self.usage_total = Usage()
        self.calls = 0
        self.cache_hits = 0
        # The SDK client and the semaphore belong to one event loop; they are (re)made for the running loop so
        # the client also works across several `asyncio.run` calls.
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sdk: openai.AsyncOpenAI | None = None
        self._semaphore: asyncio.Semaphore | None = None
        self.limiter: ConcurrencyLimiter | None = None  # None: the semaphore above (see the module doc)
        self.max_tool_calls_per_turn = settings.max_tool_calls_per_turn  # read by the tool loop

    def __repr__(self) -> str:
        return f"OpenAIChatClient(base_url={self.base_url!r}, model={self.settings.model!r})"

    def _resources(self) -> tuple[openai.AsyncOpenAI, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        if self._sdk is None or self._semaphore is None or self._loop is not loop:
            self._loop = loop
            self._sdk = openai.AsyncOpenAI(
                base_url=self.base_url,
                api_key=self.settings.api_key or PLACEHOLDER_API_KEY,
                timeout=self.settings.timeout_s,
                max_retries=self.settings.max_retries,
                http_client=DeadlineHttpClient(self.settings.timeout_s),
            )
            self._semaphore = asyncio.Semaphore(self.settings.concurrency)
        return self._sdk, self._semaphore

    def build_request(self, messages: Sequence[Message | dict], tools: list[dict], *, agent_index: int = 0,
                      tool_choice: str = "required") -> dict[str, Any]:
        """The chat-completions request body sent for these arguments."""
        s = self.settings
        request: dict[str, Any] = {"model": s.model, "messages": to_openai(messages),
                                   "temperature": s.temperature}
        if tools:  # endpoints reject tool_choice without tools
            request["tools"] = tools
            request["tool_choice"] = tool_choice
        if s.max_tokens is not None:
            request["max_tokens"] = s.max_tokens
        if s.seed is not None:
            request["seed"] = s.seed + agent_index
        return request

    def cache_key(self, request: dict[str, Any], agent_index: int) -> str:
        """Key of a request: the endpoint, the full body and the sample index (so n agents get n samples)."""
        return request_key({"base_url": self.base_url, "request": request, "sample": agent_index})

    async def next_message(self, messages: Sequence[Message | dict], tools: list[dict], *, agent_index: int = 0,
                           tool_choice: str = "required") -> PolicyReply:
        """Ask the endpoint (or the cache) for the next assistant message; see `ChatPolicy`. An endpoint refusing
        ``tool_choice: required`` is asked once more with ``auto``, and then always (`ark.llm.negotiation`)."""
        tool_choice = TOOL_CHOICES.choice(self.base_url, tool_choice)
        request = self.build_request(messages, tools, agent_index=agent_index, tool_choice=tool_choice)
        try:
            return await self._reply(request, agent_index)
        except LLMError as exc:
            fallback = self._tool_choice_fallback(request, exc)
            if fallback is None:
                raise
            return await self._reply(fallback, agent_index)

    def _tool_choice_fallback(self, request: dict[str, Any], exc: LLMError) -> dict[str, Any] | None:
        """The request again with ``tool_choice: auto`` when ``exc`` is the endpoint refusing ``required``."""
        cause = exc.__cause__
        if not isinstance(cause, openai.APIStatusError):
            return None
        if not refuses_tool_choice(request, cause.status_code, body_text(cause.response)):
            return None
        TOOL_CHOICES.refused(self.base_url, f"HTTP {cause.status_code}: {_error_detail(cause)}")
        return {**request, "tool_choice": AUTO}

    async def _reply(self, request: dict[str, Any], agent_index: int) -> PolicyReply:
        """The reply to ``request`` from the cache or the endpoint."""
        key = self.cache_key(request, agent_index)
        if self.cache is not None:
            started = time.perf_counter()
            entry = self.cache.get(key)
            if entry is not None:
                self.cache_hits += 1
                return PolicyReply(AssistantMessage.from_openai(entry["message"]), Usage(**entry["usage"]), cached=True,
                                   latency_s=time.perf_counter() - started)

        response, message, latency = await self._fetch(request)
        usage = self._usage(response.usage)
        self.calls += 1
        self.usage_total = self.usage_total + usage
        log.debug("%s replied in %.2fs (%d tokens)", self.name, latency, usage.total_tokens)
        reply = PolicyReply(AssistantMessage.from_openai(message), usage, cached=False, latency_s=latency)
        if self.cache is not None:  # stored once the reader has parsed the reply (see the module doc)
            cache, entry = self.cache, {"message": message, "usage": usage.to_dict(), "model": str(response.model)}
            reply.on_accept = lambda: cache.put(key, entry)
        return reply

    def _usage(self, reported: Any) -> Usage:
        """The token counts of a completion's ``usage``; any that is not a count makes the whole usage ignored, with a
        warning naming the endpoint (the reply itself is fine)."""
        if reported is None:
            return Usage()
        fields = ("prompt_tokens", "completion_tokens", "total_tokens")
        found = ({name: getattr(reported, name, None) or 0 for name in fields}
                 if isinstance(reported, CompletionUsage) else {"usage": reported})
        counts = {}
        for name, value in found.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                log.warning("%s (model %r) sent a usage that is not token counts (%s = %.80r); its usage is ignored",
                            self.base_url, self.settings.model, name, value)
                return Usage()
            counts[name] = value
        return Usage(**counts)

    async def _fetch(self, request: dict[str, Any]) -> tuple[Any, dict, float]:
        """Send ``request``: the parsed completion, its first message and the latency. A body that is not a chat
        completion is retried ``max_retries`` times (the SDK retries only failed statuses), then an `LLMError`."""
        sdk, semaphore = self._resources()
        retries = self.settings.max_retries
        first_started = time.perf_counter()
        for attempt in range(retries + 1):
            async with (semaphore if self.limiter is None else self.limiter.slot(self.base_url)):
                started = time.perf_counter()
                try:
                    raw = await sdk.chat.completions.with_raw_response.create(**request)
                except openai.OpenAIError as exc:
                    raise self._error(exc, time.perf_counter() - first_started, request) from exc
                latency = time.perf_counter() - started
            try:
                response = raw.parse()
                return response, self._message_dict(response), latency
            except (ValueError, AttributeError, TypeError, IndexError, KeyError) as exc:  # not a completion
                problem = _body_problem(raw, exc)
            if attempt < retries:
                log.info("%s: %s; retrying", self.base_url, problem)
                await asyncio.sleep(min(MALFORMED_RETRY_BASE_S * 2 ** attempt, 8.0))
        where = f"{self.base_url} (model {self.settings.model!r})"
        raise LLMError(f"chat request to {where} failed: {problem} (tried {retries + 1} times)")

    def _message_dict(self, response: Any) -> dict:
        """The first choice's message as a plain OpenAI-format dict, tool-call arguments left raw."""
        if isinstance(response, str | bytes):  # the SDK returns the body itself when it is not JSON-typed
            raise ValueError("not a JSON object")
        if not response.choices:
            raise LLMError(f"{self.base_url} returned no choices for model {self.settings.model!r}")
        choice = response.choices[0].message
        message: dict[str, Any] = {"role": "assistant", "content": choice.content}
        calls = []
        for i, call in enumerate(choice.tool_calls or []):
            if call.type != "function":
                calls.append(call.model_dump(exclude_none=True))
                continue
            calls.append({
                "id": call.id or f"call_{self.calls}_{i}",  # some local servers omit ids; the loop needs them
                "type": "function",
                "function": {"name": call.function.name, "arguments": call.function.arguments or ""},
            })
        if calls:
            message["tool_calls"] = calls
        return message

    def _error(self, exc: openai.OpenAIError, elapsed_s: float, request: dict[str, Any] | None = None) -> LLMError:
        """A clear `LLMError` naming the endpoint and model (never the API key)."""
        where = f"{self.base_url} (model {self.settings.model!r})"
        retries = self.settings.max_retries
        if isinstance(exc, openai.APITimeoutError):
            return LLMError(f"chat request to {where} timed out: no complete reply within "
                            f"{self.settings.timeout_s:g} s per try; gave up after {elapsed_s:.1f} s "
                            f"(tried {retries + 1} times){timeout_advice(request or {}, self.settings.timeout_s)}")
        if isinstance(exc, openai.APIConnectionError):
            body_problem = _reply_body_problem(exc, where)
            if body_problem is not None:
                return LLMError(f"{body_problem} (tried {retries + 1} times)")
            return LLMError(f"could not connect to {where} (tried {retries + 1} times): {exc}")
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            detail = _error_detail(exc)
            refused = _refusal(exc)
            if refused:
                hint = refused
            elif status == 401:
                hint = "the API key was rejected; set OPENAI_API_KEY (or api_key under [llm] in $ARK_HOME/config.toml)"
            elif status == 403:
                hint = "the API key lacks permission for this model"
            elif status == 404:
                hint = f"model or route not found; check --model / ARK_MODEL and GET {self.base_url}/models"
            elif status == 429 or status >= 500:
                hint = f"still failing after {retries} retries"
            else:
                hint = "the endpoint rejected the request"
            return LLMError(f"chat request to {where} failed with HTTP {status}: {hint}: {detail}")
        return LLMError(f"chat request to {where} failed: {exc}")

    async def aclose(self) -> None:
        """Close the HTTP connections (the cache needs no closing)."""
        sdk, self._sdk = self._sdk, None
        if sdk is not None and self._loop is asyncio.get_running_loop():
            await sdk.close()

    async def __aenter__(self) -> OpenAIChatClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _reply_body_problem(exc: BaseException, where: str) -> str | None:
    """What went wrong with a reply's body when the SDK reports a "connection error" whose cause is a body over the
    size cap or cut mid-body (None for a real connection failure: the endpoint was never reached)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ReplyTooLarge):
            announced = f" (it announced {seen.announced:,} bytes)" if seen.announced is not None else ""
            return (f"the reply from {where} was larger than the {seen.limit:,}-byte cap{announced} (a fixed limit, "
                    "MAX_RESPONSE_BYTES of ark.llm.openai_client: a chat reply never is this large)")
        if isinstance(seen, ReplyCut):
            of = f" of the {seen.announced:,} it announced" if seen.announced is not None else ""
            return (f"the reply from {where} was cut off after {seen.received:,} bytes{of}: the endpoint (or a "
                    "proxy) closed the connection mid-body")
        seen = seen.__cause__ or seen.__context__
    return None


def _body_problem(raw: Any, exc: Exception) -> str:
    """What is wrong with a successful response that is not a chat completion, with the start of its body."""
    try:
        body = raw.text
    except Exception:  # noqa: BLE001 - only used to describe the problem
        body = ""
    shown = " ".join(str(body).split())
    shown = shown[:120] + ("..." if len(shown) > 120 else "")
    kind = "is not JSON" if isinstance(exc, ValueError) else "is not a chat completion"
    return (f"HTTP {raw.status_code} response {kind} ({type(exc).__name__}: {exc}); "
            f"body starts: {shown!r}" if shown else f"HTTP {raw.status_code} response with an empty body")


def _refusal(exc: openai.APIStatusError) -> str:
    """What to change when a 5xx refused the request as invalid ("" for any other failure; a 4xx is a refusal
    anyway and keeps its own hint)."""
    if exc.status_code < 500 or not is_validation_error(exc.status_code, body_text(exc.response)):
        return ""
    return refusal_hint(_error_detail(exc))


def timeout_advice(request: dict[str, Any], timeout_s: float) -> str:
    """What a timed-out request asked of the server and which settings to change: a first turn's whole prompt (the
    system prompt and tool schemas) is read before a slow server writes anything, and every retry resends it."""
    messages = request.get("messages") or []
    chars = sum(len(json.dumps(m.get("content") or "", ensure_ascii=False)) for m in messages)
    chars += len(json.dumps(request.get("tools") or [], ensure_ascii=False))
    turn = "the first turn" if not any(m.get("role") == "assistant" for m in messages) else "a later turn"
    return (f"; {turn}'s prompt was {chars:,} characters with the tool schemas (about {chars // 4:,} tokens at 4 "
            f"characters a token): a slow server reads all of it before replying, so raise --timeout (timeout_s under "
            f"[llm] in $ARK_HOME/config.toml, now {timeout_s:g} s), and lower --max-retries, as every retry sends it "
            "again")


def _error_detail(exc: openai.APIStatusError) -> str:
    """The endpoint's own error message when the body has one, else the SDK's."""
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        if isinstance(error, str):
            return error
    return exc.message
