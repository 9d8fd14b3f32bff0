"""The fault-injection cases of issue 44's other defects, as rows of ``benchmarks/fault_injection.py`` (its ``Bench``:
a temporary ``ARK_HOME``, the small clinical graph, the scripted loopback model server); also runnable alone
(``python benchmarks/fault_cases_44.py``: these rows only).

- 44.2 model-written Cypher that crashes (SIGSEGV) or hangs the embedded engine, and the audit's ``NOT`` chain and
  5,000-deep lists, under ``ark ask --method cypher`` and a real ``ark serve`` with a client-chosen model URL;
- 44.3 a non-root sandbox writing outside its bounded ``/tmp``;
- 44.4 a real full disk during the index build, a reply over the size cap and one cut mid-body, a 6 MB refused tool
  argument in ``--json``, boolean node ids in a query file and a table import, GRBench neighbours naming no node.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from fault_cases_harden import _post, _serve  # noqa: E402

from tests.support.cypher_attacks import CRASH, DEEP_LISTS, HANG, NOT_CHAIN, cypher_model  # noqa: E402
from tests.support.full_disk import full_disk_command  # noqa: E402
from tests.support.openai_server import raw_reply, tool_reply, turn_script  # noqa: E402

QUERIES = {"CRASHQ": (CRASH, 60.0, "crashed the database engine"), "HANGQ": (HANG, 2.0, "s deadline"),
           "NOTQ": (NOT_CHAIN, 2.0, "the limit is"), "DEEPQ": (DEEP_LISTS, 2.0, "the limit is")}
LABELS = {"CRASHQ": "crash (12,000 ORs)", "HANGQ": "hang (40,000 +1s)", "NOTQ": "20,000 NOTs",
          "DEEPQ": "lists 5,000 deep"}


def ONE_AGENT(b: Any) -> list[str]:  # noqa: N802 - reads as the flags it gives
    return ["--model", "test-model", "--base-url", b.server.base_url, "--set", "n_agents=1"]


class _Timed:
    """The cypher responder, noting when each call arrived and was answered (after ``think_s``)."""

    def __init__(self, respond: Any, think_s: float) -> None:
        self.respond, self.think_s, self.arrived, self.answered = respond, think_s, [], []

    def __call__(self, body: dict) -> Any:
        self.arrived.append(time.monotonic())
        time.sleep(self.think_s)
        self.answered.append(time.monotonic())
        return self.respond(body)


def _told(b: Any) -> str:
    return str(b.server.requests[-1]["messages"][-1]["content"]) if b.server.requests else ""


def cypher_ask(b: Any) -> None:
    for marker, (query, timeout, told) in QUERIES.items():
        timed = _Timed(cypher_model({marker: query}), 2.0)
        b.server.responder = timed
        done = b.run("ask", b.graph, f"Which genes? {marker}", "--method", "cypher", "--model", "test-model",
                     "--base-url", b.server.base_url, "--set", f"timeout_s={timeout:g}", "--json",
                     OPENAI_API_KEY="dummy")
        took = timed.arrived[-1] - timed.answered[0] if len(timed.arrived) > 1 else float("nan")
        ok = done.returncode == 0 and told in _told(b) and (marker != "HANGQ" or took < timeout + 2)
        line = next((s for s in _told(b).splitlines() if s.startswith("The query failed")), "(no failure told)")
        b.record(f"44.2 cypher {LABELS[marker]}: ark ask --method cypher", (done.returncode, line[:110]), ok,
                 f"query {took:.1f} s (timeout_s {timeout:g})")


def cypher_serve(b: Any) -> None:
    """Two servers: ``cypher.timeout_s`` long enough for the crash to come first, then short for the hang."""
    for timeout, markers in ((60, ("CRASHQ",)), (2, ("HANGQ",))):
        _serve_cypher(b, timeout, markers)


def _serve_cypher(b: Any, timeout: float, markers: tuple[str, ...]) -> None:
    timed = _Timed(cypher_model({m: q for m, (q, _, _) in QUERIES.items()}), 0.5)
    b.server.responder = timed
    model = {"model": "test-model", "base_url": b.server.base_url}
    process, url = _serve(b, ["serve", b.graph, "--port", "0", "--offline", "--allow-request-models", "--set",
                              f"cypher.timeout_s={timeout:g}"], r"listening on (http://127\.0\.0\.1:\d+)/")
    try:
        for marker in (*markers, None):
            first = len(timed.arrived)
            question = f"Which genes? {marker}" if marker else "How many diseases?"
            code, text = _post(f"{url}/api/ask", json.dumps({"question": question, "method": "cypher",
                                                              "model": model}).encode(),
                               {"Content-Type": "application/json"})
            took = timed.arrived[-1] - timed.answered[first] if len(timed.arrived) > first + 1 else float("nan")
            told = QUERIES[marker][2] if marker else '{"diseases": 6}'
            alive = process.poll() is None
            case = f"44.2 cypher {LABELS[marker]}: ark serve" if marker else "44.2 ... the next request: ark serve"
            b.record(case, (code, _told(b).splitlines()[-1][:110] if _told(b) else text[:110]),
                     code == 200 and told in _told(b) and alive and (marker != "HANGQ" or took < timeout + 2),
                     f"query {took:.1f} s (timeout_s {timeout:g}); server {'up' if alive else 'DEAD'}")
    finally:
        process.terminate()
        process.wait(timeout=30)


def non_root_write(b: Any) -> None:
    from ark.sandbox import bwrap_problem
    from tests.support.unprivileged import USER_ID, checkout_closed, unprivileged_prefix

    case = "44.3 non-root sandbox writes outside /tmp"
    if bwrap_problem() is not None or (checkout_closed() and os.geteuid() == 0):
        b.record(case, (0, f"skipped: {bwrap_problem() or 'the checkout is closed to other users'}"), True)
        return
    home = b.fresh("non-root-home")
    home.chmod(0o755)
    if os.geteuid() == 0:
        os.chown(home, USER_ID, USER_ID)
        b.root.chmod(0o755)
    outside = ["/", "/dev", "/dev/shm", "/root", "/etc", "/var", str(REPO.parent)]
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(REPO),
           "LANG": "C.UTF-8"}
    child = REPO / "tests" / "support" / "non_root_write_child.py"
    done = subprocess.run([*unprivileged_prefix(home), sys.executable, str(child), json.dumps([*outside, "/tmp"])],
                          cwd=home, env=env, capture_output=True, text=True, timeout=240)
    try:
        outcome = json.loads(done.stdout.strip().splitlines()[-1])
        report = json.loads(outcome["stdout"].strip().splitlines()[-1])
    except (IndexError, ValueError, KeyError, TypeError):
        b.record(case, (done.returncode, (done.stderr or done.stdout)[-110:]), False)
        return
    wrote = {f: e["written_mb"] for f, e in report.items() if not f.startswith("/tmp") and e["written_mb"]}
    b.record(case, (done.returncode, f"uid {outcome['uid']}: / -> {report['/']['error']}"),
             outcome["uid"] != 0 and not wrote, f"/tmp took {report['/tmp']['written_mb']} MB; outside: {wrote}")




def full_disk(b: Any) -> None:
    disk = b.fresh("disk")
    done = subprocess.run(full_disk_command(disk), capture_output=True, text=True,
                          timeout=300, cwd=REPO, env=b.env(COLUMNS="400"))
    if "mount" in done.stderr and "permission" in done.stderr.lower():
        b.record("44.4 full disk during the index build", (0, "skipped: no private tmpfs here"), True)
        return
    error = next((s for s in done.stderr.splitlines() if s.startswith("error:")), "(no error line)")
    b.record("44.4 full disk during the index build: ark ask", (done.returncode, error[:110]),
             done.returncode == 2 and "the disk is full" in error and done.stderr.rstrip().endswith("left:"),
             "nothing left in index/" if done.stderr.rstrip().endswith("left:") else done.stderr.splitlines()[-1])


def replies(b: Any) -> None:
    body = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "test-model",
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": "hi"}}], "padding": "x" * 5000})
    for label, step, said in (("over the 32 MB cap", raw_reply(body.replace("x" * 5000, "x" * (33 << 20))),
                               "larger than"), ("cut mid-body", raw_reply(body, cut_after=1000), "cut off after")):
        b.server.responder = lambda _body, step=step: step
        done = b.run("ask", b.graph, "Which genes?", *ONE_AGENT(b), "--set", "max_steps=2", OPENAI_API_KEY="dummy")
        b.record(f"44.4 reply {label}: ark ask", done,
                 done.returncode != 0 and said in done.stderr and "Connection error" not in done.stderr)


def refused_argument(b: Any) -> None:
    b.server.responder = turn_script([tool_reply(("search_in_graph", {"query": "marfan " * 900_000})),
                                      tool_reply(("finish", {}))])
    done = b.run("ask", b.graph, "Which genes?", *ONE_AGENT(b), "--json", OPENAI_API_KEY="dummy")
    b.record("44.4 refused 6 MB tool argument: ark ask --json", (done.returncode, done.stderr),
             done.returncode == 0 and len(done.stdout) < 200_000, f"--json {len(done.stdout):,} bytes")


def boolean_ids(b: Any) -> None:
    queries = b.fresh("bool-ids") / "q.jsonl"
    queries.write_text(json.dumps({"id": "q1", "query": "Which genes?", "answer_ids": [True]}) + "\n")
    done = b.run("retrieve", b.graph, "-m", "bm25", "-q", queries, "-o", queries.parent / "r.jsonl")
    b.record("44.4 boolean answer id in a query file: ark retrieve", done,
             done.returncode != 0 and "got true (a boolean)" in done.stderr)
    folder = queries.parent / "tables"
    folder.mkdir()
    (folder / "nodes.jsonl").write_text(json.dumps({"id": True, "type": "t", "name": "x"}) + "\n")
    (folder / "edges.jsonl").write_text(json.dumps({"from": "x", "to": "x", "type": "r"}) + "\n")
    done = b.run("graph", "import", "jsonl", folder, "--out", queries.parent / "g", "--name", "boolids")
    b.record("44.4 boolean node id in a JSONL table: ark graph import", done,
             done.returncode != 0 and "got true (a boolean)" in done.stderr and not (queries.parent / "g").exists())


def grbench_dropped(b: Any) -> None:
    source = b.fresh("grbench")
    (source / "graph.json").write_text(json.dumps({
        "paper_nodes": {"p1": {"features": {"title": "Graphs"}, "neighbors": {"author": ["a1", "a9", "a8"]}}},
        "author_nodes": {"a1": {"features": {"name": "Ada"}, "neighbors": {"paper": ["p1", "p99"]}}}}))
    done = b.run("graph", "import", "grbench", source, "--out", source / "g", COLUMNS="300")
    console = " ".join((done.stdout + done.stderr).split())
    said = "dropped 3 edge(s) whose neighbour names no node" in console
    b.record("44.4 GRBench neighbours naming no node: ark graph import", (done.returncode, console[-110:]),
             done.returncode == 0 and said and "e.g." in console)


CASES = [("44 cypher via ask", cypher_ask), ("44 cypher via serve", cypher_serve), ("44 non-root", non_root_write),
         ("44 full disk", full_disk), ("44 replies", replies), ("44 refused argument", refused_argument),
         ("44 boolean ids", boolean_ids), ("44 grbench dropped", grbench_dropped)]


def main() -> int:
    """These rows alone, in fault_injection's bench and table."""
    import fault_injection

    fault_injection.CASES[:] = CASES
    return fault_injection.main()


if __name__ == "__main__":
    raise SystemExit(main())
