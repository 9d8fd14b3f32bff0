"""Fixtures of the server tests: the small clinical graph's tools (offline question service), a run folder made by
the real ``ark eval``, and a real uvicorn server on loopback in a thread."""

from __future__ import annotations

import json
import queue
import re
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.graphs import ONE_HOP, save_clinical_graph

WRONG_QUESTION = ("Which genes cause vascular Ehlers-Danlos syndrome?", "NCBIGene:1281")


@pytest.fixture(scope="session")
def clinical_dir(tmp_path_factory) -> Path:
    return save_clinical_graph(tmp_path_factory.mktemp("serve-graph") / "clinical")


@pytest.fixture(scope="session")
def run_root(tmp_path_factory, clinical_dir) -> Path:
    """A folder holding one offline ``ark eval`` run of two questions (the second one answered wrongly)."""
    from ark.cli.main import app

    root = tmp_path_factory.mktemp("serve-runs")
    queries = root / "q.jsonl"
    rows = [{"id": "q1", "query": ONE_HOP[0], "answer_ids": [ONE_HOP[1]], "template": "one_hop"},
            {"id": "q2", "query": WRONG_QUESTION[0], "answer_ids": [WRONG_QUESTION[1]], "template": "one_hop"}]
    queries.write_text("".join(json.dumps(r) + "\n" for r in rows))
    charts = ["--charts"] if _has("matplotlib") else []
    result = CliRunner().invoke(app, ["eval", str(clinical_dir), "-m", "ark", "--offline", "-q", str(queries),
                                      "--run-dir", str(root / "runs" / "clinical-ark"), "--no-progress",
                                      "--set", "n_agents=2", *charts])
    assert result.exit_code == 0, result.output
    return root / "runs"


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


class LoopbackServer:
    """An ASGI app served by uvicorn on 127.0.0.1 (any free port) in a thread."""

    def __init__(self, app) -> None:
        import uvicorn

        from ark.serve.binding import bind_socket, url_of

        self.socket = bind_socket("127.0.0.1", 0)
        self.url = url_of(self.socket, "")
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True)

    def __enter__(self) -> LoopbackServer:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        assert self.server.started, "uvicorn did not start"
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.socket.close()


@pytest.fixture
def loopback() -> Iterator[type[LoopbackServer]]:
    yield LoopbackServer


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def announced_url(process: subprocess.Popen, pattern: str, timeout: float = 120.0) -> str:
    """The URL a server subprocess announces on stderr (the first group of ``pattern``), or a failure naming what it
    printed instead: a server announcing another address, or nothing, fails by the deadline instead of hanging.
    Its later stderr keeps being drained, so the server never blocks on a full pipe."""
    lines: queue.Queue[str | None] = queue.Queue()

    def drain() -> None:
        for line in process.stderr:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=drain, daemon=True).start()
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            break
        if line is None:
            raise AssertionError(f"the server exited ({process.wait()}) before announcing {pattern}: {seen}")
        seen.append(line.rstrip())
        found = re.search(pattern, line)
        if found:
            return found.group(1)
    raise AssertionError(f"no line matching {pattern} within {timeout:.0f} s; the server printed: {seen}")
