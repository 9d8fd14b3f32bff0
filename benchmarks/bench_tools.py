"""Latency and size of the agent's tool observations, on the HPO graph and on a synthetic hub node.

    python benchmarks/bench_tools.py [--hub-degree 20000] [--repeats 200]

Prints, per tool call shape, the median and p99 wall time of ``Toolbox.execute`` and the observation size, for the
HPO graph's largest hubs (e.g. "Autosomal recessive inheritance", thousands of diseases) and for a synthetic star
graph whose centre has ``--hub-degree`` neighbors. Observations must stay within the configured cap (6,000 chars).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from rich.console import Console
from rich.table import Table

from ark.graph import EdgeTable, NodeTable, build_graph
from ark.index import open_index
from ark.loaders import open_graph
from ark.methods.ark.options import ToolConfig
from ark.methods.ark.tools import Toolbox

WORDS = ["seizure", "ataxia", "cardiomyopathy", "anemia", "deafness",
         "cataract", "scoliosis", "hypotonia", "obesity", "epilepsy"]


def star_graph(degree: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    ids = ["hub", *(f"leaf{i}" for i in range(degree))]
    types = ["centre", *(["disease", "gene"][i % 2] for i in range(degree))]
    texts = ["the hub", *(" ".join(rng.choice(WORDS, 6)) for _ in range(degree))]
    relations = [["causes", "treats", "associated_with"][i % 3] for i in range(degree)]
    return build_graph(NodeTable(ids, types, ids, texts), EdgeTable(["hub"] * degree, ids[1:], relations))


def time_calls(toolbox: Toolbox, calls: list[tuple[str, dict]], repeats: int) -> list[tuple[str, float, float, int]]:
    rows = []
    for name, args in calls:
        raw = json.dumps(args)
        times, size = [], 0
        for _ in range(repeats):
            start = time.perf_counter()
            outcome = toolbox.execute(name, raw)
            times.append((time.perf_counter() - start) * 1000)
            size = max(size, len(outcome.text))
        label = f"{name}({', '.join(f'{k}={v}' for k, v in args.items())})"
        rows.append((label, float(np.median(times)), float(np.percentile(times, 99)), size))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hub-degree", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    config = ToolConfig()
    console = Console()

    hpo = open_graph("hpo")
    hpo_index = open_index(hpo, progress=False)
    degrees = np.diff(hpo.indptr)
    hubs = np.argsort(-degrees)[:2]
    calls = []
    for hub in hubs.tolist():
        calls += [
            ("search_in_neighborhood", {"node_index": hub}),
            ("search_in_neighborhood", {"node_index": hub, "query": "seizures and hearing loss"}),
            ("search_in_neighborhood", {"node_index": hub, "query": "kidney", "node_types": ["disease"]}),
        ]
    calls.append(("search_in_graph", {"query": "progressive hearing loss in childhood", "size": 30}))
    rows = [(f"hpo {label}", *rest) for label, *rest in time_calls(Toolbox(hpo, hpo_index, config), calls,
                                                                 args.repeats)]
    console.print(f"HPO hubs: {', '.join(f'{hpo.name(h)} ({degrees[h]:,} neighbors)' for h in hubs.tolist())}")

    star = star_graph(args.hub_degree)
    star_index = open_index(star, progress=False)
    star_calls = [
        ("search_in_neighborhood", {"node_index": 0}),
        ("search_in_neighborhood", {"node_index": 0, "query": "seizure cataract"}),
        ("search_in_neighborhood",
         {"node_index": 0, "query": "anemia", "node_types": ["gene"], "edge_types": ["treats"]}),
    ]
    rows += [(f"star({args.hub_degree:,}) {label}", *rest)
             for label, *rest in time_calls(Toolbox(star, star_index, config), star_calls, args.repeats)]

    table = Table(title=f"Tool call latency ({args.repeats} repeats), observation cap {config.max_observation_chars:,}")
    for column in ("call", "median ms", "p99 ms", "max chars"):
        table.add_column(column, justify="left" if column == "call" else "right", overflow="fold")
    for label, median, p99, size in rows:
        table.add_row(label, f"{median:.2f}", f"{p99:.2f}", f"{size:,}")
    console.print(table)


if __name__ == "__main__":
    main()
