"""Fault injection: every failure case of "runs that never lie", run as a user would, in one table.

    python benchmarks/fault_injection.py [--markdown FILE] [--keep]

Each case runs the real ``ark`` command in a subprocess (a fresh temporary ``ARK_HOME``; the small clinical graph
of ``tests/support/graphs.py`` saved to a folder; the model endpoint is the scripted loopback server of
``tests/support/openai_server.py`` driven by the real client) and prints: the case, the exit code, the first line
the command printed on stderr, and whether the data is intact (no line for a failed question, no doubled line,
nothing half-written, nothing left behind, the expected content where the command succeeded). The tool-argument
case and the trajectory sizes run on the real HPO graph (built into the temporary home on first use).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ark.runtime.trajectory_file import read_trajectory_file  # noqa: E402
from ark.storage.jsonl import read_jsonl  # noqa: E402
from benchmarks.sandbox_faults import CASES as SANDBOX_CASES  # noqa: E402
from tests.support.graphs import ONE_HOP, TWO_HOP, save_clinical_graph, write_folder  # noqa: E402
from tests.support.openai_server import (  # noqa: E402
    ScriptedOpenAIServer,
    http_error,
    raw_reply,
    tool_reply,
    turn_script,
)

FBN1_INDEX = 25
ANSWERING = [tool_reply(("add_to_answer", {"answer_nodes": [{"node_index": FBN1_INDEX}]})), tool_reply(("finish", {}))]


@dataclass
class Row:
    case: str
    code: int | None
    message: str
    intact: bool
    note: str = ""


class Bench:
    """The temporary world the cases run in."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.graph = save_clinical_graph(root / "clinical")
        self.queries = root / "q.jsonl"
        rows = [{"id": "a", "query": ONE_HOP[0], "answer_ids": [ONE_HOP[1]]},
                {"id": "b", "query": TWO_HOP[0], "answer_ids": [TWO_HOP[1]]}]
        self.queries.write_text("".join(json.dumps(r) + "\n" for r in rows))
        self.server = ScriptedOpenAIServer().start()
        self.rows: list[Row] = []
        self.count = 0

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ARK_MODEL")}
        return {**env, "ARK_HOME": str(self.home), "PYTHONPATH": str(REPO), **extra}

    def fresh(self, name: str) -> Path:
        self.count += 1
        folder = self.root / f"{self.count:02d}-{name}"
        folder.mkdir()
        return folder

    def command(self, *args: object) -> list[str]:
        shutil.rmtree(self.home / "llm-cache", ignore_errors=True)
        return [sys.executable, "-m", "ark.cli.main", *(str(a) for a in args)]

    def run(self, *args: object, cwd: Path | None = None, prefix: list[str] | None = None,
            timeout: float = 300, **env: str) -> subprocess.CompletedProcess:
        shutil.rmtree(self.home / "llm-cache", ignore_errors=True)  # every case asks the server, not the cache
        return subprocess.run([*(prefix or []), *self.command(*args)], capture_output=True, text=True,
                              timeout=timeout, env=self.env(**env), cwd=cwd)

    def model(self, n_agents: int = 2) -> list[str]:
        return ["--model", "test-model", "--base-url", self.server.base_url, "--set", f"n_agents={n_agents}",
                "--no-progress"]

    def record(self, case: str, done: subprocess.CompletedProcess | tuple[int, str], intact: bool,
               note: str = "") -> None:
        code, stderr = (done.returncode, done.stderr) if isinstance(done, subprocess.CompletedProcess) else done
        lines = [line.strip() for line in stderr.splitlines() if line.strip()]
        first = lines[0] if lines else "(nothing on stderr)"
        noisy = any(word in stderr for word in ("Traceback", "Task was destroyed", "Exception ignored"))
        self.rows.append(Row(case, code, first, intact and not noisy, note or (f"{len(lines)} stderr line(s)")))


def results(path: Path) -> dict[str, list[str]]:
    lines = read_jsonl(path)
    ids = [r["id"] for r in lines]
    if len(ids) != len(set(ids)):
        return {"DOUBLED": ids}
    return {r["id"]: r["ranked"] for r in lines}


# --------------------------------------------------------------------------------------------------- cases
def dead_endpoint(b: Bench) -> None:
    folder = b.fresh("dead")
    out = folder / "r.jsonl"
    b.server.responder = lambda body: http_error(500, "the model server is down")
    done = b.run("retrieve", b.graph, "-m", "ark", "-q", b.queries, "-o", out, *b.model())
    b.record("1 dead endpoint (HTTP 500): ark retrieve", done, results(out) == {})
    b.server.responder = turn_script(ANSWERING)
    again = b.run("retrieve", b.graph, "-m", "ark", "-q", b.queries, "-o", out, *b.model())
    b.record("1 ... endpoint recovered: same command again", again,
             results(out) == {"a": [ONE_HOP[1]], "b": [ONE_HOP[1]]}, "both questions completed")
    run = folder / "run"
    b.server.responder = lambda body: http_error(503, "overloaded")
    done = b.run("eval", b.graph, "-m", "ark", "-q", b.queries, "--run-dir", run, *b.model())
    b.record("1 dead endpoint (HTTP 503): ark eval", done,
             results(run / "results.jsonl") == {} and not (run / "summary.json").exists())


def two_writers(b: Bench) -> None:
    out = b.fresh("two-writers") / "r.jsonl"
    b.server.responder = turn_script([tool_reply(("search_in_graph", {"query": "marfan"}), delay_s=4.0),
                                      *ANSWERING])
    first = subprocess.Popen(b.command("retrieve", b.graph, "-m", "ark", "-q", b.queries, "-o", out, *b.model()),
                             env=b.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    before = b.server.request_count
    deadline = time.time() + 60
    while time.time() < deadline and b.server.request_count == before:
        time.sleep(0.02)
    second = b.run("retrieve", b.graph, "-m", "ark", "-q", b.queries, "-o", out, *b.model())
    first.communicate(timeout=120)
    traj = [r["id"] for r in read_trajectory_file(out.with_name("r.trajectories.jsonl"))]
    b.record("2 two processes, same --out", second,
             first.returncode == 0 and sorted(results(out)) == ["a", "b"] and sorted(traj) == ["a", "b"],
             f"first exited {first.returncode}; 2 results, 2 trajectory lines")


def read_only_mount_works() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs -o ro tmpfs /mnt && ! touch /mnt/x"],
                           capture_output=True)
    return probe.returncode == 0


def unwritable(b: Bench) -> None:
    folder = b.fresh("unwritable")
    (folder / "a-file").write_text("not a folder")
    source = write_folder(folder / "src", "csv")
    scored = folder / "scored"
    b.run("eval", b.graph, "-m", "bm25", "-q", b.queries, "--run-dir", scored, "--no-progress")
    b.run("ask", b.graph, ONE_HOP[0], "--offline", "--trajectories", folder / "t.jsonl")
    cases: list[tuple[str, list]] = [
        ("3 ark retrieve --out below a file",
         ["retrieve", b.graph, "-m", "bm25", "-q", b.queries, "-o", folder / "a-file" / "r.jsonl", "--no-progress"]),
        ("3 ark retrieve --out under /proc",
         ["retrieve", b.graph, "-m", "bm25", "-q", b.queries, "-o", "/proc/ark/r.jsonl", "--no-progress"]),
        ("3 ark retrieve --out under /sys",
         ["retrieve", b.graph, "-m", "bm25", "-q", b.queries, "-o", "/sys/ark/r.jsonl", "--no-progress"]),
        ("3 ark eval --run-dir under /proc",
         ["eval", b.graph, "-m", "bm25", "-q", b.queries, "--run-dir", "/proc/ark/run", "--no-progress"]),
        ("3 ark quiz --out below a file", ["quiz", b.graph, "--n", "5", "--out", folder / "a-file" / "q.jsonl"]),
        ("3 ark quiz --out under /sys", ["quiz", b.graph, "--n", "5", "--out", "/sys/ark/q.jsonl"]),
        ("3 ark ask --trajectories under /proc",
         ["ask", b.graph, ONE_HOP[0], "--offline", "--trajectories", "/proc/ark/t.jsonl"]),
        ("3 ark graph import --out below a file",
         ["graph", "import", "parquet", source, "--out", folder / "a-file" / "g"]),
        ("3 ark eval compare --markdown under /proc",
         ["eval", "compare", scored, scored, "--markdown", "/proc/ark/c.md"]),
        ("3 ark trajectory export --out under /sys",
         ["trajectory", "export", folder / "t.jsonl", "--out", "/sys/ark/x.jsonl"]),
    ]
    for case, args in cases:
        done = b.run(*args)
        b.record(case, done, done.returncode == 2 and "(a-file)" not in done.stderr)
    if not read_only_mount_works():
        b.rows.append(Row("3 read-only file system", None, "skipped: needs unshare + mount", True))
        return
    ro = folder / "read-only"
    ro.mkdir()
    for case, args, cwd in (
        ("3 ark retrieve --out on a read-only fs",
         ["retrieve", b.graph, "-m", "bm25", "-q", b.queries, "-o", ro / "r.jsonl", "--no-progress"], None),
        ("3 ark eval from a read-only working dir",
         ["eval", b.graph, "-m", "bm25", "-q", b.queries, "--no-progress"], ro),
        ("3 ark quiz --out on a read-only fs", ["quiz", b.graph, "--n", "5", "--out", ro / "q.jsonl"], None),
    ):
        script = f"mount -t tmpfs -o ro tmpfs {ro} && cd {cwd or b.root} && exec \"$@\""
        done = b.run(*args, prefix=["unshare", "-m", "sh", "-c", script, "sh"])
        b.record(case, done, done.returncode == 2 and not any(ro.iterdir()))


def long_arguments(b: Bench) -> None:
    from ark.index import open_index
    from ark.loaders import open_graph
    from ark.methods.ark.tools import Toolbox

    os.environ["ARK_HOME"] = str(b.home)
    graph = open_graph("hpo")
    box = Toolbox(graph, open_index(graph, kind="bm25"))
    for case, query in (("4 search_in_graph, 16,000-char query", "marfan syndrome " * 1000),
                        ("4 search_in_graph, 14 MB query", "marfan syndrome " * 875_000)):
        raw = json.dumps({"query": query})
        started = time.perf_counter()
        result = box.execute("search_in_graph", raw)
        ms = (time.perf_counter() - started) * 1000
        b.rows.append(Row(case, None, result.text.splitlines()[0], not result.ok and ms < 50,
                          f"answered in {ms:.2f} ms (HPO graph)"))


def model_without_key(b: Bench) -> None:
    done = b.run("ask", b.graph, ONE_HOP[0], "--model", "gpt-4.1")
    b.record("5 --model gpt-4.1, no API key", done, done.returncode == 2 and "offline policy, a" not in done.stderr)


def not_json(b: Bench) -> None:
    folder = b.fresh("not-json")
    out = folder / "r.jsonl"
    b.server.responder = lambda body: raw_reply("<html><body>502 Bad Gateway</body></html>")
    done = b.run("retrieve", b.graph, "-m", "ark", "-q", b.queries, "-o", out, *b.model(1))
    b.record("6 HTTP 200 with an HTML body, always", done, results(out) == {})
    served = iter(range(10**6))
    script = turn_script(ANSWERING)
    b.server.responder = lambda body: raw_reply("<html>oops</html>") if next(served) % 3 == 0 else script(body)
    done = b.run("retrieve", b.graph, "-m", "ark", "-q", b.queries, "-o", out, *b.model(1))
    b.record("6 HTTP 200 with an HTML body, once in 3", done, sorted(results(out)) == ["a", "b"],
             "retried; both questions completed")


def ctrl_c(b: Bench) -> None:
    out = b.fresh("ctrl-c") / "r.jsonl"
    for signals in (1, 2):
        b.server.responder = turn_script([tool_reply(("search_in_graph", {"query": "marfan"}), delay_s=2.0),
                                          *ANSWERING])
        before = b.server.request_count
        process = subprocess.Popen(b.command("retrieve", b.graph, "-m", "ark", "-q", b.queries, "-o", out,
                                             *b.model()),
                                   env=b.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 60
        while time.time() < deadline and b.server.request_count == before:
            time.sleep(0.02)
        for _ in range(signals):
            process.send_signal(signal.SIGINT)
            time.sleep(0.01)
        _, stderr = process.communicate(timeout=60)
        b.record(f"6 Ctrl-C x{signals} during ark retrieve", (process.returncode, stderr),
                 results(out) == {} and len(stderr.strip().splitlines()) == 1)
    b.server.responder = turn_script(ANSWERING)
    again = b.run("retrieve", b.graph, "-m", "ark", "-q", b.queries, "-o", out, *b.model())
    b.record("6 ... same command after Ctrl-C", again, sorted(results(out)) == ["a", "b"], "resumed to the end")


def bad_imports(b: Bench) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = b.fresh("imports")
    latin = write_folder(folder / "latin", "csv")
    nodes = latin / "nodes.csv"
    nodes.write_bytes(nodes.read_bytes().replace(b"Marfan syndrome", b"Marfan syndrome (Caf\xe9)"))
    done = b.run("graph", "import", "parquet", latin, "--out", folder / "g1")
    b.record("6 CSV import, Latin-1 byte", done, done.returncode == 2 and not (folder / "g1").exists())
    binary = write_folder(folder / "binary", "parquet")
    table = pq.read_table(binary / "nodes.parquet")
    names = [n.encode() for n in table.column("name").to_pylist()]
    names[0] = "Café syndrome".encode()
    position = table.column_names.index("name")
    pq.write_table(table.set_column(position, "name", pa.array(names, pa.binary())), binary / "nodes.parquet")
    done = b.run("graph", "import", "parquet", binary, "--out", folder / "g2")
    shown = b.run("graph", "info", folder / "g2")
    from ark.graph import load_graph

    ok = done.returncode == 0 and load_graph(folder / "g2").name(0) == "Café syndrome"
    b.record("6 parquet import, UTF-8 bytes name column", done, ok and shown.returncode == 0,
             "decoded: name(0) == 'Café syndrome'")
    names[0] = "Café syndrome".encode("latin-1")
    pq.write_table(table.set_column(position, "name", pa.array(names, pa.binary())), binary / "nodes.parquet")
    done = b.run("graph", "import", "parquet", binary, "--out", folder / "g3")
    b.record("6 parquet import, Latin-1 bytes name column", done,
             done.returncode == 2 and not (folder / "g3").exists())


def killed_build(b: Bench) -> None:
    graphs = b.home / "graphs"
    shutil.rmtree(graphs / "hpo", ignore_errors=True)
    process = subprocess.Popen(b.command("graph", "info", "hpo"), env=b.env(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    left: list[Path] = []
    deadline = time.time() + 120
    while time.time() < deadline and not left and process.poll() is None:
        left = list(graphs.glob(".hpo.tmp-*")) if graphs.is_dir() else []
        time.sleep(0.005)
    process.kill()
    _, stderr = process.communicate()
    b.record("6 ark graph info hpo off a terminal, killed", (process.returncode, stderr), bool(left),
             "SIGKILL during the save" if left else "the save was not caught in time; rerun")
    done = b.run("graph", "info", "hpo")
    remaining = list(graphs.glob(".hpo.tmp-*"))
    b.record("6 ... same command after the kill", done, bool(left) and not remaining and done.returncode == 0,
             f"{len(left)} temp folder(s) left by the kill, {len(remaining)} after the rerun")


def one_agent_fails(b: Bench) -> None:
    folder = b.fresh("agents")
    out = folder / "r.jsonl"
    b.home.mkdir(exist_ok=True)
    config = b.home / "config.toml"
    config.write_text("[llm]\nseed = 0\n")  # agent i sends seed i
    script = turn_script(ANSWERING)
    b.server.responder = lambda body: http_error(400, "context too long", retry_after_ms=None) \
        if body.get("seed") == 2 else script(body)
    done = b.run("retrieve", b.graph, "-m", "ark", "-q", b.queries, "-o", out, *b.model(3))
    b.record("9 one of 3 agents fails", done, results(out) == {})
    done = b.run("retrieve", b.graph, "-m", "ark", "-q", b.queries, "-o", out, *b.model(3), "--allow-partial")
    marked = all(r.get("partial", "").startswith("1 of 3 agents failed") for r in read_jsonl(out))
    b.record("9 ... with --allow-partial", done, marked and sorted(results(out)) == ["a", "b"],
             "fused from 2 agents, lines marked partial")
    config.unlink()


def trajectory_sizes(b: Bench, limit: int) -> None:
    folder = b.fresh("sizes")
    out = folder / "r.jsonl"
    pheno = Path("/work/shared/data/phenopackets-dev.jsonl")
    if not pheno.is_file():
        b.rows.append(Row("7 trajectory size", None, f"skipped: {pheno} not found", True))
        return
    done = b.run("retrieve", "hpo", "-m", "ark", "-q", pheno, "--limit", limit, "-o", out, "--no-progress",
                 timeout=1200)
    path = out.with_name("r.trajectories.jsonl")
    records = read_trajectory_file(path)
    plain = sum(len(json.dumps(r, ensure_ascii=False).encode()) + 1 for r in records)
    packed = path.stat().st_size
    b.record(f"7 trajectories, phenopackets-dev x{len(records)}", done,
             done.returncode == 0 and plain >= 10 * packed,
             f"{plain / len(records) / 1e6:.2f} MB -> {packed / len(records) / 1e3:.0f} KB per question "
             f"({plain / packed:.0f}x)")



# ----------------------------------------------------------------------------------------- caches (issue 26)
def _fresh_graph(b: Bench, name: str) -> Path:
    graph = b.fresh(name) / "clinical"
    shutil.copytree(b.graph, graph, ignore=shutil.ignore_patterns("index", ".*"))
    return graph


def _ask(b: Bench, graph: Path, **kwargs) -> subprocess.CompletedProcess:
    return b.run("ask", graph, ONE_HOP[0], "--offline", "--top", "3", **kwargs)


def parallel_first_use(b: Bench) -> None:
    graph = _fresh_graph(b, "parallel")
    started = time.perf_counter()
    procs = [subprocess.Popen(b.command("ask", graph, ONE_HOP[0], "--offline", "--top", "3"), env=b.env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(16)]
    done = [(p, *p.communicate(timeout=300)) for p in procs]
    took = time.perf_counter() - started
    failed = [(p.returncode, err) for p, _, err in done if p.returncode != 0]
    code, stderr = failed[0] if failed else (0, "")
    b.record("8 16 parallel first uses of a graph (ark ask)", (code, stderr),
             not failed and all("FBN1" in out for _, out, _ in done) and took < 60,
             f"{16 - len(failed)}/16 exited 0 in {took:.1f} s")


def damaged_caches(b: Bench) -> None:
    for case, damage in (("8 flipped byte in the index's term_ptr.npy", "index:term_ptr.npy"),
                         ("8 flipped byte in the index's doc_deltas.bin", "index:doc_deltas.bin"),
                         ("8 truncated terms.txt of the index", "truncate:terms.txt"),
                         ("8 truncated graph file codes.npy", "truncate-graph:codes.npy")):
        graph = _fresh_graph(b, "damaged")
        _ask(b, graph)
        kind, name = damage.split(":")
        target = graph / name if kind == "truncate-graph" else next((graph / "index").glob("bm25-*")) / name
        data = bytearray(target.read_bytes())
        if kind == "index":
            data[-3] ^= 0x5A
        else:
            del data[-40:]
        target.write_bytes(bytes(data))
        done = _ask(b, graph)
        b.record(case, done, done.returncode != 0 and str(target) in done.stderr and "FBN1" not in done.stdout
                 and "rebuild it" in done.stderr)
    done = b.run("graph", "verify", graph)
    b.record("8 ... ark graph verify on the damaged graph", done, done.returncode == 1 and "codes.npy" in done.stderr)


def full_disk_index(b: Bench) -> None:
    if not read_only_mount_works():
        b.rows.append(Row("8 full disk while saving the index", None, "skipped: needs unshare + mount", True))
        return
    small = b.fresh("full-disk") / "disk"
    small.mkdir()
    graph = small / "clinical"
    # A 1 MB tmpfs holding the graph, then filled up but for 16 kB (too little for the index); the command runs
    # twice in that namespace (the second run must not keep failing), then the index folder is listed.
    script = (f"mount -t tmpfs -o size=1m tmpfs {small} && cp -r {b.graph} {graph} && rm -rf {graph}/index && "
              f"head -c $(( $(df -B1 --output=avail {small} | tail -1) - 16384 )) /dev/zero > {small}/filler; "
              "\"$@\" >/dev/null 2>&1; echo \"first run exit $?\" >&2; \"$@\"; code=$?; "
              f"echo \"left: $(ls -A {graph}/index)\" >&2; exit $code")
    done = b.run("ask", graph, ONE_HOP[0], "--offline", "--top", "3",
                 prefix=["unshare", "-m", "sh", "-c", script, "sh"])
    left = done.stderr.rsplit("left:", 1)[-1].strip()
    b.record("8 full disk while saving the index, twice", done,
             done.returncode == 0 and "first run exit 0" in done.stderr and left == "" and "FBN1" in done.stdout,
             f"index folder after both runs: {left or 'empty'}")


def read_only_home_llm(b: Bench) -> None:
    if not read_only_mount_works():
        b.rows.append(Row("8 read-only ARK_HOME, model question", None, "skipped: needs unshare + mount", True))
        return
    graph = _fresh_graph(b, "ro-home")
    _ask(b, graph)  # its index, beside the graph (not in ARK_HOME)
    home = b.fresh("ro-home-home")
    b.server.responder = turn_script(ANSWERING)
    script = f"mount -t tmpfs -o ro tmpfs {home} && exec \"$@\""
    model = ["--model", "test-model", "--base-url", b.server.base_url, "--set", "n_agents=1"]
    done = b.run("ask", graph, ONE_HOP[0], "--top", "3", *model, ARK_HOME=str(home),
                 prefix=["unshare", "-m", "sh", "-c", script, "sh"])
    b.record("8 read-only ARK_HOME, model question (LLM cache)", done,
             done.returncode == 0 and "FBN1" in done.stdout and "keeping LLM replies in memory" in done.stderr)


CACHE_CASES: list[tuple[str, Callable[..., None]]] = [
    ("parallel first use", parallel_first_use), ("damaged caches", damaged_caches),
    ("full disk index", full_disk_index), ("read-only home LLM cache", read_only_home_llm),
]


# --------------------------------------------------------------------------------------------------- main
CASES: list[tuple[str, Callable[..., None]]] = [
    ("dead endpoint", dead_endpoint), ("two writers", two_writers), ("unwritable", unwritable),
    ("long arguments", long_arguments), ("model without key", model_without_key), ("not JSON", not_json),
    ("Ctrl-C", ctrl_c), ("bad imports", bad_imports), ("killed build", killed_build),
    ("one agent fails", one_agent_fails), ("trajectory sizes", trajectory_sizes),
    *SANDBOX_CASES,  # model-written code against the sandbox: benchmarks/sandbox_faults.py
    *CACHE_CASES,
]

from fault_cases_harden import CASES as HARDENING_CASES  # noqa: E402 - servers, model client, terminal (issue 26)

CASES += HARDENING_CASES
from fault_cases_44 import CASES as ISSUE_44_CASES  # noqa: E402 - Cypher crash/hang, non-root sandbox, low defects
from fault_cases_requests import CASES as REQUEST_CASES  # noqa: E402 - what a request may set (issue 44)

CASES += REQUEST_CASES + ISSUE_44_CASES


def table(rows: list[Row]) -> str:
    lines = ["| case | exit | first line of the message | data intact | note |", "|---|---|---|---|---|"]
    for row in rows:
        message = row.message.replace("|", "\\|")
        lines.append(f"| {row.case} | {'' if row.code is None else row.code} | {message} | "
                     f"{'yes' if row.intact else 'NO'} | {row.note} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", type=Path, help="Also write the table here.")
    parser.add_argument("--limit", type=int, default=10, help="phenopackets-dev questions for the size case.")
    parser.add_argument("--keep", action="store_true", help="Keep the temporary folder (printed).")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="ark-faults-"))
    bench = Bench(root)
    try:
        for name, case in CASES:
            started = time.perf_counter()
            try:
                case(bench, args.limit) if case is trajectory_sizes else case(bench)
            except Exception as exc:  # noqa: BLE001 - a broken case is a row, not the end of the table
                bench.rows.append(Row(name, None, f"case crashed: {type(exc).__name__}: {exc}", False))
            print(f"[{time.perf_counter() - started:6.1f} s] {name}", file=sys.stderr, flush=True)
    finally:
        bench.server.stop()
        if args.keep:
            print(f"kept {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)
    text = table(bench.rows)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")
    return 0 if all(row.intact for row in bench.rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
