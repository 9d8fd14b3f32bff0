"""A loopback OpenAI-compatible ``/v1/embeddings`` server for tests.

A real HTTP server (stdlib ``ThreadingHTTPServer``, 127.0.0.1, ephemeral port) speaking the embeddings wire format,
so the real ``openai`` SDK (and :class:`ark.index.embedders.OpenAIEmbedder`) talks to it. Its vectors are a
deterministic function of the text: a bag of hashed words (:func:`keyword_vector`), so texts sharing words are
similar, which is enough for retrieval tests. It honours ``dimensions`` (truncation), records every request body
in ``server.requests``, reports ``usage`` (:func:`token_count` tokens a text; ``report_usage = False``: none),
answers unknown models with 404, and fails the next ``server.fail_next`` requests, or every
request once ``server.fail_after`` have been answered, with HTTP 500 (to exercise errors and resumption).

    with EmbeddingsServer() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="k")
        client.embeddings.create(model="test-embedder", input=["a text"])
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

DEFAULT_MODEL = "test-embedder"
DIMENSION = 64
_WORD = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset({"a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "of", "on",
                        "or", "that", "the", "to", "which", "what", "with"})


def keyword_vector(text: str, dimension: int = DIMENSION) -> np.ndarray:
    """Unit vector of the text's words (stopwords left out) hashed into ``dimension`` buckets, plus a small constant
    term so that no vector is zero."""
    vector = np.zeros(dimension, dtype=np.float64)
    vector[0] = 0.05
    for word in _WORD.findall(text.lower()):
        if word in _STOPWORDS:
            continue
        bucket = int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "little") % (dimension - 1) + 1
        vector[bucket] += 1.0
    return vector / np.linalg.norm(vector)


def token_count(text: str) -> int:
    """The tokens the server reports for a text: its words and one more (a start token)."""
    return len(_WORD.findall(text.lower())) + 1


class KeywordEmbedder:
    """The same vectors in-process, as an :class:`ark.index.embedders.Embedder` (for tests of code that only needs
    some embedder with controllable similarities)."""

    def __init__(self, dimension: int = DIMENSION) -> None:
        self.name = self.spec = "keyword-test"
        self.identity = f"keyword-test:{dimension}"
        self._dimension = dimension
        self.calls = 0

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts, batch_size: int = 64) -> np.ndarray:
        self.calls += 1
        if len(texts) == 0:
            return np.zeros((0, self._dimension), dtype=np.float32)
        return np.stack([keyword_vector(t, self._dimension) for t in texts]).astype(np.float32)


class EmbeddingsServer:
    def __init__(self, models: Iterable[str] = (DEFAULT_MODEL,), dimension: int = DIMENSION) -> None:
        self.models = list(models)
        self.dimension = dimension
        self.requests: list[dict] = []
        self.fail_next = 0
        self.fail_after: int | None = None
        self.report_usage = True  # False: replies carry no usage (as some local servers send)
        self._answered = 0
        self._embedded = 0
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def input_count(self) -> int:
        """Texts embedded so far (successful requests only)."""
        return self._embedded

    def __enter__(self) -> EmbeddingsServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def answer(self, body: dict) -> tuple[int, dict]:
        with self._lock:
            self.requests.append(body)
            if self.fail_next > 0 or (self.fail_after is not None and self._answered >= self.fail_after):
                self.fail_next = max(0, self.fail_next - 1)
                return 500, {"error": {"message": "scripted failure", "type": "server_error"}}
            self._answered += 1
        if body.get("model") not in self.models:
            return 404, {"error": {"message": f"model {body.get('model')!r} not found", "type": "invalid_request"}}
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        if any(not isinstance(t, str) or not t for t in texts):
            return 400, {"error": {"message": "input must be non-empty strings", "type": "invalid_request"}}
        size = int(body.get("dimensions") or self.dimension)
        data = [{"object": "embedding", "index": i, "embedding": keyword_vector(t, self.dimension)[:size].tolist()}
                for i, t in enumerate(texts)]
        data.reverse()  # servers need not answer in order: clients must sort by index
        with self._lock:
            self._embedded += len(texts)
        reply: dict[str, Any] = {"object": "list", "data": data, "model": body["model"]}
        if self.report_usage:
            tokens = sum(token_count(t) for t in texts)
            reply["usage"] = {"prompt_tokens": tokens, "total_tokens": tokens}
        return 200, reply


def _make_handler(server: EmbeddingsServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if self.path.rstrip("/") != "/v1/embeddings":
                status, payload = 404, {"error": {"message": f"no route {self.path}"}}
            else:
                status, payload = server.answer(body)
            raw = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

    return Handler
