"""Graphs that change (issue 34): the cost of an update, of compaction, and of searching through delta segments.

    python benchmarks/graph_update.py [--graph hpo] [--nodes 1000] [--edges 5000] [--queries 200] [--seed 0]
                                      [--cypher] [--minilm]
    python benchmarks/graph_update.py --graph mag [--scale 1.0] [--changes 100000] [--work DIR]

``--graph mag``: the synthetic MAG graph (1.87M nodes at scale 1), 100,000 changes as one update against a target
of 30 s (``benchmarks/graph_update_mag.py`` has the details). Otherwise:

Copies the graph's files to a temporary folder (a built-in graph is built first) and prints, side by side:

- the one-off preparation of the base's BM25 segments (once per base, like a BM25 build);
- an update of ``--nodes`` changed nodes (their text extended with other nodes' words) and ``--edges`` new edges:
  the graph (checked, written, the new version merged; by a process that opens the current version first, and by
  one that holds it open, as a server does) and the BM25 delta segment (``bm25``, fielded, ARK's
  default; ``bm25-rel`` beside it, whose changed documents include every neighbour of a changed node), against the
  target of 1 s for graph + BM25, and a full rebuild of the same BM25 for comparison;
- opening a version (the CSR of base + deltas built in memory);
- global search and neighbour scoring latency with 0, 1 and 10 deltas (10 updates of a tenth the size each);
- compaction;
- with ``--cypher`` and ``--minilm``, the versioned Cypher database and the dense index with the real MiniLM
  embedder after the same update (``benchmarks/graph_update_cypher.py``).

Timings swing with the machine's load: run it on a quiet machine for figures to quote, and say the load.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import pyarrow as pa

from ark.graph import KnowledgeGraph, load_graph
from ark.graph.versioning import compact_graph, update_graph
from ark.graph.versioning.delta import EDGE_SCHEMA, GraphDelta, node_rows
from ark.index import open_index

GRAPH_FILES = ("graph.json", "nodes.arrow", "node_type_codes.npy", "indptr.npy", "neighbors.npy", "codes.npy")


def copy_graph(source: Path, target: Path) -> None:
    target.mkdir(parents=True)
    for name in GRAPH_FILES:
        shutil.copy2(source / name, target / name)


def make_delta(graph: KnowledgeGraph, rng: random.Random, n_nodes: int, n_edges: int) -> GraphDelta:
    """``n_nodes`` existing nodes with their text extended by another node's name; ``n_edges`` new edges."""
    picked = sorted(rng.sample(range(graph.num_nodes), n_nodes))
    rows = node_rows(graph).take(pa.array(picked)).to_pylist()
    for row in rows:
        row["text"] = row["text"] + "\nSee also: " + graph.name(rng.randrange(graph.num_nodes))
    relations = graph.relation_types
    edges = {(graph.node_id(rng.randrange(graph.num_nodes)), graph.node_id(rng.randrange(graph.num_nodes)),
              rng.choice(relations)) for _ in range(n_edges)}
    table = pa.Table.from_pylist(rows, schema=node_rows(graph).schema)
    edge_rows = sorted(edges)
    edge_table = pa.table({"source": [e[0] for e in edge_rows], "target": [e[1] for e in edge_rows],
                           "relation": [e[2] for e in edge_rows]}, schema=EDGE_SCHEMA)
    return GraphDelta(table, edge_table, EDGE_SCHEMA.empty_table(), pa.array([], pa.string()))


CPU: dict[str, float] = {}  # CPU seconds of the last timed call, by wall time (load does not inflate it)


def timed(function, *args, **kwargs):
    started, cpu = time.perf_counter(), time.process_time()
    value = function(*args, **kwargs)
    took = time.perf_counter() - started
    CPU["last"] = time.process_time() - cpu
    return value, took


def cpu_note() -> str:
    return f" (CPU {CPU['last']:.2f} s)"


def search_latency(graph: KnowledgeGraph, queries: list[str], centres: list[int]) -> tuple[float, float]:
    """Median ms of a global top-10 search and of scoring one node's neighbours, over the queries."""
    index = open_index(graph, "bm25", progress=False)
    searches, scorings = [], []
    for query, centre in zip(queries, centres, strict=True):
        _, took = timed(index.search, query, 10)
        searches.append(took)
        _, took = timed(index.score, query, graph.neighbors(centre).nodes)
        scorings.append(took)
    return 1000 * statistics.median(searches), 1000 * statistics.median(scorings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--graph", default="hpo")
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--edges", type=int, default=5000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scale", type=float, default=1.0, help="--graph mag: the size (1 = STaRK-MAG's)")
    parser.add_argument("--changes", type=int, default=100_000, help="--graph mag: changes in the one update")
    parser.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "ark-graph-update-mag"),
                        help="--graph mag: the folder caching the generated graph, its BM25 and the run's copy")
    parser.add_argument("--kinds", nargs="+", default=["bm25", "bm25-rel"], choices=["bm25", "bm25-rel"],
                        help="BM25 kinds whose segments are timed (bm25-rel re-indexes neighbours: slow on HPO)")
    parser.add_argument("--cypher", action="store_true", help="also the Cypher database: copy + update vs export")
    parser.add_argument("--minilm", action="store_true",
                        help="also the dense index with all-MiniLM-L6-v2 (the graph's cached one copied first)")
    parser.add_argument("--update-only", action="store_true",
                        help="--graph mag: only the update and its BM25 segment (no base segment, versions)")
    args = parser.parse_args()
    if args.graph == "mag":
        from graph_update_mag import run_mag

        print_rows(run_mag(args, search_latency))
        return
    from graph_update_cypher import copy_dense_caches, cypher_rows, minilm_rows

    from ark.loaders import open_graph

    source = open_graph(args.graph)
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="ark-graph-update-") as tmp:
        folder = Path(tmp) / "graph"
        copy_graph(Path(source.path), folder)
        if args.minilm:
            copy_dense_caches(Path(source.path), folder)
        base = load_graph(folder)
        queries = [base.name(rng.randrange(base.num_nodes)) for _ in range(args.queries)]
        centre_ids = [base.node_id(rng.randrange(base.num_nodes)) for _ in range(args.queries)]
        rows = [("graph", repr(base))]
        _, took = timed(open_index, base, "bm25", progress=False)
        rows.append(("BM25 build of the base (bm25, fielded)", f"{took:.2f} s"))
        zero = search_latency(base, queries, [base.index_of(x) for x in centre_ids])
        delta = make_delta(base, rng, args.nodes, args.edges)
        cold = Path(tmp) / "cold"
        copy_graph(folder, cold)
        _, cold_s = timed(update_graph, cold, delta)  # opens the current version first
        cold_cpu = cpu_note()
        shutil.rmtree(cold)
        updated, graph_s = timed(update_graph, folder, delta, current=base)  # a process holding it open
        graph_cpu, graph_cpu_s = cpu_note(), CPU["last"]
        for kind in args.kinds:  # the base segments: once per base
            _, took = timed(open_index, load_graph(folder), kind, progress=False)
            rows.append((f"base segment of {kind} (once per base; includes the first delta's)", f"{took:.2f} s"))
        shutil.rmtree(folder / "deltas" / "000001" / "index")
        _, bm25_s = timed(open_index, updated, "bm25", progress=False)
        bm25_cpu, bm25_cpu_s = cpu_note(), CPU["last"]
        if "bm25-rel" in args.kinds:
            _, rel_s = timed(open_index, updated, "bm25-rel", progress=False)
            rows.append(("update: bm25-rel delta segment (neighbours re-indexed too)", f"{rel_s:.2f} s{cpu_note()}"))
        rows.append((f"update: {args.nodes:,} changed nodes + {args.edges:,} edges, graph (opened first)",
                     f"{cold_s:.2f} s{cold_cpu}"))
        rows.append((f"update: {args.nodes:,} changed nodes + {args.edges:,} edges, graph (held open)",
                     f"{graph_s:.2f} s{graph_cpu}"))
        rows.append(("update: BM25 delta segment (bm25)", f"{bm25_s:.2f} s{bm25_cpu}"))
        total = graph_s + bm25_s
        rows.append(("update: graph + BM25 (target <= 1 s)", f"{total:.2f} s {'met' if total <= 1 else 'MISSED'} "
                     f"(CPU {graph_cpu_s + bm25_cpu_s:.2f} s)"))
        rebuilt = load_graph(folder)
        rebuilt.path = None  # in memory: a full rebuild of the same index
        _, took = timed(open_index, rebuilt, "bm25", progress=False)
        rows.append(("full BM25 rebuild of the same version (for comparison)", f"{took:.2f} s{cpu_note()}"))
        rows += (cypher_rows(folder, updated, timed) if args.cypher else []) + (
            minilm_rows(base, updated, args.nodes) if args.minilm else [])
        _, took = timed(load_graph, folder)
        rows.append(("open version 1 (base + 1 delta merged in memory)", f"{took:.2f} s"))
        one = search_latency(updated, queries, [updated.index_of(x) for x in centre_ids])
        current = updated
        for _ in range(9):
            current = update_graph(folder, make_delta(current, rng, args.nodes // 10, args.edges // 10),
                                   current=current)
            open_index(current, "bm25", progress=False)  # as ark graph update does
        graph10, took = timed(load_graph, folder)
        rows.append(("open version 10 (base + 10 deltas merged in memory)", f"{took:.2f} s"))
        _, took = timed(open_index, graph10, "bm25", progress=False)
        rows.append(("open the BM25 of version 10 (11 segments, cached)", f"{took:.2f} s"))
        ten = search_latency(graph10, queries, [graph10.index_of(x) for x in centre_ids])
        for label, (search, score) in (("0 deltas", zero), ("1 delta", one), ("10 deltas", ten)):
            rows.append((f"search top-10 / score neighbours, {label} (median ms)", f"{search:.2f} / {score:.2f}"))
        _, took = timed(compact_graph, folder)
        rows.append(("compaction of version 10 into a new base", f"{took:.2f} s"))
        print_rows(rows)


def print_rows(rows: list[tuple[str, str]]) -> None:
    width = max(len(r[0]) for r in rows)
    for label, value in rows:
        print(f"{label:<{width}}  {value}")


if __name__ == "__main__":
    main()
