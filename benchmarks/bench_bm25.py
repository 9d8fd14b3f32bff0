"""Benchmark ark.index.BM25Index against tantivy and bm25s on synthetic Zipf corpora, robust to a loaded machine.

Every build and every search round runs in its own subprocess (peak memory, ru_maxrss, is not mixed). The systems
are interleaved: each repetition builds ARK, tantivy (and bm25s, built once: its build is not compared) in turn,
then each repetition runs every system's search round in turn, the order rotating between repetitions. A ratio is
the median over the repetitions of that repetition's ARK / other figure. Search is single-threaded (numba, BLAS,
OpenMP and Rayon pools set to one thread); tantivy's writer uses ``--tantivy-threads`` threads sharing a heap of
``--tantivy-heap-mb`` (stated in the output). Prints, per corpus size: top-20 search median and p99, build peak RSS,
index size on disk, build time, subset scoring of 5,000 candidates vs bm25s (which scores everything, then takes
the subset), the largest score difference from bm25s; and with several sizes, the growth of the median latency.

The same queries at every size: they are drawn from the first ``--query-docs`` documents (default: 1M, or the
smallest size if less), and a smaller corpus is the first documents of a larger one (same seed, generated in blocks),
so a growth compares one query set over corpora of different sizes. Drawn from each whole corpus instead
(``--query-docs 0``; the only way before 27 November 2026), each size gets its own 200 queries, and the medians of
two such samples differ by up to ~40% on the same index: most of a growth figure was which queries were drawn.

    python benchmarks/bench_bm25.py                              # 1M docs x ~50 tokens, 3 repetitions
    python benchmarks/bench_bm25.py --docs 1000000 3000000       # two sizes and the latency growth between them
    python benchmarks/bench_bm25.py --docs 1000000 3000000 --bm25s-max-docs 1000000  # bm25s at 1M only
    python benchmarks/bench_bm25.py --docs 100000 --repeats 1 --skip-bm25s
    python benchmarks/bench_bm25.py --mag-scale 1 --skip-bm25s   # the synthetic MAG graph's 1.87M node documents
    python benchmarks/bench_bm25.py --baseline /tmp/base          # also ARK from another checkout, as ark@base
    python benchmarks/bench_bm25.py --ark-memory-mb 32            # also ARK built within a 32 MiB budget

``--build-repeats`` sets the builds per system apart from the search rounds (``--repeats``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SUBSET_SIZES = (20, 1000, 5000)
SCORE_SAMPLE = 20  # queries whose full score vectors are compared with bm25s
SINGLE_THREAD = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                         "NUMBA_NUM_THREADS", "RAYON_NUM_THREADS")}


# ----------------------------------------------------------------------------- corpus
def _vocabulary(size: int, rng: np.random.Generator) -> list[str]:
    from ark.index import ENGLISH_STOPWORDS

    letters = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)
    words: set[str] = set()
    while len(words) < size:
        n = size - len(words) + 1000
        lengths = rng.integers(3, 11, n)
        raw = letters[rng.integers(0, 26, (n, 10))]
        words.update(bytes(raw[i, : lengths[i]]).decode() for i in range(n))
        words -= ENGLISH_STOPWORDS
    return sorted(words)[:size]


def make_corpus(path: Path, docs: int, vocab: int, doc_len: int, seed: int = 0) -> None:
    """Write ``docs`` lines of Zipf(1)-distributed words (length doc_len +- 20%), streamed in blocks of 100,000
    documents. A last, partial block is drawn whole and cut, so a smaller corpus is the first documents of a larger
    one (the same queries can be drawn from both); whole blocks are drawn as before that was so (27 November 2026),
    so the corpora of 1M, 3M and 10M documents did not change."""
    rng = np.random.default_rng(seed)
    words = _vocabulary(vocab, rng)
    rng.shuffle(words)
    cdf = np.cumsum(1.0 / np.arange(1, vocab + 1))
    cdf /= cdf[-1]
    spread = max(1, doc_len // 5)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as out:
        for start in range(0, docs, 100_000):
            n = min(100_000, docs - start)
            block = rng.integers(doc_len - spread, doc_len + spread + 1, 100_000)
            lengths = block[:n]
            draws = rng.random(int(block.sum()))[: int(lengths.sum())]
            tokens = np.minimum(np.searchsorted(cdf, draws), vocab - 1).tolist()
            bounds = np.concatenate([[0], np.cumsum(lengths)]).tolist()
            out.write("\n".join(" ".join(map(words.__getitem__, tokens[bounds[i] : bounds[i + 1]])) for i in range(n)))
            out.write("\n")
    tmp.rename(path)


def make_mag_corpus(path: Path, scale: float, seed: int = 0) -> int:
    """The node documents of the synthetic MAG graph (``benchmarks/synthetic_mag.py``: 1.87M nodes at scale 1), one
    a line: the node's name, then its properties (the JSON text of a paper's abstract and year); their count."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import synthetic_mag

    graph = Path(tempfile.mkdtemp(prefix="mag-", dir=path.parent))
    try:
        synthetic_mag.generate(graph, scale, seed)
        count, tmp = 0, path.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8") as out:
            for batch in pq.ParquetFile(graph / "nodes.parquet").iter_batches(columns=["name", "properties"]):
                lines = pc.binary_join_element_wise(pc.fill_null(batch.column(0), ""),
                                                    pc.fill_null(batch.column(1), ""), " ")
                lines = pc.replace_substring(lines, "\n", " ")
                out.write("\n".join(lines.to_pylist()) + "\n")
                count += len(lines)
        tmp.rename(path)
    finally:
        shutil.rmtree(graph, ignore_errors=True)
    return count


def make_queries(corpus: Path, count: int, docs: int, seed: int = 1) -> list[str]:
    """Queries of 2-5 distinct words drawn from random documents among the first ``docs`` (so every query matches
    something); the same queries from any corpus whose first ``docs`` documents are the same."""
    rng = np.random.default_rng(seed)
    wanted = set(rng.choice(docs, size=min(count, docs), replace=False).tolist())
    queries = []
    with open(corpus, encoding="utf-8") as f:
        for i, line in enumerate(f):
            if i in wanted:
                words = list(dict.fromkeys(line.split()))
                size = min(len(words), int(rng.integers(2, 6)))
                queries.append(" ".join(rng.choice(words, size=size, replace=False)))
    rng.shuffle(queries)
    return queries


# ----------------------------------------------------------------------------- workers
def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def _dir_size_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def _lines(corpus: Path):
    with open(corpus, encoding="utf-8") as f:
        for line in f:
            yield line.rstrip("\n")


def _time_each(fn, items, cpu: list[float] | None = None) -> list[float]:
    """Wall-clock ms of ``fn(item)`` for each item; with ``cpu``, also the process's CPU ms (a loaded machine
    stretches the wall clock by the time the process waits for a core; the CPU time is what the call costs)."""
    out = []
    for item in items:
        t, c = time.perf_counter(), time.process_time()
        fn(item)
        out.append((time.perf_counter() - t) * 1000)
        if cpu is not None:
            cpu.append((time.process_time() - c) * 1000)
    return out


def _subset_plan(num_docs: int, queries: list[str]) -> dict[int, list[np.ndarray]]:
    rng = np.random.default_rng(2)
    return {s: [rng.choice(num_docs, size=min(s, num_docs), replace=False) for _ in queries] for s in SUBSET_SIZES}


def _stopwords() -> list[str]:
    from ark.index import ENGLISH_STOPWORDS

    return sorted(ENGLISH_STOPWORDS)


def build_ark(args, corpus: Path, index_dir: Path) -> dict:
    from ark.index import BM25Index

    t = time.perf_counter()
    budget = int(args.memory_mb * 2**20) if args.memory_mb else None  # None: the library's default
    index = BM25Index.build(_lines(corpus), k1=1.5, b=0.75, num_docs=args.docs, workdir=index_dir.parent,
                            memory_budget=budget)
    index.save(index_dir)
    return {"build_s": time.perf_counter() - t, "docs": index.num_docs}


def build_bm25s(args, corpus: Path, index_dir: Path) -> dict:
    import bm25s

    docs = list(_lines(corpus))
    t = time.perf_counter()
    retriever = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
    retriever.index(bm25s.tokenize(docs, stopwords=_stopwords(), show_progress=False), show_progress=False)
    retriever.save(index_dir)
    return {"build_s": time.perf_counter() - t, "docs": len(docs)}


def build_tantivy(args, corpus: Path, index_dir: Path) -> dict:
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("body", stored=False)
    index_dir.mkdir()
    t = time.perf_counter()
    index = tantivy.Index(builder.build(), path=str(index_dir))
    writer = index.writer(heap_size=args.tantivy_heap_mb * 2**20, num_threads=args.tantivy_threads)
    for line in _lines(corpus):
        writer.add_document(tantivy.Document(body=line))
    writer.commit()
    writer.wait_merging_threads()
    return {"build_s": time.perf_counter() - t}


def search_ark(args, index_dir: Path, queries: list[str], out: Path) -> dict:
    from ark.index import BM25Index

    index = BM25Index.load(index_dir)
    for q in queries[:5]:
        index.search(q, 20)  # touch the memory map; numba reads its compiled kernel from the cache
    cpu: list[float] = []
    result = {"search_ms": _time_each(lambda q: index.search(q, 20), queries, cpu), "search_cpu_ms": cpu}
    for size, cands in _subset_plan(index.num_docs, queries).items():
        pairs = list(zip(queries, cands, strict=True))
        result[f"subset{size}_ms"] = _time_each(lambda p: index.score(p[0], p[1]), pairs)
    if args.save_scores:
        everything = np.arange(index.num_docs)
        np.save(out / "scores.npy", np.stack([index.score(q, everything) for q in queries[:SCORE_SAMPLE]]))
    return result


def search_bm25s(args, index_dir: Path, queries: list[str], out: Path) -> dict:
    import bm25s

    retriever = bm25s.BM25.load(index_dir, mmap=True)
    qtokens = bm25s.tokenize(queries, stopwords=_stopwords(), return_ids=False, show_progress=False)
    for q in qtokens[:5]:
        retriever.retrieve([q], k=20, show_progress=False)
    cpu: list[float] = []
    result = {"search_ms": _time_each(lambda q: retriever.retrieve([q], k=20, show_progress=False), qtokens, cpu),
              "search_cpu_ms": cpu}
    num_docs = int(retriever.scores["num_docs"])
    for size, cands in _subset_plan(num_docs, queries).items():  # no subset scoring: score all, take the subset
        pairs = list(zip(qtokens, cands, strict=True))
        result[f"subset{size}_ms"] = _time_each(lambda p: retriever.get_scores(p[0])[p[1]], pairs)
    if args.save_scores:
        np.save(out / "scores.npy", np.stack([retriever.get_scores(q) for q in qtokens[:SCORE_SAMPLE]]))
    return result


def search_tantivy(args, index_dir: Path, queries: list[str], out: Path) -> dict:
    import tantivy

    index = tantivy.Index.open(str(index_dir))
    searcher = index.searcher()

    def search(q: str):  # the query's words only: its query language reads punctuation ({}, :, ") as syntax
        return searcher.search(index.parse_query(" ".join(re.findall(r"\w+", q)), ["body"]), 20).hits

    for q in queries[:5]:
        search(q)
    cpu: list[float] = []
    return {"search_ms": _time_each(search, queries, cpu), "search_cpu_ms": cpu}


SOURCE_VARIABLE = "ARK_BENCH_SOURCE"  # the folder a worker imports ARK from
BASELINE = "ark@base"  # ARK from --baseline's source folder (e.g. ``git worktree add /tmp/base main``)
BUDGETED = "ark@"  # ark@32MB: ARK built with memory_budget=32 MiB (--ark-memory-mb); "ark" has the default
BUILDERS = {"ark": build_ark, "bm25s": build_bm25s, "tantivy": build_tantivy}
SEARCHERS = {"ark": search_ark, "bm25s": search_bm25s, "tantivy": search_tantivy}


def run_worker(args) -> None:
    queries = json.loads(args.query_file.read_text())
    if args.phase == "build":
        result = BUILDERS[args.worker](args, args.corpus, args.index)
        result["peak_rss_mb"] = _peak_rss_mb()
        result["size_mb"] = _dir_size_mb(args.index)
    else:
        result = SEARCHERS[args.worker](args, args.index, queries, args.out)
    if args.worker in ("ark", "bm25s"):  # which ARK ran: the parent checks it is the checkout it asked for
        import ark

        result["ark_source"] = str(Path(ark.__file__).resolve().parents[1])
    (args.out / "result.json").write_text(json.dumps(result))


# ----------------------------------------------------------------------------- driver
def _run(args, system: str, phase: str, corpus: Path, query_file: Path, index: Path, out: Path, docs: int,
         save_scores: bool = False) -> dict | None:
    out.mkdir(parents=True, exist_ok=True)
    budget_mb = _budget_mb(system)
    worker = "ark" if system == BASELINE or budget_mb else system
    cmd = [sys.executable, __file__, "--worker", worker, "--phase", phase, "--corpus", str(corpus),
           "--query-file", str(query_file), "--index", str(index), "--out", str(out), "--docs", str(docs),
           "--tantivy-threads", str(args.tantivy_threads), "--tantivy-heap-mb", str(args.tantivy_heap_mb)]
    cmd += ["--memory-mb", budget_mb] if budget_mb else []
    cmd += ["--save-scores"] if save_scores else []
    source = args.baseline if system == BASELINE else REPO
    env = {**os.environ, SOURCE_VARIABLE: str(source), **(SINGLE_THREAD if phase == "search" else {})}
    proc = subprocess.run(cmd, env=env)
    if proc.returncode != 0:
        print(f"  {system} {phase} failed (exit {proc.returncode})", flush=True)
        return None
    result = json.loads((out / "result.json").read_text())
    ran = result.pop("ark_source", None)
    if ran is not None and Path(ran) != Path(source).resolve():
        raise SystemExit(f"error: {system} {phase} ran ARK from {ran}, not from {Path(source).resolve()}")
    summary = {key: round(float(np.median(v)) if isinstance(v, list) else v, 3) for key, v in result.items()}
    print(f"  {system} {phase}: {json.dumps(summary)} (medians)", flush=True)
    return result


def _budget_mb(system: str) -> str | None:
    """The memory budget (MiB, as text) of a system named ark@<N>MB, else None."""
    if system.startswith(BUDGETED) and system.endswith("MB"):
        return system.removeprefix(BUDGETED).removesuffix("MB")
    return None


def _rotated(systems: list[str], rep: int) -> list[str]:
    return systems[rep % len(systems):] + systems[: rep % len(systems)]


def _corpus(args, docs: int) -> tuple[Path, int]:
    """The corpus file (generated once into the work folder) and its number of documents."""
    if args.mag_scale:
        corpus = args.workdir / f"mag-{args.mag_scale}.txt"
        count = corpus.with_suffix(".count")
    else:
        corpus = args.workdir / f"corpus-{docs}-{args.vocab}-{args.doc_len}.txt"
    if not corpus.exists():
        t = time.perf_counter()
        print(f"generating corpus {corpus} ...", flush=True)
        if args.mag_scale:
            count.write_text(str(make_mag_corpus(corpus, args.mag_scale)))
        else:
            make_corpus(corpus, docs, args.vocab, args.doc_len)
        print(f"  done in {time.perf_counter() - t:.0f} s", flush=True)
    return corpus, int(count.read_text()) if args.mag_scale else docs


def query_docs(args, docs: int) -> int:
    """How many first documents of a ``docs``-document corpus the queries are drawn from: ``--query-docs`` (0: all
    of them), at most the smallest size of the run and ``docs``; a MAG corpus draws from all its documents."""
    if args.mag_scale or not args.query_docs:
        return docs
    return min(args.query_docs, min(args.docs), docs)


def bench_size(args, docs: int, systems: list[str]) -> dict:
    """Build and search every system ``args.repeats`` times at ``docs`` documents; the per-repetition figures."""
    corpus, docs = _corpus(args, docs)
    source = query_docs(args, docs)
    query_file = corpus.with_suffix(f".q{args.queries}-from{source}-seed{args.query_seed}.json")
    if not query_file.exists():
        query_file.write_text(json.dumps(make_queries(corpus, args.queries, source, args.query_seed)))
    run_dir = Path(tempfile.mkdtemp(prefix=f"run-{docs}-", dir=args.workdir))
    builds: dict[str, list[dict]] = {s: [] for s in systems}
    searches: dict[str, list[dict]] = {s: [] for s in systems}
    kept = {s: run_dir / f"{s}-index" for s in systems}
    try:
        for rep in range(args.build_repeats or args.repeats):
            for system in _rotated(systems, rep):
                if system == "bm25s" and rep > 0:
                    continue  # built once, for its search and subset scoring; its build is not compared
                index = kept[system] if rep == 0 else run_dir / f"{system}-index-{rep}"
                print(f"[{docs:,}] build {system} #{rep + 1} ({_load()})", flush=True)
                result = _run(args, system, "build", corpus, query_file, index, run_dir / f"out-{system}-b{rep}", docs)
                if result:
                    builds[system].append(result)
                if rep > 0:
                    shutil.rmtree(index, ignore_errors=True)
        for rep in range(args.repeats):
            for system in _rotated(systems, rep):
                if not kept[system].exists():
                    continue
                print(f"[{docs:,}] search {system} #{rep + 1} ({_load()})", flush=True)
                out = run_dir / f"out-{system}-s{rep}"
                result = _run(args, system, "search", corpus, query_file, kept[system], out, docs,
                              save_scores=rep == 0 and system in ("ark", "bm25s"))
                if result:
                    searches[system].append(result)
        max_diff = None
        if builds.get("bm25s") and (run_dir / "out-ark-s0" / "scores.npy").exists():
            a = np.load(run_dir / "out-ark-s0" / "scores.npy")
            b = np.load(run_dir / "out-bm25s-s0" / "scores.npy")
            max_diff = float(np.abs(a - b).max())
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    return {"docs": docs, "builds": builds, "searches": searches, "max_diff": max_diff, "load": _load()}


# ----------------------------------------------------------------------------- report
def _med(values: list[float]) -> float | None:
    return float(np.median(values)) if values else None


def _per_rep(runs: list[dict], key: str, stat) -> list[float]:
    return [stat(r[key]) if isinstance(r[key], list) else r[key] for r in runs if key in r]


def _ratio(ark: list[float], other: list[float]) -> float | None:
    pairs = [a / o for a, o in zip(ark, other, strict=False) if o]
    return _med(pairs)


def print_report(result: dict, systems: list[str], args) -> None:
    docs, builds, searches = result["docs"], result["builds"], result["searches"]
    p50, p99 = np.median, (lambda v: np.percentile(v, 99))
    rows = [("build time (s)", builds, "build_s", None, 1), ("build peak RSS (MB)", builds, "peak_rss_mb", None, 0),
            ("index on disk (MB)", builds, "size_mb", None, 0),
            ("top-20 search median (ms)", searches, "search_ms", p50, 2),
            ("top-20 search p99 (ms)", searches, "search_ms", p99, 2),
            ("top-20 search median, CPU (ms)", searches, "search_cpu_ms", p50, 2),
            ("top-20 search p99, CPU (ms)", searches, "search_cpu_ms", p99, 2)]
    rows += [(f"score {s:,} nodes median (ms)", searches, f"subset{s}_ms", p50, 3) for s in SUBSET_SIZES]
    others = [s for s in systems if s != "ark"]
    corpus = (f"synthetic MAG node documents (benchmarks/synthetic_mag.py, scale {args.mag_scale})" if args.mag_scale
              else f"~{args.doc_len} tokens each, Zipf vocabulary of {args.vocab:,}")
    print(f"\n== {docs:,} docs, {corpus}; {args.queries} queries of 2-5 words from the first "
          f"{query_docs(args, docs):,} documents (seed {args.query_seed}); {args.repeats} repetitions (bm25s built "
          f"once); tantivy writer: {args.tantivy_threads} threads, {args.tantivy_heap_mb} MB heap; search "
          f"single-threaded; {result['load']} ({os.cpu_count()} cores)")
    budgeted = [s for s in systems if _budget_mb(s) and "tantivy" in systems]  # each also against tantivy
    print("metric (median of repetitions)".ljust(32) + "".join(s.rjust(11) for s in systems)
          + "".join(f"{'ark/' + s:>13}" for s in others) + "".join(f"{s + '/tantivy':>20}" for s in budgeted))
    for label, runs, key, stat, digits in rows:
        per = {s: _per_rep(runs[s], key, stat) if stat else [r[key] for r in runs[s] if key in r] for s in systems}
        line = label.ljust(32) + "".join(
            (f"{_med(per[s]):,.{digits}f}" if per[s] else "n/a").rjust(11) for s in systems)
        for s in others:
            ratio = _ratio(per["ark"], per[s]) if s != "bm25s" or runs is searches else None
            line += (f"{ratio:.2f}x" if ratio is not None else "n/a").rjust(13)
        for s in budgeted:
            ratio = _ratio(per[s], per["tantivy"])
            line += (f"{ratio:.2f}x" if ratio is not None else "n/a").rjust(20)
        print(line)
    if result["max_diff"] is not None:
        print(f"max |score(ark) - score(bm25s)| over {SCORE_SAMPLE} queries x all docs: {result['max_diff']:.2e}")


def print_growth(results: list[dict], systems: list[str]) -> None:
    """Median top-20 latency growth (wall and CPU) and build peak RSS growth between consecutive sizes."""
    for small, large in zip(results, results[1:], strict=False):
        print(f"\ngrowth {small['docs']:,} -> {large['docs']:,} docs:")
        for key, label in (("search_ms", "median latency, wall"), ("search_cpu_ms", "median latency, CPU")):
            parts = []
            for s in systems:
                a = _med(_per_rep(small["searches"].get(s, []), key, np.median))
                b = _med(_per_rep(large["searches"].get(s, []), key, np.median))
                if a and b:
                    parts.append(f"{s} {a:.2f} -> {b:.2f} ms ({b / a:.2f}x)")
            print(f"  {label}: " + "; ".join(parts))
        rss = []
        for s in systems:
            a = _med([r["peak_rss_mb"] for r in small["builds"].get(s, [])])
            b = _med([r["peak_rss_mb"] for r in large["builds"].get(s, [])])
            if a and b and s != "bm25s":
                rss.append(f"{s} {a:,.0f} -> {b:,.0f} MB (+{b - a:,.0f})")
        print("  build peak RSS: " + "; ".join(rss))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--vocab", type=int, default=200_000)
    parser.add_argument("--doc-len", type=int, default=50)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--query-docs", type=int, default=1_000_000,
                        help="draw the queries from the first this many documents, the same at every size (at most "
                             "the smallest --docs; 0: from each whole corpus, a different sample at each size)")
    parser.add_argument("--query-seed", type=int, default=1, help="the random seed drawing the queries (another "
                                                                   "sample of the same kind)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--build-repeats", type=int, help="builds per system (default: --repeats)")
    parser.add_argument("--baseline", type=Path, help="a source folder of another ARK version, run as " + BASELINE)
    parser.add_argument("--mag-scale", type=float, help="the corpus: the synthetic MAG graph's node documents at "
                        "this scale (1 = 1.87M nodes) instead of the Zipf corpus (--docs ignored)")
    parser.add_argument("--ark-memory-mb", type=float, nargs="*", default=[],
                        help="also build ARK with these memory budgets (MiB), each as its own system ark@<N>MB "
                             "(ark itself keeps the library's default budget)")
    parser.add_argument("--memory-mb", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--skip-bm25s", action="store_true")
    parser.add_argument("--bm25s-max-docs", type=int, help="leave bm25s out above this many documents (its build "
                        "holds the tokenized corpus: ~2.6 GB at 1M)")
    parser.add_argument("--skip-tantivy", action="store_true")
    parser.add_argument("--tantivy-threads", type=int, default=2)
    parser.add_argument("--tantivy-heap-mb", type=int, default=512)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "ark-bench")
    for hidden in ("--worker", "--phase"):
        parser.add_argument(hidden, help=argparse.SUPPRESS)
    for hidden in ("--corpus", "--query-file", "--index", "--out"):
        parser.add_argument(hidden, type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--save-scores", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    # A worker imports ARK from the checkout its parent names (this one, or --baseline's for ark@base); before
    # 27 November 2026 this checkout was put first for workers too, so ark@base ran this checkout's code.
    sys.path.insert(0, os.environ.get(SOURCE_VARIABLE, str(REPO)) if args.worker else str(REPO))
    if args.worker:
        args.docs = args.docs[0]
        run_worker(args)
        return
    if args.repeats < 1:
        parser.error(f"--repeats must be >= 1, got {args.repeats}")
    if args.query_docs < 0:
        parser.error(f"--query-docs must be >= 0 (0: each whole corpus), got {args.query_docs}")
    args.workdir.mkdir(parents=True, exist_ok=True)
    if args.mag_scale:
        args.docs = args.docs[:1]
    systems = ["ark"] + [f"{BUDGETED}{mb:g}MB" for mb in args.ark_memory_mb] + ([BASELINE] if args.baseline else [])
    systems += [] if args.skip_tantivy else ["tantivy"]
    systems += [] if args.skip_bm25s else ["bm25s"]
    results = []
    for docs in args.docs:
        here = [s for s in systems if s != "bm25s" or not args.bm25s_max_docs or docs <= args.bm25s_max_docs]
        results.append(bench_size(args, docs, here))
        print_report(results[-1], here, args)
    if len(results) > 1:
        print_growth(results, systems)


if __name__ == "__main__":
    main()
