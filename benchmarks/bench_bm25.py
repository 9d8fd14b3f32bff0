"""Benchmark ark.index.BM25Index against bm25s and tantivy on a synthetic Zipf corpus.

Each system runs in its own subprocess so peak memory (ru_maxrss) is not mixed. Prints build time, peak RSS,
index size on disk, load time, top-20 search latency, subset-scoring latency, ratios and the largest score
difference from bm25s (same tokens, same k1/b, method "lucene").

    python benchmarks/bench_bm25.py                 # 1M docs x ~50 tokens, 200k-term Zipf vocabulary
    python benchmarks/bench_bm25.py --docs 100000 --skip-tantivy
    python benchmarks/bench_bm25.py --big           # 2M docs / ~200M tokens: ARK build time + peak memory only
"""

from __future__ import annotations

import argparse
import json
import os
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
    """Write ``docs`` lines of Zipf(1)-distributed words (length doc_len +- 20%), streamed in blocks."""
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
            lengths = rng.integers(doc_len - spread, doc_len + spread + 1, n)
            tokens = np.minimum(np.searchsorted(cdf, rng.random(int(lengths.sum()))), vocab - 1).tolist()
            bounds = np.concatenate([[0], np.cumsum(lengths)]).tolist()
            out.write("\n".join(" ".join(map(words.__getitem__, tokens[bounds[i] : bounds[i + 1]])) for i in range(n)))
            out.write("\n")
    tmp.rename(path)


def make_queries(corpus: Path, count: int, docs: int, seed: int = 1) -> list[str]:
    """Queries of 2-5 distinct words drawn from random documents (so every query matches something)."""
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


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def _dir_size_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def _lines(corpus: Path):
    with open(corpus, encoding="utf-8") as f:
        for line in f:
            yield line.rstrip("\n")


def _time_each(fn, items) -> list[float]:
    out = []
    for item in items:
        t = time.perf_counter()
        fn(item)
        out.append((time.perf_counter() - t) * 1000)
    return out


def _subset_plan(num_docs: int, queries: list[str]) -> dict[int, list[np.ndarray]]:
    rng = np.random.default_rng(2)
    return {s: [rng.choice(num_docs, size=min(s, num_docs), replace=False) for _ in queries] for s in SUBSET_SIZES}


def worker_ark(args, corpus: Path, queries: list[str], out: Path) -> dict:
    sys.path.insert(0, str(REPO))
    from ark.index import BM25Index

    t, cpu = time.perf_counter(), _cpu_s()
    index = BM25Index.build(_lines(corpus), k1=1.5, b=0.75, num_docs=args.docs)
    build = time.perf_counter() - t
    result = {"build_s": build, "build_cpu_s": _cpu_s() - cpu, "peak_rss_mb": _peak_rss_mb(),
              "docs": index.num_docs}
    if args.big:
        return result
    index.save(out / "index")
    result["size_mb"] = _dir_size_mb(out / "index")
    del index
    t = time.perf_counter()
    index = BM25Index.load(out / "index")
    result["load_s"] = time.perf_counter() - t
    for q in queries[:5]:
        index.search(q, 20)  # touch the memory map
    result["search_ms"] = _time_each(lambda q: index.search(q, 20), queries)
    plan = _subset_plan(index.num_docs, queries)
    for size, cands in plan.items():
        pairs = list(zip(queries, cands, strict=True))
        result[f"subset{size}_ms"] = _time_each(lambda p: index.score(p[0], p[1]), pairs)
    everything = np.arange(index.num_docs)
    np.save(out / "scores.npy", np.stack([index.score(q, everything) for q in queries[:SCORE_SAMPLE]]))
    return result


def worker_bm25s(args, corpus: Path, queries: list[str], out: Path) -> dict:
    import bm25s

    from ark.index import ENGLISH_STOPWORDS

    stopwords = sorted(ENGLISH_STOPWORDS)
    docs = list(_lines(corpus))
    t, cpu = time.perf_counter(), _cpu_s()
    tokens = bm25s.tokenize(docs, stopwords=stopwords, show_progress=False)
    retriever = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
    retriever.index(tokens, show_progress=False)
    build = time.perf_counter() - t
    result = {"build_s": build, "build_cpu_s": _cpu_s() - cpu, "peak_rss_mb": _peak_rss_mb(), "docs": len(docs)}
    del docs, tokens
    retriever.save(out / "index")
    result["size_mb"] = _dir_size_mb(out / "index")
    del retriever
    t = time.perf_counter()
    retriever = bm25s.BM25.load(out / "index", mmap=True)
    result["load_s"] = time.perf_counter() - t
    qtokens = bm25s.tokenize(queries, stopwords=stopwords, return_ids=False, show_progress=False)
    for q in qtokens[:5]:
        retriever.retrieve([q], k=20, show_progress=False)
    result["search_ms"] = _time_each(lambda q: retriever.retrieve([q], k=20, show_progress=False), qtokens)
    plan = _subset_plan(result["docs"], queries)
    for size, cands in plan.items():  # bm25s has no subset scoring: score everything, then take the subset
        pairs = list(zip(qtokens, cands, strict=True))
        result[f"subset{size}_ms"] = _time_each(lambda p: retriever.get_scores(p[0])[p[1]], pairs)
    np.save(out / "scores.npy", np.stack([retriever.get_scores(q) for q in qtokens[:SCORE_SAMPLE]]))
    return result


def worker_tantivy(args, corpus: Path, queries: list[str], out: Path) -> dict:
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("body", stored=False)
    schema = builder.build()
    (out / "index").mkdir()
    t, cpu = time.perf_counter(), _cpu_s()
    index = tantivy.Index(schema, path=str(out / "index"))
    writer = index.writer(heap_size=512 * 2**20)
    for line in _lines(corpus):
        writer.add_document(tantivy.Document(body=line))
    writer.commit()
    writer.wait_merging_threads()
    build = time.perf_counter() - t
    result = {"build_s": build, "build_cpu_s": _cpu_s() - cpu, "peak_rss_mb": _peak_rss_mb(),
              "size_mb": _dir_size_mb(out / "index")}
    del index, writer
    t = time.perf_counter()
    index = tantivy.Index.open(str(out / "index"))
    searcher = index.searcher()
    result["load_s"] = time.perf_counter() - t

    def search(q: str):
        return searcher.search(index.parse_query(q, ["body"]), 20).hits

    for q in queries[:5]:
        search(q)
    result["search_ms"] = _time_each(search, queries)
    return result


WORKERS = {"ark": worker_ark, "bm25s": worker_bm25s, "tantivy": worker_tantivy}


# ----------------------------------------------------------------------------- report
def _fmt(value, unit="", digits=2) -> str:
    return "n/a" if value is None else f"{value:,.{digits}f}{unit}"


def _median(result: dict | None, key: str) -> float | None:
    if not result or key not in result:
        return None
    return float(np.median(result[key]))


def _p99(result: dict | None, key: str) -> float | None:
    if not result or key not in result:
        return None
    return float(np.percentile(result[key], 99))


def print_report(results: dict[str, dict | None], max_diff: float | None) -> None:
    systems = list(results)
    rows = [
        ("build time (s)", lambda r: r and r.get("build_s"), 1),
        ("build CPU user+sys (s)", lambda r: r and r.get("build_cpu_s"), 1),
        ("peak RSS (MB)", lambda r: r and r.get("peak_rss_mb"), 0),
        ("index on disk (MB)", lambda r: r and r.get("size_mb"), 0),
        ("load time (s)", lambda r: r and r.get("load_s"), 3),
        ("top-20 search median (ms)", lambda r: _median(r, "search_ms"), 2),
        ("top-20 search p99 (ms)", lambda r: _p99(r, "search_ms"), 2),
    ] + [(f"score {s} nodes median (ms)", lambda r, s=s: _median(r, f"subset{s}_ms"), 3) for s in SUBSET_SIZES]
    width = 30
    print("\n" + "metric".ljust(width) + "".join(s.rjust(12) for s in systems)
          + "".join(f"{'ark/' + s:>14}" for s in systems if s != "ark"))
    for label, get, digits in rows:
        values = [get(results[s]) for s in systems]
        line = label.ljust(width) + "".join(_fmt(v, digits=digits).rjust(12) for v in values)
        ark = values[0]
        for v in values[1:]:
            line += (f"{ark / v:.2f}x" if ark is not None and v else "n/a").rjust(14)
        print(line)
    if max_diff is not None:
        print(f"\nmax |score(ark) - score(bm25s)| over {SCORE_SAMPLE} queries x all docs: {max_diff:.2e}")
    bm = results.get("bm25s")
    ark_search, bm_search = _median(results["ark"], "search_ms"), _median(bm, "search_ms")
    if ark_search and bm_search:
        print(f"top-20 search speed-up vs bm25s retrieve: {bm_search / ark_search:.1f}x (ratios above are ark/other)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--vocab", type=int, default=200_000)
    parser.add_argument("--doc-len", type=int, default=50)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--skip-bm25s", action="store_true")
    parser.add_argument("--skip-tantivy", action="store_true")
    parser.add_argument("--big", action="store_true", help="2M docs x 100 tokens: ARK build time and peak memory")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "ark-bench")
    parser.add_argument("--worker", choices=sorted(WORKERS), help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.big:
        args.docs, args.doc_len = 2_000_000, 100
    sys.path.insert(0, str(REPO))

    args.workdir.mkdir(parents=True, exist_ok=True)
    corpus = args.workdir / f"corpus-{args.docs}-{args.vocab}-{args.doc_len}.txt"
    query_file = corpus.with_suffix(f".q{args.queries}.json")

    if args.worker:
        queries = json.loads(query_file.read_text()) if query_file.exists() else []
        result = WORKERS[args.worker](args, corpus, queries, args.out)
        (args.out / "result.json").write_text(json.dumps(result))
        return

    if not corpus.exists():
        t = time.perf_counter()
        print(f"generating corpus {corpus} ...", flush=True)
        make_corpus(corpus, args.docs, args.vocab, args.doc_len)
        print(f"  done in {time.perf_counter() - t:.0f} s", flush=True)
    if not query_file.exists():
        query_file.write_text(json.dumps(make_queries(corpus, args.queries, args.docs)))

    systems = ["ark"] + ([] if args.big or args.skip_bm25s else ["bm25s"]) + (
        [] if args.big or args.skip_tantivy else ["tantivy"])
    results: dict[str, dict | None] = {}
    outs: dict[str, Path] = {}
    for system in systems:
        out = Path(tempfile.mkdtemp(prefix=f"{system}-", dir=args.workdir))
        outs[system] = out
        print(f"running {system} ... ({_load()})", flush=True)
        cmd = [sys.executable, __file__, "--worker", system, "--out", str(out), "--docs", str(args.docs),
               "--vocab", str(args.vocab), "--doc-len", str(args.doc_len), "--queries", str(args.queries),
               "--workdir", str(args.workdir)] + (["--big"] if args.big else [])
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        proc = subprocess.run(cmd, env=env)
        results[system] = json.loads((out / "result.json").read_text()) if proc.returncode == 0 else None
        if results[system] is None:
            print(f"  {system} failed (exit {proc.returncode})")

    print(f"\ncorpus: {args.docs:,} docs, ~{args.doc_len} tokens each, Zipf vocabulary of {args.vocab:,} terms; "
          f"{args.queries} queries of 2-5 words; {_load()} (machine: {os.cpu_count()} cores)")
    if args.big:
        r = results["ark"]
        if r:
            print(f"ARK build: {r['build_s']:.1f} s (CPU user+sys {r['build_cpu_s']:.1f} s), "
                  f"peak RSS {r['peak_rss_mb']:,.0f} MB")
    else:
        max_diff = None
        if results.get("bm25s") and results.get("ark"):
            a, b = np.load(outs["ark"] / "scores.npy"), np.load(outs["bm25s"] / "scores.npy")
            max_diff = float(np.abs(a - b).max())
        print_report(results, max_diff)
    for out in outs.values():
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
