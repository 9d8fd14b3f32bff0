"""The fault-injection cases of the servers, the model client and terminal output (issue 26), as rows of
``benchmarks/fault_injection.py`` (which runs them with its other cases; they use its ``Bench``: a temporary
``ARK_HOME``, the small clinical graph, the scripted loopback model server).

Each case runs the real command in a subprocess: ``ark serve`` and ``ark mcp --transport http`` on loopback asked
from another origin and for a file outside a run; ``ark ask`` against an endpoint that drips its body, replies with
arguments nested 20,000 deep, 20,000 tool calls in one reply, and a ``usage`` of the wrong type; ``ark graph info``
on a graph whose names hold terminal escape sequences; graph imports of a too-deep JSONL line and an empty CSV.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.drip_server import DripServer  # noqa: E402
from tests.support.graphs import ONE_HOP  # noqa: E402
from tests.support.openai_server import raw_reply, tool_reply, turn_script  # noqa: E402

EVIL = "http://evil.example"
SPEND = {"question": ONE_HOP[0], "method": "ark", "options": {"n_agents": 16, "max_steps": 100}}
FBN1_INDEX = 25
ANSWERING = [tool_reply(("add_to_answer", {"answer_nodes": [{"node_index": FBN1_INDEX}]})), tool_reply(("finish", {}))]
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, str]:
    request = urllib.request.Request(url, body, headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8", "replace")


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8", "replace")


def _serve(b: Any, args: list[str], pattern: str) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(b.command(*args), stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                               env=b.env())
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        found = re.search(pattern, line)
        if found:
            return process, found.group(1)
        if not line and process.poll() is not None:
            break
    process.terminate()
    raise RuntimeError(f"ark {args[0]} did not announce its address")


def _error_line(text: str) -> str:
    try:
        return str(json.loads(text).get("error", text))[:140]
    except (ValueError, AttributeError):
        return text[:140]


def cross_origin(b: Any) -> None:
    runs = b.fresh("linked-run")
    (runs / "config.json").write_text("{}")
    (runs / "charts").mkdir()
    (runs / "charts" / "x.png").symlink_to("/etc/passwd")
    b.server.responder = turn_script(ANSWERING)
    before = b.server.request_count
    process, url = _serve(b, ["serve", b.graph, "--port", "0", "--runs", runs, "--model", "test-model",
                              "--base-url", b.server.base_url], r"listening on (http://127\.0\.0\.1:\d+)/")
    try:
        code, text = _post(f"{url}/api/tools/retrieve", json.dumps(SPEND).encode(),
                           {"Content-Type": "text/plain", "Origin": EVIL})
        calls = b.server.request_count - before
        b.record("26.1 text/plain POST from another origin: ark serve /api/tools/retrieve", (code, _error_line(text)),
                 code == 403 and calls == 0, f"{calls} model call(s)")
        code, text = _get(f"{url}/api/runs/{runs.name}/charts/x.png")
        b.record("26.1 charts/x.png -> /etc/passwd in a browsed run", (code, _error_line(text)),
                 code == 404 and "root:" not in text)
        code, text = _get(f"{url}/docs")
        outside = sorted(set(re.findall(r"https?://(?!127\.0\.0\.1)[\w.-]+", text)))
        b.record("26.1 GET /docs", (code, "API reference page"), code == 200 and not outside,
                 f"outside URLs: {', '.join(outside) or 'none'}")
    finally:
        process.terminate()
        process.wait(timeout=30)
    process, url = _serve(b, ["mcp", b.graph, "--transport", "http", "--port", "0", "--model", "test-model",
                              "--base-url", b.server.base_url], r"listening on (http://127\.0\.0\.1:\d+/mcp)")
    before = b.server.request_count
    try:
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "retrieve", "arguments": SPEND}}
        code, text = _post(url, json.dumps(call).encode(), {"Content-Type": "text/plain", "Origin": EVIL,
                                                             "Accept": "application/json, text/event-stream"})
        calls = b.server.request_count - before
        b.record("26.1 text/plain POST from another origin: ark mcp --transport http", (code, _error_line(text)),
                 code == 403 and calls == 0, f"{calls} model call(s)")
    finally:
        process.terminate()
        process.wait(timeout=30)


def drip_feed(b: Any) -> None:
    home = b.fresh("drip-home")
    (home / "config.toml").write_text("[llm]\ntimeout_s = 10\nmax_retries = 0\n")
    with DripServer() as server:
        started = time.perf_counter()
        done = b.run("ask", b.graph, ONE_HOP[0], "--model", "test-model", "--base-url", server.base_url,
                     "--set", "n_agents=1", ARK_HOME=str(home), OPENAI_API_KEY="k")
        seconds = time.perf_counter() - started
    b.record("26.2 endpoint drips a byte every 2 s (timeout_s=10, max_retries=0): ark ask", done,
             done.returncode != 0 and seconds < 12 + 5, f"failed after {seconds:.1f} s (command start included)")


def _model(b: Any) -> list[str]:
    return ["--model", "test-model", "--base-url", b.server.base_url, "--set", "n_agents=1"]


def model_output(b: Any) -> None:
    nested = '{"query": ' + "[" * 20_000 + "]" * 20_000 + "}"
    b.server.responder = turn_script([tool_reply(("search_in_graph", nested)), *ANSWERING])
    done = b.run("ask", b.graph, ONE_HOP[0], "--json", *_model(b))
    ok = done.returncode == 0 and json.loads(done.stdout)["ranked"][0]["node_id"] == ONE_HOP[1]
    b.record("26.2 tool arguments nested 20,000 deep: ark ask", done, ok,
             "observation; the agent went on" if ok else "the question failed")
    many = [("search_in_graph", {"query": "marfan"})] * 20_000
    b.server.responder = turn_script([tool_reply(*many), *ANSWERING])
    started = time.perf_counter()
    done = b.run("ask", b.graph, ONE_HOP[0], "--json", *_model(b))
    seconds = time.perf_counter() - started
    sent = len(b.server.requests[-2]["messages"]) if len(b.server.requests) >= 2 else -1
    b.record("26.2 one reply with 20,000 tool calls: ark ask", done, done.returncode == 0 and sent < 40,
             f"{seconds:.1f} s; next request carried {sent} messages")
    completion = {"id": "c", "object": "chat.completion", "created": 0, "model": "test-model",
                  "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                      "role": "assistant", "content": None, "tool_calls": [{
                          "id": "c1", "type": "function", "function": {"name": "finish", "arguments": "{}"}}]}}],
                  "usage": {"prompt_tokens": "many", "completion_tokens": 1, "total_tokens": 2}}
    b.server.responder = lambda body: raw_reply(json.dumps(completion))
    done = b.run("ask", b.graph, ONE_HOP[0], *_model(b))
    b.record("26.2 usage.prompt_tokens = \"many\": ark ask", done, done.returncode == 0,
             "the question answered" if done.returncode == 0 else "the question failed")


def terminal_and_files(b: Any) -> None:
    source = b.fresh("hostile-graph")
    nodes = [{"id": "D:1", "name": "Marfan \x1b]52;c;ZXZpbA==\x07 [bold]x[/]", "type": "disease\x1b[2J"},
             {"id": "G:1", "name": "FBN1 \x9b31m", "type": "gene"}]
    (source / "nodes.jsonl").write_text("".join(json.dumps(n) + "\n" for n in nodes))
    (source / "edges.jsonl").write_text(json.dumps({"from": "D:1", "to": "G:1", "type": "has\x1b[5m"}) + "\n")
    graph = b.root / "hostile"
    b.run("graph", "import", "parquet", source, "--out", graph)
    done = b.run("graph", "info", graph)
    raw = RAW_CONTROL.findall(done.stdout + done.stderr)
    b.record("26.4 OSC 52, screen clear and CSI in node names: ark graph info", done,
             done.returncode == 0 and not raw, f"{len(raw)} raw control character(s) printed")
    deep = b.fresh("deep-jsonl")
    (deep / "nodes.jsonl").write_text('{"id": "a", "name": "A", "type": "t", "properties": {"x": '
                                      + "[" * 20_000 + "]" * 20_000 + "}}\n")
    (deep / "edges.jsonl").write_text('{"from": "a", "to": "a", "type": "r"}\n')
    done = b.run("graph", "import", "parquet", deep, "--out", b.root / "deep-out")
    b.record("26.4 JSONL properties nested 20,000 deep: ark graph import", done,
             done.returncode == 2 and "nodes.jsonl, line 1" in done.stderr and len(done.stderr.splitlines()) <= 2)
    empty = b.fresh("empty-csv")
    (empty / "nodes.csv").write_text("")
    (empty / "edges.csv").write_text("from,to,type\n")
    done = b.run("graph", "import", "parquet", empty, "--out", b.root / "empty-out")
    b.record("26.4 empty nodes.csv: ark graph import", done,
             done.returncode == 2 and str(empty / "nodes.csv") in " ".join(done.stderr.split()))


CASES = [("cross-origin", cross_origin), ("drip feed", drip_feed), ("model output", model_output),
         ("terminal and files", terminal_and_files)]
