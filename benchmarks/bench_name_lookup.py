"""Does ARK's global search find what is named? Hit@1 of ``search_in_graph`` on the name-lookup set, per node type.

    python benchmarks/bench_name_lookup.py NAMES.jsonl [--graph hpo] [--min-hit1 0.95]

NAMES.jsonl is the tracked name-lookup set (``ark quiz hpo --recipe hpo-names``; see
``benchmarks/recipes/hpo_lookup.sh``): each sampled node queried by its name, a lower-cased punctuation-free variant
and, for phenotypes, an exact synonym; any node of that name is a right answer. Each query goes through the real
tool (``Toolbox.execute("search_in_graph", ...)``, default size), once with ARK's default relevance (field-aware
BM25) and once with plain BM25 (the paper's), and Hit@1 is read from the tool's structured results. Exits with
status 1 when the default scoring misses ``--min-hit1`` for any node type.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

from rich.console import Console
from rich.table import Table

from ark.loaders import open_graph
from ark.methods.ark.api import open_relevance_index
from ark.methods.ark.options import ArkOptions
from ark.methods.ark.tools import Toolbox
from ark.methods.ark.tools.search_in_graph import SearchInGraphResult


def hit_at_1(graph, toolbox: Toolbox, queries: list[dict]) -> dict[tuple[str, str], list[bool]]:
    """Per (node type, variant): whether the first hit of ``search_in_graph`` is an answer."""
    found: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for query in queries:
        result = toolbox.execute("search_in_graph", json.dumps({"query": query["query"]}))
        first = result.data.results[:1] if isinstance(result.data, SearchInGraphResult) else []  # else: refused
        ok = bool(first) and graph.node_id(first[0].index) in set(query["answer_ids"])
        found[(query["template"], query["id"].rsplit("|", 1)[-1])].append(ok)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", type=Path)
    parser.add_argument("--graph", default="hpo")
    parser.add_argument("--min-hit1", type=float, default=0.95)
    args = parser.parse_args()
    graph = open_graph(args.graph)
    queries = [json.loads(line) for line in args.names.read_text(encoding="utf-8").splitlines() if line.strip()]
    console = Console()
    results = {}
    for scoring in ("fielded", "plain"):
        options = ArkOptions(scoring=scoring)
        toolbox = Toolbox(graph, open_relevance_index(graph, options), options.tools)
        started = time.perf_counter()
        results[scoring] = hit_at_1(graph, toolbox, queries)
        console.print(f"[dim]{scoring}: {len(queries)} searches in {time.perf_counter() - started:.1f} s[/]")
    table = Table(title=f"search_in_graph Hit@1 on {args.names.name} ({len(queries)} queries)", title_justify="left")
    for column in ("node type", "variant", "queries", "field-aware (default)", "plain BM25"):
        table.add_column(column, justify="left" if column in ("node type", "variant") else "right")
    failed = []
    for node_type in dict.fromkeys(t for t, _ in results["fielded"]):
        keys = [key for key in results["fielded"] if key[0] == node_type]
        for key in keys:
            table.add_row(node_type, key[1], str(len(results["fielded"][key])),
                          *(f"{sum(r[key]) / len(r[key]):.3f}" for r in results.values()))
        totals = {s: [ok for key in keys for ok in r[key]] for s, r in results.items()}
        rates = {s: sum(v) / len(v) for s, v in totals.items()}
        table.add_row(node_type, "all", str(len(totals["fielded"])), *(f"{rates[s]:.3f}" for s in results),
                      style="bold")
        if rates["fielded"] < args.min_hit1:
            failed.append(f"{node_type} {rates['fielded']:.3f}")
    console.print(table)
    if failed:
        console.print(f"[red]below {args.min_hit1}: {', '.join(failed)}[/]")
        return 1
    console.print(f"every node type reaches Hit@1 >= {args.min_hit1} with the default scoring")
    return 0


if __name__ == "__main__":
    sys.exit(main())
