"""A scripted OpenAI-compatible chat-completions server on loopback, for tests.

`ScriptedOpenAIServer` is a real HTTP server (stdlib `ThreadingHTTPServer` in a background thread) bound
to 127.0.0.1 on an ephemeral port. It answers ``POST /v1/chat/completions`` and ``GET /v1/models`` in the
real wire format, so the real `openai` SDK (and so `ark.llm.OpenAIChatClient`, or `ark ask --base-url`) can
talk to it.

What it replies is a script of steps, built with three helpers:

- ``tool_reply(("search_in_graph", {"query": "seizure"}), ("finish", "{bad json"))``: an assistant message
  with tool calls; arguments are a dict (sent as JSON) or a raw string (sent verbatim, e.g. malformed JSON);
  ``finish_reason`` is ``"tool_calls"``.
- ``text_reply("I cannot help")``: a plain assistant message, ``finish_reason`` ``"stop"``.
- ``http_error(429)``: an HTTP error with an OpenAI-style error body; by default it asks the client to retry
  after 1 ms (``retry-after-ms: 1``, ``Retry-After: 0``) so SDK retries stay fast.
- ``raw_reply("<html>bad gateway</html>")``: a response with exactly this body (default HTTP 200 and
  ``Content-Type: application/json``), for endpoints that answer with something that is not a completion;
  ``cut_after=N`` announces the whole body's length but sends only its first N bytes, then closes the connection
  (a body cut mid-way).

Each step may carry ``delay_s`` (the server sleeps before answering) and explicit token usage.

Where a request's step comes from, first match wins:

1. ``server.responder``: a callable ``(request_body: dict) -> Step`` you set, for full control
   (``turn_script(steps)`` builds one that answers by the number of assistant messages already in the history,
   so any number of agents on the same question each walk the same sequence).
2. ``server.add_conversation(marker, *steps)``: a queue of steps for every request whose messages (system or
   user) contain ``marker``; use one marker per concurrent agent to give each agent its own sequence.
3. ``server.enqueue(*steps)``: the shared queue, consumed in arrival order.

With nothing left to play the server answers HTTP 400 "script exhausted" (not retried by the SDK), so a test
that under-scripts fails fast with a clear message.

It records what it saw: ``server.requests`` (JSON bodies of chat requests, in arrival order),
``server.headers`` (their headers, lower-cased names), ``server.request_count`` and ``server.max_in_flight``;
``server.open_request_ports()`` gives the client ports of the requests it is working on now.
Set ``server.api_key`` to make it answer 401 to any other bearer token.

Example::

    with ScriptedOpenAIServer() as server:            # or use the ``openai_server`` pytest fixture
        server.enqueue(http_error(429), tool_reply(("finish", {})))
        client = openai.OpenAI(base_url=server.base_url, api_key="k")
        messages = [{"role": "user", "content": "hi"}]
        reply = client.chat.completions.create(model="test-model", messages=messages)
        assert server.request_count == 2 and reply.choices[0].finish_reason == "tool_calls"
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_MODEL = "test-model"


@dataclass
class Reply:
    """An assistant message to send back (tool calls and/or content)."""

    tool_calls: list[tuple[str, dict | str]] = field(default_factory=list)
    content: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    delay_s: float = 0.0


@dataclass
class HttpError:
    """An HTTP error response with an OpenAI-style ``{"error": {...}}`` body."""

    status: int
    message: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


@dataclass
class RawReply:
    """A response whose body is sent verbatim (e.g. a proxy's HTML page served with status 200)."""

    body: str
    status: int = 200
    content_type: str = "application/json"
    delay_s: float = 0.0
    cut_after: int | None = None  # send only this many bytes of the body, then close the connection


Step = Reply | HttpError | RawReply


def tool_reply(*calls: tuple[str, dict | str], content: str | None = None, prompt_tokens: int | None = None,
               completion_tokens: int | None = None, delay_s: float = 0.0) -> Reply:
    """A reply calling the given tools, each ``(name, arguments)`` with arguments a dict or a raw string."""
    return Reply(list(calls), content, prompt_tokens, completion_tokens, delay_s)


def text_reply(content: str, *, prompt_tokens: int | None = None, completion_tokens: int | None = None,
               delay_s: float = 0.0) -> Reply:
    """A reply with plain content and no tool calls."""
    return Reply([], content, prompt_tokens, completion_tokens, delay_s)


def http_error(status: int, message: str = "", *, retry_after_ms: int | None = 1,
               delay_s: float = 0.0) -> HttpError:
    """An HTTP error; ``retry_after_ms`` (None: no header) tells the SDK how long to wait before retrying."""
    headers = {} if retry_after_ms is None else {"retry-after-ms": str(retry_after_ms), "Retry-After": "0"}
    return HttpError(status, message or f"scripted HTTP {status}", headers, delay_s)


def raw_reply(body: str, *, status: int = 200, content_type: str = "application/json",
              delay_s: float = 0.0, cut_after: int | None = None) -> RawReply:
    """A response with ``body`` sent as it is (not JSON unless ``body`` is); ``cut_after``: see the module doc."""
    return RawReply(body, status, content_type, delay_s, cut_after)


def turn_script(steps: Iterable[Step]) -> Callable[[dict], Step]:
    """A responder answering with ``steps[k]`` where k counts assistant messages already in the request."""
    sequence = list(steps)

    def respond(body: dict) -> Step:
        turn = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        if turn >= len(sequence):
            return HttpError(400, f"turn script exhausted at turn {turn} (has {len(sequence)} steps)")
        return sequence[turn]

    return respond


def _message_text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):  # content parts
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return content or ""


class ScriptedOpenAIServer:
    """A loopback OpenAI-compatible server playing a script; see the module docstring."""

    def __init__(self, models: Iterable[str] = (DEFAULT_MODEL,)) -> None:
        self.models = list(models)
        self.responder: Callable[[dict], Step] | None = None
        self.api_key: str | None = None
        self.requests: list[dict] = []
        self.headers: list[dict[str, str]] = []
        self.max_in_flight = 0
        self._queue: deque[Step] = deque()
        self._conversations: dict[str, deque[Step]] = {}
        self._in_flight = 0
        self._open_ports: list[int] = []  # the client port of each request being worked on
        self._ids = 0
        self._lock = threading.Lock()
        self._httpd = _QuietHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # -- scripting -------------------------------------------------------------------------------------------
    def enqueue(self, *steps: Step) -> None:
        """Append steps to the shared queue (played in request arrival order)."""
        with self._lock:
            self._queue.extend(steps)

    def add_conversation(self, marker: str, *steps: Step) -> None:
        """Queue steps for requests whose system/user messages contain ``marker``."""
        with self._lock:
            self._conversations.setdefault(marker, deque()).extend(steps)

    @property
    def request_count(self) -> int:
        """Number of chat-completion requests received (retries included)."""
        with self._lock:
            return len(self.requests)

    @property
    def port(self) -> int:
        """The loopback port it listens on."""
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """The OpenAI base URL, ending in ``/v1``."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    # -- lifecycle -------------------------------------------------------------------------------------------
    def start(self) -> ScriptedOpenAIServer:
        # A short poll interval keeps shutdown (and so every test's teardown) quick.
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                        name="openai-test-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- request handling (server threads) ------------------------------------------------------------------
    def _next_step(self, body: dict) -> Step:
        if self.responder is not None:
            return self.responder(body)
        texts = [_message_text(m) for m in body.get("messages", []) if m.get("role") in ("system", "user")]
        with self._lock:
            for marker, steps in self._conversations.items():
                if any(marker in text for text in texts):
                    if steps:
                        return steps.popleft()
                    return HttpError(400, f"script exhausted for conversation {marker!r}")
            if self._queue:
                return self._queue.popleft()
        return HttpError(400, f"script exhausted at request #{self.request_count}")

    def open_request_ports(self) -> set[int]:
        """The client-side ports of the chat requests in flight now (a client process that died keeps its
        requests here until their replies are written)."""
        with self._lock:
            return set(self._open_ports)

    def _enter(self, body: dict, headers: dict[str, str], port: int) -> None:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            self._in_flight += 1
            self._open_ports.append(port)
            self.max_in_flight = max(self.max_in_flight, self._in_flight)

    def _leave(self, port: int) -> None:
        with self._lock:
            self._in_flight -= 1
            self._open_ports.remove(port)

    def _completion(self, body: dict, reply: Reply) -> dict:
        with self._lock:
            self._ids += 1
            n = self._ids
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = [
                {"id": f"call_{n}_{i}", "type": "function",
                 "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}
                for i, (name, args) in enumerate(reply.tool_calls)
            ]
        # Deterministic stand-in token counts (about four characters a token) unless the step gives them.
        prompt = reply.prompt_tokens
        if prompt is None:
            prompt = max(1, len(json.dumps(body.get("messages", []))) // 4)
        completion = reply.completion_tokens
        if completion is None:
            completion = max(1, len(json.dumps(message)) // 4)
        return {
            "id": f"chatcmpl-test{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", DEFAULT_MODEL),
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": "tool_calls" if reply.tool_calls else "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion},
        }


class _QuietHTTPServer(ThreadingHTTPServer):
    """Clients that hang up (a cancelled agent, a killed process) are normal here, not errors to print."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


_ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 404: "invalid_request_error",
                429: "rate_limit_exceeded"}


def _make_handler(server: ScriptedOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

        def _send_json(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
            self._send_body(status, json.dumps(payload).encode(), "application/json", headers)

        def _send_body(self, status: int, data: bytes, content_type: str,
                       headers: dict[str, str] | None = None, cut_after: int | None = None) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data if cut_after is None else data[:cut_after])
                if cut_after is not None:  # hang up mid-body
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (e.g. its timeout fired)
                pass

        def _send_error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
            error = {"message": message, "type": _ERROR_TYPES.get(status, "server_error"), "code": None,
                     "param": None}
            self._send_json(status, {"error": error}, headers)

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/v1/models":
                data = [{"id": m, "object": "model", "created": 0, "owned_by": "ark-tests"}
                        for m in server.models]
                self._send_json(200, {"object": "list", "data": data})
            else:
                self._send_error(404, f"no route GET {self.path}")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send_error(404, f"no route POST {self.path}")
                return
            try:
                body = json.loads(raw)
            except json.JSONDecodeError as exc:
                self._send_error(400, f"request body is not JSON: {exc}")
                return
            headers = {k.lower(): v for k, v in self.headers.items()}
            port = self.client_address[1]
            server._enter(body, headers, port)
            try:
                if server.api_key is not None and headers.get("authorization") != f"Bearer {server.api_key}":
                    self._send_error(401, "Incorrect API key provided.")
                    return
                step = server._next_step(body)
                if step.delay_s:
                    time.sleep(step.delay_s)
                if isinstance(step, HttpError):
                    self._send_error(step.status, step.message, step.headers)
                elif isinstance(step, RawReply):
                    self._send_body(step.status, step.body.encode(), step.content_type, cut_after=step.cut_after)
                else:
                    self._send_json(200, server._completion(body, step))
            finally:
                server._leave(port)

    return Handler
