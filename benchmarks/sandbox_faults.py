"""The code sandbox's rows of ``benchmarks/fault_injection.py``: model-written code (from the scripted server)
forging the worker's protocol, a runaway query, an engine crash under ``ark ask`` and ``ark serve``, an ordinary
user's secrets, adversarial Cypher, no bubblewrap and a sandbox that cannot start. Each runs the real command."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from tests.graphdb.test_guard import ADVERSARIAL
from tests.sandbox.test_model_attacks import FORGE_CALLBACK, FORGE_RESULT, READ_FILE, RUNAWAY, SEGFAULT
from tests.support.openai_server import text_reply, tool_reply, turn_script

QUESTION = "How many genes are associated with Loeys-Dietz syndrome?"
SANDBOX = "8 sandbox:"


def _script(*codes: str) -> Any:
    return turn_script([*(tool_reply(("code_interpreter", {"code": c})) for c in codes), text_reply("\\answer{2}")])


def _observations(b: Any) -> list[str]:
    return [m["content"] for m in b.server.requests[-1]["messages"] if m["role"] == "tool"]


def _ask(b: Any, *extra: str, **env: str) -> subprocess.CompletedProcess:
    return b.run("ask", b.graph, QUESTION, "--method", "graphscout", *extra, **env)


def _model(b: Any) -> list[str]:
    return ["--model", "test-model", "--base-url", b.server.base_url]


def _rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as status:
            return int(next(line for line in status if line.startswith("VmRSS:")).split()[1]) / 1024
    except (OSError, StopIteration):
        return 0.0


def protocol_forgery(b: Any) -> None:
    b.server.responder = _script(FORGE_CALLBACK.format(query=READ_FILE))
    done = _ask(b, *_model(b), OPENAI_API_KEY="k")
    seen = _observations(b)[0]
    b.record(f"{SANDBOX} Worker switched to callback via gc, READ_CSV: ark ask", done,
             done.returncode == 0 and seen.startswith("[error: protocol]"), seen.splitlines()[0][:70])
    b.server.responder = _script(FORGE_RESULT)
    done = _ask(b, *_model(b), OPENAI_API_KEY="k")
    seen = _observations(b)[0]
    b.record(f"{SANDBOX} forged result frame (elapsed_s 'x'): ark ask", done,
             done.returncode == 0 and "[error: protocol]" in seen, seen.splitlines()[0][:70])


def runaway_query(b: Any) -> None:
    b.server.responder = _script(f"print(cypher({RUNAWAY!r}))", FORGE_CALLBACK.format(query=RUNAWAY))
    first = b.server.request_count + 1
    process = subprocess.Popen(b.command("ask", b.graph, QUESTION, "--method", "graphscout", *_model(b)),
                               env=b.env(OPENAI_API_KEY="k"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    baseline, peak = 0.0, 0.0
    while process.poll() is None:  # from the model's first reply (graph, engine and client loaded) to the end
        if b.server.request_count >= first:
            rss = _rss_mb(process.pid)
            baseline, peak = baseline or rss, max(peak, rss)
        time.sleep(0.02)
    _, stderr = process.communicate()
    local, forged = _observations(b)
    b.record(f"{SANDBOX} UNWIND range(1, 300000000), local and forged: ark ask", (process.returncode, stderr),
             process.returncode == 0 and peak - baseline < 200 and "[error: protocol]" in forged,
             f"parent RSS {baseline:.0f} MB -> at most {peak:.0f} MB while the queries ran")


def engine_crash(b: Any) -> None:
    b.server.responder = _script(SEGFAULT, "print(1)")
    done = _ask(b, *_model(b), OPENAI_API_KEY="k")
    crashed, after = _observations(b)
    b.record(f"{SANDBOX} engine segfault (READ_CSV_SERIAL on a file): ark ask", done,
             done.returncode == 0 and "SIGSEGV" in crashed and after.endswith("1"), crashed.splitlines()[0][:70])
    b.server.responder = _script(SEGFAULT, FORGE_CALLBACK.format(query=READ_FILE))
    process = subprocess.Popen(b.command("serve", b.graph, "--port", "0", *_model(b)), env=b.env(OPENAI_API_KEY="k"),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        url = _announced(process)
        body = json.dumps({"question": QUESTION, "method": "graphscout"}).encode()
        request = urllib.request.Request(url + "/api/ask", body, {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=120) as response:
            answer = json.loads(response.read())
        with urllib.request.urlopen(url + "/api/graph", timeout=30) as response:
            alive = response.status == 200 and process.poll() is None
        b.record(f"{SANDBOX} engine segfault + forged READ_CSV: ark serve", (0, "(serve kept running)"),
                 alive and answer.get("answer", {}).get("text") == "2", "then GET /api/graph answered 200")
    finally:
        process.terminate()
        process.wait(timeout=30)


def _announced(process: subprocess.Popen, timeout: float = 120) -> str:
    found: list[str] = []

    def read() -> None:
        for line in process.stderr:
            match = re.search(r"listening on (http://127\.0\.0\.1:\d+)", line)
            if match and not found:
                found.append(match.group(1))

    threading.Thread(target=read, daemon=True).start()
    deadline = time.time() + timeout
    while not found and time.time() < deadline and process.poll() is None:
        time.sleep(0.05)
    if not found:
        raise RuntimeError("ark serve did not announce its address")
    return found[0]


def secrets_and_cypher(b: Any) -> None:
    repo = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                           "tests/sandbox/test_non_root.py"], cwd=repo, capture_output=True, text=True, timeout=600)
    last = (done.stdout.strip().splitlines() or ["(no output)"])[-1]
    b.record(f"{SANDBOX} ordinary user's canaries (.npmrc, .env, llm-cache, ...)", (done.returncode, last[:80]),
             done.returncode == 0, "no canary in code output or any model request (pytest)")
    from ark.graphdb import CypherError, check_read_only

    refused = 0
    for query in ADVERSARIAL:
        try:
            check_read_only(query)
        except CypherError:
            refused += 1
    b.record(f"{SANDBOX} adversarial Cypher (backticks, comments, READ_*, ATTACH, ...)",
             (0, f"{refused} of {len(ADVERSARIAL)} refused"), refused == len(ADVERSARIAL), "check_read_only")


def no_sandbox(b: Any) -> None:
    folder = b.fresh("no-bwrap") / "bin"
    folder.mkdir()
    for program in ("sh", "env", "true"):
        (folder / program).symlink_to(f"/bin/{program}")
    done = _ask(b, "--offline", PATH=str(folder))
    b.record(f"{SANDBOX} no bubblewrap on PATH: ark ask", done,
             done.returncode == 1 and "apt-get install bubblewrap" in " ".join(done.stderr.split()), _error(done))
    runner = ("import sys, ark.sandbox.session as s; s.worker_command = lambda: ['/nonexistent/python3']; "
              "from ark.cli.main import main; sys.argv = ['ark'] + sys.argv[1:]; main()")
    done = subprocess.run([sys.executable, "-c", runner, "ask", str(b.graph), QUESTION, "--method", "graphscout",
                           "--offline"], capture_output=True, text=True, env=b.env(), timeout=300)
    b.record(f"{SANDBOX} the sandbox cannot start: ark ask", done,
             done.returncode == 1 and "could not start" in done.stderr and "Answer" not in done.stdout, _error(done))


def _error(done: subprocess.CompletedProcess) -> str:
    text = " ".join(done.stderr.split())
    return text[text.find("error"):][:110] if "error" in text else text[-110:]


CASES = [("sandbox: protocol forgery", protocol_forgery), ("sandbox: runaway query", runaway_query),
         ("sandbox: engine crash", engine_crash), ("sandbox: secrets and Cypher", secrets_and_cypher),
         ("sandbox: none", no_sandbox)]
