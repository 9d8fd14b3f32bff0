"""Graph store benchmark: build, save, memory-mapped load and neighbor lookups on a synthetic graph.

Default size is 2M nodes and 40M directed edges (4 node types, 6 relations, skewed degrees). Prints build time,
bytes per edge of the adjacency arrays (CSR + type codes; the node text table is reported separately), save and
load times, typed/untyped neighbor-lookup latency (median, p99 over per-call timings) and peak RSS.

    python benchmarks/bench_graph.py [--nodes 2000000] [--edges 40000000] [--lookups 100000] [--out DIR]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ark.graph import KnowledgeGraph, build_graph_from_arrays, load_graph, save_graph

NODE_TYPES = ["gene", "disease", "phenotype", "drug"]
RELATIONS = ["interacts_with", "associated_with", "has_phenotype", "treats", "is_a", "similar_to"]


def synthetic_nodes(n: int, rng: np.random.Generator) -> tuple[pa.Table, np.ndarray]:
    """Node table with ids ``n0..``, names, short texts and empty properties, built column-wise in Arrow."""
    numbers = pc.cast(pa.array(np.arange(n)), pa.string())
    ids = pc.binary_join_element_wise("n", numbers, "")
    type_codes = rng.integers(0, len(NODE_TYPES), n).astype(np.int16)
    type_names = pa.array(NODE_TYPES).take(pa.array(type_codes.astype(np.int32)))
    names = pc.binary_join_element_wise("entity ", numbers, "")
    texts = pc.binary_join_element_wise(names, type_names, " a synthetic ")
    table = pa.table(
        {"id": ids, "name": names, "text": texts, "properties": pa.array(["{}"] * n, pa.string())}
    )
    return table, type_codes


def synthetic_edges(n: int, m: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Edges whose endpoints follow a skewed (power-law-like) popularity over a random node permutation."""
    permutation = rng.permutation(n)
    # u**3 puts much of the mass on low ranks: rank r has density ~ r^(-2/3), a few hubs with huge degree.
    src = permutation[(n * rng.random(m) ** 3).astype(np.int64)]
    dst = rng.integers(0, n, m)
    rel = rng.integers(0, len(RELATIONS), m).astype(np.int16)
    return src, dst, rel


def latencies(graph: KnowledgeGraph, nodes: np.ndarray, relation) -> np.ndarray:
    timings = np.empty(len(nodes), dtype=np.int64)
    clock = time.perf_counter_ns
    for k, node in enumerate(nodes.tolist()):
        start = clock()
        graph.neighbors(node, relation)
        timings[k] = clock() - start
    return timings


def describe(label: str, timings_ns: np.ndarray) -> str:
    median, p99 = np.percentile(timings_ns, [50, 99]) / 1000
    return f"{label:<34} median {median:8.2f} µs   p99 {p99:8.2f} µs"


def peak_rss_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # Linux reports KiB


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=2_000_000)
    parser.add_argument("--edges", type=int, default=40_000_000)
    parser.add_argument("--lookups", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="directory for the saved graph (default: temp)")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)

    start = time.perf_counter()
    nodes, type_codes = synthetic_nodes(args.nodes, rng)
    src, dst, rel = synthetic_edges(args.nodes, args.edges, rng)
    print(f"generated {args.nodes:,} nodes, {args.edges:,} edges in {time.perf_counter() - start:.1f} s")

    start = time.perf_counter()
    graph = build_graph_from_arrays(nodes, type_codes, NODE_TYPES, src, dst, rel, RELATIONS, {"name": "bench"})
    build_s = time.perf_counter() - start
    del src, dst, rel
    adjacency = sum(a.nbytes for a in (graph.indptr, graph.neighbor_array, graph.code_array, graph.node_type_codes))
    print(f"build_graph_from_arrays            {build_s:8.2f} s   ({graph.num_edges:,} distinct edges)")
    print(f"adjacency bytes per edge           {adjacency / graph.num_edges:8.2f} B   ({adjacency / 2**20:,.0f} MiB)")
    print(f"node table (ids, names, text)      {graph.nodes.nbytes / 2**20:8.0f} MiB")
    print(f"peak RSS after build               {peak_rss_gib():8.2f} GiB")

    out_root = args.out or Path(tempfile.mkdtemp(prefix="ark-bench-"))
    target = out_root / "graph"
    try:
        start = time.perf_counter()
        save_graph(graph, target)
        print(f"save                               {time.perf_counter() - start:8.2f} s")
        sample = rng.integers(0, args.nodes, args.lookups)
        relation_codes = rng.integers(0, len(RELATIONS), args.lookups)
        del graph
        start = time.perf_counter()
        loaded = load_graph(target)
        print(f"load (memory-mapped)               {time.perf_counter() - start:8.3f} s")
        start = time.perf_counter()
        loaded.neighbors(0)
        total = int(np.asarray(loaded.neighbor_array[:: 4096]).sum())  # touch pages across the array
        print(f"first lookup + page sweep          {time.perf_counter() - start:8.3f} s   (checksum {total % 97})")
        latencies(loaded, sample[:1000], None)  # warm-up
        print(describe("untyped neighbors(i)", latencies(loaded, sample, None)))
        typed = np.empty(args.lookups, dtype=np.int64)
        clock = time.perf_counter_ns
        for k, (node, code) in enumerate(zip(sample.tolist(), relation_codes.tolist(), strict=True)):
            begin = clock()
            loaded.neighbors(node, code)
            typed[k] = clock() - begin
        print(describe("typed neighbors(i, code)", typed))
        names = [RELATIONS[c] for c in relation_codes.tolist()]
        for k, (node, name) in enumerate(zip(sample.tolist(), names, strict=True)):
            begin = clock()
            loaded.neighbors(node, name)
            typed[k] = clock() - begin
        print(describe("typed neighbors(i, 'name')", typed))
        for k, (node, code) in enumerate(zip(sample.tolist(), relation_codes.tolist(), strict=True)):
            begin = clock()
            loaded.neighbors(node, code, "out")
            typed[k] = clock() - begin
        print(describe("typed + direction neighbors(i,c,out)", typed))
        degrees = np.diff(np.asarray(loaded.indptr))
        print(f"degree: mean {degrees.mean():.1f}, max {degrees.max():,}, p99 {np.percentile(degrees, 99):.0f}")
        print(f"peak RSS (whole run)               {peak_rss_gib():8.2f} GiB")
    finally:
        if args.out is None:
            shutil.rmtree(out_root, ignore_errors=True)


if __name__ == "__main__":
    main()
