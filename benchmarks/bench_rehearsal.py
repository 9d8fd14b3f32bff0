"""A rehearsal at the benchmarks' sizes, in their released formats: STaRK PRIME and GRBench Amazon / Freelaw.

    python benchmarks/bench_rehearsal.py [--runs prime:1,amazon:0.005,amazon:0.01,legal:0.002,legal:0.004]
                                         [--workdir DIR] [--keep] [--calls 200] [--questions 20]
                                         [--measured benchmarks/rehearsal_measured.json]

Each run ``FORMAT:SCALE`` writes a synthetic graph in the released files' format at that fraction of the real node
and edge counts (``benchmarks/synthetic_rehearsal.py``: the real files are not reachable here; random texts, our
type mixes), then runs each stage as its own process: ``generate``; ``import`` (the real command: ``ark graph import
stark prime`` / ``ark graph import grbench``); ``bm25`` (the index builds: ``open_index`` and
GraphScout's name index); ``cypher`` (the embedded
ladybug export, skipped without the graphdb extra); ``search`` (``search_in_graph`` latency on node names and text
passages, ``search_in_neighborhood`` on the largest hub); ``ark`` (offline ARK, the offline policy and not an LLM, on
``--questions`` questions naming a node and asking for its neighbours); ``questions`` (a GraphScout quiz of
``--questions`` questions on the graph, its first question of each template answered by offline ARK and offline
GraphScout, Cypher on the exported database). Per stage: wall and CPU seconds, the child's peak RSS (``wait4``),
its peak private memory (``RssAnon``, sampled every 0.2 s by a Python child itself: RSS without the pages of
memory-mapped files, which the kernel may drop and read again), the disk its folder holds after it and the most it
added while running (scratch files included, sampled every 2 s), and the load average before and after. The stages
of a run print side by side, then, for every format, each stage projected to the benchmark's real node and edge
counts by the per-unit rates of its largest measured run (``benchmarks/rehearsal_extrapolate.py``: per byte of the
source file, per byte of node text, per row loaded, per node; labelled as projections) and whether it fits a 2-core,
24 GB machine with 64 GB of disk. ``--measured SUMMARY`` adds earlier runs' records (``--runs ''`` projects from them
alone). ``summary.json`` in the work folder keeps everything. Heavy stages run at nice 10.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_scale import _latency_row, _time_calls  # noqa: E402
from benchmarks.rehearsal_extrapolate import print_projection, project  # noqa: E402
from benchmarks.synthetic_rehearsal import GRBENCH_SIZES, PRIME_EDGE_ROWS, PRIME_TYPES  # noqa: E402

STAGES = ("generate", "import", "bm25", "cypher", "search", "ark", "questions")
HEAVY = ("generate", "import", "bm25", "cypher")
REAL = {"prime": (sum(PRIME_TYPES.values()), PRIME_EDGE_ROWS), **GRBENCH_SIZES}
DISK_OF = {"generate": "src", "import": "graph", "bm25": "graph/index", "cypher": "graph/cypher"}


def disk_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def work_bytes(folder: Path) -> int:
    """Bytes in a run folder but its source files: what the stages wrote, temporaries included."""
    return sum(disk_bytes(p) if p.is_dir() else p.stat().st_size for p in folder.iterdir() if p.name != "src")


def _sample_disk(folder: Path, done: threading.Event, peak: list[int]) -> None:
    """Largest :func:`work_bytes` seen until ``done`` (every 2 s): a stage's scratch files count too."""
    while not done.wait(2):
        with contextlib.suppress(OSError):  # a file removed while it was being listed
            peak[0] = max(peak[0], work_bytes(folder))


def _anon_kib() -> int:
    """This process's private (anonymous) resident memory, KiB: its RSS without the pages of memory-mapped files,
    which the kernel may drop and read again (the graph's arrays, the node table, the index)."""
    with contextlib.suppress(OSError, StopIteration, ValueError):
        status = Path("/proc/self/status").read_text()
        return int(next(line for line in status.splitlines() if line.startswith("RssAnon:")).split()[1])
    return 0


def _sample_anon(done: threading.Event, peak: list[int]) -> None:
    """Largest :func:`_anon_kib` seen until ``done`` (every 0.2 s)."""
    while not done.wait(0.2):
        peak[0] = max(peak[0], _anon_kib())


def stage_command(stage: str, fmt: str, scale: float, folder: Path, args: argparse.Namespace) -> list[str]:
    if stage == "import":
        ark = Path(sys.executable).with_name("ark")
        ark_cmd = str(ark) if ark.exists() else "ark"
        if fmt == "prime":
            return [ark_cmd, "graph", "import", "stark", "prime", "--root", str(folder / "src"), "--out",
                    str(folder / "graph")]
        return [ark_cmd, "graph", "import", "grbench", str(folder / "src"), "--out", str(folder / "graph")]
    return [sys.executable, str(Path(__file__).resolve()), "--stage", stage, "--format", fmt, "--scale", str(scale),
            "--workdir", str(folder), "--calls", str(args.calls), "--questions", str(args.questions),
            "--cypher-edge-rows", str(args.cypher_edge_rows), "--cypher-pool-mb", str(args.cypher_pool_mb)]


def run_stage(stage: str, fmt: str, scale: float, folder: Path, args: argparse.Namespace) -> dict:
    """One stage as a child process: wall, CPU, peak RSS, disk added, load before and after, its own figures."""
    disk_path = folder / DISK_OF.get(stage, "none")  # the folder the stage writes (none for the latency stages)
    load_before = os.getloadavg()
    started = time.perf_counter()
    niceness = args.heavy_nice if stage in HEAVY else 0
    process = subprocess.Popen(stage_command(stage, fmt, scale, folder, args), stdout=subprocess.DEVNULL,
                               preexec_fn=(lambda: os.nice(niceness)) if niceness else None)
    before, peak_disk, done = work_bytes(folder), [0], threading.Event()
    sampler = threading.Thread(target=_sample_disk, args=(folder, done, peak_disk), daemon=True)
    sampler.start()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    done.set()
    sampler.join()
    peak_disk[0] = max(peak_disk[0], work_bytes(folder))  # a stage shorter than one sample
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{fmt}:{scale} stage {stage!r} failed (exit {os.waitstatus_to_exitcode(status)})")
    figures_file = folder / f"{stage}.json"
    figures = json.loads(figures_file.read_text()) if figures_file.is_file() else {}
    if stage == "import" and (folder / "graph" / "nodes.arrow").is_file():  # the node table: the texts' bytes
        figures["text_bytes"] = (folder / "graph" / "nodes.arrow").stat().st_size
    disk = disk_bytes(disk_path)
    return {"format": fmt, "scale": scale, "stage": stage, "wall_s": round(wall, 1),
            "cpu_s": round(usage.ru_utime + usage.ru_stime, 1), "peak_rss_gb": round(usage.ru_maxrss / 2**20, 3),
            "disk_gb": round(disk / 1e9, 3), "peak_added_disk_gb": round(max(peak_disk[0] - before, 0) / 1e9, 3),
            "load": [round(os.getloadavg()[0], 1), round(load_before[0], 1)],
            **figures}


# ---------------------------------------------------------------------------------------------------- children
def child_generate(folder: Path, args: argparse.Namespace) -> dict:
    from benchmarks.synthetic_rehearsal import write_grbench, write_prime

    shutil.rmtree(folder / "src", ignore_errors=True)
    if args.format == "prime":
        return write_prime(folder / "src", args.scale, seed=0)
    return write_grbench(folder / "src", args.format, args.scale, seed=0)


def _graph(folder: Path):
    from ark.graph import load_graph

    return load_graph(folder / "graph")


def child_bm25(folder: Path, args: argparse.Namespace) -> dict:
    """The BM25 builds: ARK's index over node texts, then GraphScout's retriever index over node names (built here,
    with the other build, so that the questions stage only opens it)."""
    from ark.index import open_index
    from ark.methods.graphscout.options import GraphScoutOptions
    from ark.methods.graphscout.solver import open_node_index

    graph = _graph(folder)
    started = time.perf_counter()
    index = open_index(graph, "bm25", progress=False)
    build_s = round(time.perf_counter() - started, 1)
    started = time.perf_counter()
    open_node_index(graph, GraphScoutOptions())
    return {"nodes": graph.num_nodes, "edges": graph.num_edges, "build_s": build_s, "docs": index.index.num_docs,
            "name_index_s": round(time.perf_counter() - started, 1)}


def child_cypher(folder: Path, args: argparse.Namespace) -> dict:
    try:
        from ark.graphdb.export import ladybug_database
        from ark.graphdb.stream import ExportChunks
    except ImportError as error:
        return {"skipped": f"graphdb extra missing ({error})"}
    graph = _graph(folder)
    started = time.perf_counter()
    chunks = ExportChunks(edge_rows=args.cypher_edge_rows, buffer_pool_mb=args.cypher_pool_mb)
    database = ladybug_database(graph, chunks=chunks)
    return {"export_s": round(time.perf_counter() - started, 1), "database": str(database.path),
            "edge_rows": chunks.edge_rows, "buffer_pool_mb": chunks.buffer_pool_mb}


def child_search(folder: Path, args: argparse.Namespace) -> dict:
    from ark.index import open_index
    from ark.methods.ark.options import ToolConfig
    from ark.methods.ark.tools import Toolbox

    graph = _graph(folder)
    box = Toolbox(graph, open_index(graph, "bm25", progress=False), ToolConfig())
    rng = np.random.default_rng(0)
    nodes = rng.integers(0, graph.num_nodes, args.calls)
    passages = []
    for i in nodes:
        text = graph.text(int(i)).split()
        start = int(rng.integers(0, max(len(text) - 12, 0) + 1))
        passages.append(" ".join(text[start:start + 12]))
    rows = [_latency_row("search_in_graph: a node's name, size 20", _time_calls(
                box, "search_in_graph", [{"query": graph.name(int(i)), "size": 20} for i in nodes])),
            _latency_row("search_in_graph: 12 words of a node's text, size 20", _time_calls(
                box, "search_in_graph", [{"query": p, "size": 20} for p in passages]))]
    degrees = np.diff(graph.indptr)
    hub = int(np.argmax(degrees))
    calls = [{"node_index": hub, "query": graph.name(int(i))} for i in nodes[: max(args.calls // 4, 10)]]
    rows.append(_latency_row(f"search_in_neighborhood: the largest hub ({int(degrees[hub]):,} edges), query",
                             _time_calls(box, "search_in_neighborhood", calls)))
    return {"latency": rows}


def child_ark(folder: Path, args: argparse.Namespace) -> dict:
    from ark.index import open_index
    from ark.methods.ark.api import ARK
    from ark.methods.ark.offline import OfflinePolicy
    from ark.metrics.ranking import mean_metrics, query_metrics

    graph = _graph(folder)
    ark = ARK(graph, llm=OfflinePolicy(graph), index=open_index(graph, "bm25", progress=False))  # no LLM
    rng = np.random.default_rng(1)
    degrees = np.diff(graph.indptr)
    cap = max(20, int(np.median(degrees)))
    anchors = [int(i) for i in rng.permutation(np.flatnonzero((degrees > 0) & (degrees <= cap)))[: args.questions]]
    seconds, per_query = [], []
    for anchor in anchors:
        found = graph.neighbors(anchor)
        relation = graph.relation_types[int(found.relations[0])]
        answers = sorted({graph.node_id(int(n)) for n, r in zip(found.nodes, found.relations, strict=True)
                          if graph.relation_types[int(r)] == relation})
        started = time.perf_counter()
        retrieval = ark.retrieve(f"Which nodes are linked to {graph.name(anchor)} by {relation}?")
        seconds.append(time.perf_counter() - started)
        per_query.append(query_metrics([n.node_id for n in retrieval.ranked], answers))
    metrics = {k: round(v * 100, 2) for k, v in mean_metrics(per_query).items()} if per_query else {}
    return {"questions": len(anchors), "question_s_median": round(float(np.median(seconds)), 3) if seconds else None,
            "metrics_offline_policy": metrics}


def child_questions(folder: Path, args: argparse.Namespace) -> dict:
    """One GraphScout-quiz question per template (answer type / difficulty) on the graph, answered by offline ARK
    and offline GraphScout (scripted policies, not LLMs; GraphScout runs Cypher on the exported database)."""
    from ark.eval import open_queries, run_eval
    from ark.methods import MethodContext
    from ark.methods.choice import MethodChoice
    from ark.methods.graphscout.quiz.generate import GraphScoutQuizConfig, generate_graphscout_quiz

    graph = _graph(folder)
    started = time.perf_counter()
    quiz = generate_graphscout_quiz(graph, GraphScoutQuizConfig(n=args.questions, seed=0, guard=False))
    per_template: dict[str, dict] = {}
    for record in quiz.questions:
        per_template.setdefault(record["template"], record)
    source = folder / "questions.jsonl"
    source.write_text("".join(json.dumps({"id": r["id"], "query": r["query"], "answer_ids": r["answer_ids"],
                                          "template": r["template"], "answer": r["answer"]}) + "\n"
                              for r in per_template.values()))
    figures: dict = {"quiz_s": round(time.perf_counter() - started, 1), "templates": sorted(per_template)}
    queries, _ = open_queries(source, graph)
    for name in ("ark", "graphscout"):
        shutil.rmtree(folder / f"runs-{name}", ignore_errors=True)  # answered afresh, not resumed from a past run
        started = time.perf_counter()
        choice = MethodChoice.make(name, {}, MethodContext(llm=None))
        outcome = run_eval(graph, choice, queries, folder / f"runs-{name}", queries_source=str(source))
        overall, answers = outcome.summary["overall"], outcome.summary.get("answers") or {}
        figures[name] = {"questions": len(queries), "s": round(time.perf_counter() - started, 1),
                         "hit@1_offline_policy": round(overall["hit@1"] * 100, 1),
                         **({"answer_f1_offline_policy": round(answers["f1"] * 100, 1)} if "f1" in answers else {})}
    return figures


CHILDREN = {"generate": child_generate, "bm25": child_bm25, "cypher": child_cypher, "search": child_search,
            "ark": child_ark, "questions": child_questions}


# ---------------------------------------------------------------------------------------------------- report
def print_table(results: list[dict]) -> None:
    print("\n== stages side by side (load = 1-minute load average after <- before; 2-core machine) ==")
    print(f"{'run':<16} {'stage':<9} {'wall s':>8} {'CPU s':>8} {'peak RSS GB':>11} {'anon GB':>7} {'disk GB':>8} "
          f"{'peak +disk GB':>13}  load")
    for r in results:
        anon = f"{r['peak_anon_gb']:>7.2f}" if "peak_anon_gb" in r else f"{'-':>7}"
        print(f"{r['format'] + ':' + str(r['scale']):<16} {r['stage']:<9} {r['wall_s']:>8.1f} {r['cpu_s']:>8.1f} "
              f"{r['peak_rss_gb']:>11.2f} {anon} {r['disk_gb']:>8.3f} {r.get('peak_added_disk_gb', 0):>13.3f}  "
              f"{r['load'][0]} <- {r['load'][1]}"
              + (f"  ({r['skipped']})" if "skipped" in r else ""))
    for r in results:
        for row in r.get("latency", []):
            print(f"  {r['format']}:{r['scale']} {row['call']:<70} median {row['median_ms']:7.2f} ms  p99 "
                  f"{row['p99_ms']:8.2f} ms  (CPU median {row['cpu_median_ms']:.2f}, p99 {row['cpu_p99_ms']:.2f})")
        if r["stage"] == "questions":
            print(f"  {r['format']}:{r['scale']} one quiz question per template ({len(r['templates'])}: "
                  f"{', '.join(r['templates'])}), offline policies, not LLMs: "
                  + "; ".join(f"{m} {r[m]}" for m in ("ark", "graphscout")))
        if r["stage"] == "ark":
            print(f"  {r['format']}:{r['scale']} offline ARK (offline policy, not an LLM): {r['questions']} "
                  f"questions, median {r['question_s_median']} s a question, {r['metrics_offline_policy']}")


def project_all(results: list[dict]) -> dict[str, list[dict]]:
    """Per format: each stage at the benchmark's real size by the measured per-unit rates of that format's runs
    (``benchmarks/rehearsal_extrapolate.py``), printed and returned."""
    projected = {}
    for fmt in dict.fromkeys(r["format"] for r in results):
        by_run: dict[float, list[dict]] = {}
        for r in results:
            if r["format"] == fmt:
                by_run.setdefault(r["scale"], []).append(r)
        nodes, edges = REAL[fmt]
        projected[fmt] = project(list(by_run.values()), nodes, edges)
        print_projection(fmt, projected[fmt], nodes, edges)
    return projected


# ---------------------------------------------------------------------------------------------------- main
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", default="prime:1,amazon:0.005,amazon:0.01,legal:0.002,legal:0.004",
                        help="comma-separated FORMAT:SCALE (formats: prime, amazon, legal; scale 1 = real size)")
    parser.add_argument("--stages", default=",".join(STAGES), help=f"subset of {', '.join(STAGES)}")
    parser.add_argument("--calls", type=int, default=200, help="timed calls per search kind")
    parser.add_argument("--questions", type=int, default=20, help="offline ARK questions")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument("--heavy-nice", type=int, default=10)
    parser.add_argument("--measured", type=Path, action="append", default=[],
                        help="a summary.json of earlier runs whose stage records join the projection (repeatable)")
    parser.add_argument("--cypher-edge-rows", type=int, default=4_000_000, help="edges a COPY of the Cypher export")
    parser.add_argument("--cypher-pool-mb", type=int, default=1024, help="ladybug's buffer pool while exporting")
    parser.add_argument("--stage", choices=tuple(CHILDREN), help=argparse.SUPPRESS)
    parser.add_argument("--format", help=argparse.SUPPRESS)
    parser.add_argument("--scale", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stage:
        peak_anon, done = [0], threading.Event()
        threading.Thread(target=_sample_anon, args=(done, peak_anon), daemon=True).start()
        figures = CHILDREN[args.stage](args.workdir, args)
        done.set()
        figures["peak_anon_gb"] = round(max(peak_anon[0], _anon_kib()) / 2**20, 3)
        (args.workdir / f"{args.stage}.json").write_text(json.dumps(figures, indent=1))
        return
    runs = [(part.split(":")[0], float(part.split(":")[1])) for part in args.runs.split(",") if part.strip()]
    bad = [fmt for fmt, _ in runs if fmt not in REAL]
    stages = [s for s in args.stages.split(",") if s]
    if bad or set(stages) - set(STAGES):
        parser.error(f"formats must be among {', '.join(REAL)} and stages among {', '.join(STAGES)}")
    missing = [str(path) for path in args.measured if not path.is_file()]
    if missing:
        parser.error(f"--measured: no such file {', '.join(missing)} (a summary.json of an earlier run)")
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="ark-rehearsal-"))
    print(f"data in {workdir}; {os.cpu_count()} CPUs; load average {os.getloadavg()}; "
          f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}", flush=True)
    results = []
    try:
        for fmt, scale in runs:
            folder = workdir / f"{fmt}-{scale}"
            folder.mkdir(parents=True, exist_ok=True)
            for stage in stages:
                results.append(run_stage(stage, fmt, scale, folder, args))
                print(json.dumps({k: v for k, v in results[-1].items() if k != "latency"}), flush=True)
        if results:
            print_table(results)
            (workdir / "summary.json").write_text(json.dumps({"runs": results}, indent=1))
        measured = [r for path in args.measured for r in json.loads(path.read_text())["runs"]]
        projected = project_all(measured + results)
        if results:  # projecting from earlier records alone leaves a work folder's summary as it was
            (workdir / "summary.json").write_text(json.dumps({"runs": results, "projected": projected}, indent=1))
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
