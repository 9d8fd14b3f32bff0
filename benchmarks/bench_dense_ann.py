"""Approximate dense search (faiss IVF-Flat, ``ark.index.ann``) against exact search, with HNSW for comparison.

    python benchmarks/bench_dense_ann.py [--synthetic 1000000] [--queries 500] [--hnsw-max-docs 2000000]

Two corpora:

- **HPO**: the real all-MiniLM-L6-v2 embeddings of the 36,853 HPO nodes, read from the dense index cached beside the
  ``hpo`` graph (``$ARK_HOME/graphs/hpo/index/dense-*``; nothing is re-embedded). Queries: the 441 patient
  descriptions of ``phenopackets-dev.jsonl`` embedded with the same model (real text queries), and the normalised
  sums of random pairs of node embeddings.
- **Synthetic**: ``--synthetic`` unit vectors in 384 dimensions from a two-level Gaussian mixture, deterministic in
  ``--seed``: 64 topic directions on the unit sphere; 2,048 cluster centres, each a topic direction plus noise (so
  clusters of one topic overlap), with Zipf-distributed cluster sizes (weight ∝ 1/rank); a point is its centre plus
  isotropic noise, normalised (cosine to its centre about 0.7, like a MiniLM document to its closest neighbours).
  Queries are fresh draws from the same mixture, not in the index.

For each corpus it prints build time, query latency (median, p99, one query at a time) and recall@20 against exact
search for: exact numpy search (``embeddings @ q`` + top-k, the path ``DenseIndex`` keeps for small corpora),
``IVFIndex`` (nlist ~ sqrt(n), nprobe calibrated at build time to recall@20 >= 0.99 on pair queries) and faiss HNSW
(M=32, efConstruction=80, the smallest efSearch in 16..512 reaching recall@20 >= 0.98 on the evaluation queries
themselves, which favours HNSW). Load averages are printed with every corpus.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import time
from pathlib import Path

import numpy as np

from ark.config import ark_home
from ark.index.ann import IVFIndex, _faiss, calibration_queries, exact_top_k, recall_at_k
from ark.index.topk import top_k

K = 20


def hpo_embeddings() -> np.ndarray:
    """The cached MiniLM embeddings of the hpo graph's nodes (the dense index with default settings)."""
    for manifest in sorted(glob.glob(str(ark_home() / "graphs" / "hpo" / "index" / "dense-*" / "manifest.json"))):
        settings = json.loads(Path(manifest).read_text())["settings"]
        if settings.get("fields") == {} and settings.get("model") == "all-MiniLM-L6-v2":
            return np.load(Path(manifest).parent / "embeddings.npy", mmap_mode="r")
    raise SystemExit("no cached dense index of the hpo graph: run `ark retrieve hpo --method dense ...` once")


def phenopacket_queries() -> np.ndarray:
    from ark.index.dense import load_encoder

    shared = Path(os.environ.get("ARK_SHARED", Path(__file__).resolve().parents[2] / "shared"))
    path = shared / "data" / "phenopackets-dev.jsonl"
    if not path.is_file():
        print(f"(no {path}: set ARK_SHARED to the folder holding data/phenopackets-dev.jsonl; text queries skipped)")
        return np.zeros((0, 384), dtype=np.float32)
    texts = [json.loads(line)["query"] for line in path.read_text().splitlines() if line.strip()]
    encoder = load_encoder(device="cpu")
    return encoder.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True).astype(np.float32)


def synthetic(n: int, dim: int, seed: int, block: int = 100_000) -> tuple[np.ndarray, callable]:
    """``n`` mixture vectors (see the module doc) and a function drawing fresh queries from the same mixture."""
    rng = np.random.default_rng(seed)
    topics = rng.standard_normal((64, dim))
    topics /= np.linalg.norm(topics, axis=1, keepdims=True)
    centres = topics[rng.integers(0, 64, 2048)] + 0.8 * rng.standard_normal((2048, dim)) / np.sqrt(dim)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    weights = 1.0 / np.arange(1, 2049)
    weights /= weights.sum()

    def draw(count: int, stream: int) -> np.ndarray:
        out = np.empty((count, dim), dtype=np.float32)
        for start in range(0, count, block):
            local = np.random.default_rng([seed, stream, start])
            size = min(block, count - start)
            points = centres[local.choice(2048, size, p=weights)] + local.standard_normal((size, dim)) / np.sqrt(dim)
            out[start:start + size] = points / np.linalg.norm(points, axis=1, keepdims=True)
        return out

    return draw(n, 0), lambda count: draw(count, 1)


def latencies(search, queries: np.ndarray) -> tuple[np.ndarray, list[float]]:
    found, times = [], []
    for query in queries:
        started = time.perf_counter()
        ids = search(query)
        times.append((time.perf_counter() - started) * 1000)
        found.append(np.pad(ids[:K], (0, K - len(ids[:K])), constant_values=-1))
    return np.stack(found), times


def row(name: str, build_s: float, times: list[float], recall: float | None, note: str = "") -> str:
    median, p99 = np.percentile(times, [50, 99])
    recall_text = "-" if recall is None else f"{recall:.4f}"
    return (f"  {name:<26} build {build_s:8.1f} s   query median {median:8.2f} ms  p99 {p99:8.2f} ms   "
            f"recall@{K} {recall_text}  {note}")


def evaluate(label: str, vectors: np.ndarray, query_sets: dict[str, np.ndarray], hnsw: bool, seed: int) -> None:
    faiss = _faiss()
    print(f"\n== {label}: {len(vectors):,} x {vectors.shape[1]}; load average {os.getloadavg()}; "
          f"faiss threads {faiss.omp_get_max_threads()}")
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    truths = {name: exact_top_k(vectors, q, K) for name, q in query_sets.items()}
    everything = np.concatenate(list(query_sets.values()))

    _, times = latencies(lambda q: top_k(np.arange(len(vectors)), vectors @ q, K)[0], everything[:100])
    print(row("exact (numpy)", 0.0, times, 1.0, f"({len(times)} queries)"))

    started = time.perf_counter()
    ivf = IVFIndex.build(vectors, seed=seed)
    build = time.perf_counter() - started
    for name, queries in query_sets.items():
        found, times = latencies(lambda q: ivf.search(vectors, q, K)[0], queries)
        print(row(f"IVF-Flat [{name}]", build, times, recall_at_k(found, truths[name]),
                  f"nlist {ivf.nlist}, nprobe {ivf.nprobe} (calibrated: {ivf.meta['calibration']['recall']})"))

    if not hnsw:
        print("  HNSW: skipped (--hnsw-max-docs)")
        return
    started = time.perf_counter()
    index = faiss.IndexHNSWFlat(vectors.shape[1], 32, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = 80
    index.add(vectors)
    build = time.perf_counter() - started
    for name, queries in query_sets.items():
        for ef in (16, 32, 64, 128, 256, 512):
            index.hnsw.efSearch = ef
            found, times = latencies(lambda q: index.search(q.reshape(1, -1), K)[1][0], queries)
            recall = recall_at_k(found, truths[name])
            if recall >= 0.98 or ef == 512:
                break
        print(row(f"HNSW M=32 [{name}]", build, times, recall, f"efSearch {ef}"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--synthetic", type=int, default=1_000_000, help="synthetic vectors (0: skip)")
    parser.add_argument("--queries", type=int, default=500, help="pair / synthetic queries per corpus")
    parser.add_argument("--hnsw-max-docs", type=int, default=2_000_000, help="skip HNSW above this corpus size")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    hpo = np.asarray(hpo_embeddings(), dtype=np.float32)
    sets = {"phenopacket text": phenopacket_queries(), "node pairs": calibration_queries(hpo, args.queries, 12345)}
    evaluate("HPO, all-MiniLM-L6-v2 node embeddings", hpo, {k: v for k, v in sets.items() if len(v)},
             len(hpo) <= args.hnsw_max_docs, args.seed)
    if args.synthetic:
        started = time.perf_counter()
        vectors, fresh = synthetic(args.synthetic, 384, args.seed)
        print(f"\n(generated {len(vectors):,} synthetic vectors in {time.perf_counter() - started:.1f} s)")
        evaluate("synthetic clustered vectors", vectors, {"fresh draws": fresh(args.queries)},
                 len(vectors) <= args.hnsw_max_docs, args.seed)


if __name__ == "__main__":
    main()
