"""Cypher latency on the HPO graph, and what the code sandbox adds on top (needs the ``graphdb`` extra).

    python benchmarks/bench_cypher.py [--repeats 200] [--sandboxes 10] [--seed 0]

Prints the median and p99 wall time of one-hop and two-hop queries through the embedded ladybug engine, the
first-call cost of a sandbox (start the worker, open the database inside, run one statement) and the warm-call
overhead (a call that does nothing, and a one-hop query through ``cypher()`` minus the same query run directly),
with the database opened inside the sandbox ("local") and with queries sent back to the parent ("callback").
Target: warm-call overhead <= 100 ms.
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np
from rich.console import Console
from rich.table import Table

from ark.graphdb.export import ladybug_database
from ark.graphdb.ladybug_engine import LadybugEngine
from ark.loaders import open_graph
from ark.sandbox import CodeSandbox, SandboxLimits

WARM_TARGET_MS = 100.0

QUERIES = {
    "one-hop: phenotypes of a disease":
        ("MATCH (d:disease {id: $id})-[:has_phenotype]->(p:phenotype) RETURN p.name", "disease"),
    "one-hop: diseases with a phenotype (count)":
        ("MATCH (d:disease)-[:has_phenotype]->(p:phenotype {id: $id}) RETURN count(d)", "phenotype"),
    "two-hop: phenotypes of a disease's genes (count)":
        ("MATCH (d:disease {id: $id})-[:associated_gene]->(g:gene)-[:has_phenotype]->(p:phenotype) "
         "RETURN count(DISTINCT p)", "disease"),
    "two-hop: genes of diseases with a phenotype":
        ("MATCH (p:phenotype {id: $id})<-[:has_phenotype]-(d:disease)-[:associated_gene]->(g:gene) "
         "RETURN DISTINCT g.name LIMIT 100", "phenotype"),
}


def stats(times_ms: list[float]) -> tuple[float, float]:
    return float(np.median(times_ms)), float(np.percentile(times_ms, 99))


class Forwarding:
    """Presents the engine as a remote one, so the sandbox sends queries back to the parent (callback mode)."""

    dialect = "neo4j"

    def __init__(self, inner: LadybugEngine) -> None:
        self.inner, self.schema = inner, inner.schema

    def query(self, *args, **kwargs):
        return self.inner.query(*args, **kwargs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--sandboxes", type=int, default=10, help="fresh sandboxes timed for the first call")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    console = Console(width=110)

    graph = open_graph("hpo")
    started = time.perf_counter()
    built = ladybug_database(graph, progress=False)
    console.print(f"HPO {graph!r}; ladybug database {built.path} ready in {time.perf_counter() - started:.1f} s "
                  f"({built.path.stat().st_size / 2**20:.0f} MiB)")
    engine = LadybugEngine(built.path, built.schema, threads=1)

    table = Table(title=f"Cypher on HPO (ladybug, 1 thread, {args.repeats} queries each)")
    for column in ("query", "median ms", "p99 ms", "mean rows"):
        table.add_column(column, justify="left" if column == "query" else "right")
    for label, (cypher, anchor_type) in QUERIES.items():
        anchors = graph.nodes_of_type(anchor_type)
        times, rows = [], []
        for _ in range(args.repeats):
            node_id = graph.node_id(int(anchors[rng.randrange(len(anchors))]))
            t = time.perf_counter()
            result = engine.query(cypher, {"id": node_id}, limit=100_000)
            times.append((time.perf_counter() - t) * 1000)
            rows.append(len(result.rows))
        median, p99 = stats(times)
        table.add_row(label, f"{median:.2f}", f"{p99:.2f}", f"{np.mean(rows):.1f}")
    console.print(table)

    one_hop, _ = QUERIES["one-hop: phenotypes of a disease"]
    diseases = graph.nodes_of_type("disease")
    limits = SandboxLimits(timeout_s=20)
    sandbox_table = Table(title="Code sandbox overhead")
    for column in ("mode", "measure", "median ms", "p99 ms"):
        sandbox_table.add_column(column, justify="left" if column in ("mode", "measure") else "right")
    worst_warm = 0.0
    for mode, backend in (("local", engine), ("callback", Forwarding(engine))):
        first = []
        for _ in range(args.sandboxes):
            t = time.perf_counter()
            with CodeSandbox(backend, limits) as sandbox:
                result = sandbox.run("x = 1")
                first.append((time.perf_counter() - t) * 1000)
                assert result.ok, result.observation()
        with CodeSandbox(backend, limits) as sandbox:
            isolation = sandbox.mode
            sandbox.run("x = 1")
            empty = []
            for _ in range(args.repeats):
                t = time.perf_counter()
                sandbox.run("x = 1")
                empty.append((time.perf_counter() - t) * 1000)
            overhead = []
            for _ in range(args.repeats):
                node_id = graph.node_id(int(diseases[rng.randrange(len(diseases))]))
                code = f"rows = cypher({one_hop!r}, {{'id': {node_id!r}}})"
                t = time.perf_counter()
                result = sandbox.run(code)
                inside = (time.perf_counter() - t) * 1000
                assert result.ok, result.observation()
                t = time.perf_counter()
                engine.query(one_hop, {"id": node_id})
                direct = (time.perf_counter() - t) * 1000
                overhead.append(inside - direct)
        for measure, values in (("first call (start + run)", first), ("warm call, no query", empty),
                                ("warm call overhead, one-hop query", overhead)):
            median, p99 = stats(values)
            if measure.startswith("warm"):
                worst_warm = max(worst_warm, p99)
            sandbox_table.add_row(f"{mode} ({isolation})", measure, f"{median:.2f}", f"{p99:.2f}")
    console.print(sandbox_table)
    verdict = "met" if worst_warm <= WARM_TARGET_MS else "MISSED"
    console.print(f"warm-call overhead target <= {WARM_TARGET_MS:.0f} ms: {verdict} (worst p99 {worst_warm:.2f} ms)")
    engine.close()


if __name__ == "__main__":
    main()
