"""Disease → gene questions on the HPO graph, in several phrasings, with exact answers from the graph's
``associated_gene`` edges: a seeded question file for ``ark eval hpo --queries FILE``.

    python -m benchmarks.hpo_disease_genes --out /tmp/disease_genes.jsonl --n 200 --seed 0
    ark eval hpo --queries /tmp/disease_genes.jsonl -m ark --offline --no-charts

Diseases are drawn among those with 1-10 associated genes and a name no other node bears (a shared name makes the
question ambiguous: OMIM and Orphanet often name one disease alike). Each question takes one phrasing, drawn with
the disease. Offline policy figures from it are offline-policy figures, not a model's.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path

PHRASINGS = (
    "Which genes are associated with {name}?",
    "What genes are linked to {name}?",
    "Which gene causes {name}?",
    "List the genes implicated in {name}.",
    "Name the genes related to {name}.",
    "Which genes have been reported for {name}?",
)


def questions(graph_name: str, n: int, seed: int) -> list[dict[str, object]]:
    """``n`` seeded disease → gene questions on graph ``graph_name``, answers every associated gene."""
    from ark.loaders import open_graph

    graph = open_graph(graph_name)
    names = Counter(graph.name(i).lower() for i in range(graph.num_nodes))
    pool = []
    for index in graph.nodes_of_type("disease").tolist():
        genes = graph.neighbors(index, "associated_gene", "out").nodes.tolist()
        if 1 <= len(genes) <= 10 and names[graph.name(index).lower()] == 1:
            pool.append((index, genes))
    rng = random.Random(seed)
    chosen = rng.sample(pool, min(n, len(pool)))
    return [{"id": f"disease-genes-s{seed}-{k:04d}",
             "query": rng.choice(PHRASINGS).format(name=graph.name(index)),
             "answer_ids": [graph.node_id(g) for g in genes],
             "template": "disease_genes"}
            for k, (index, genes) in enumerate(chosen)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="the JSONL question file to write")
    parser.add_argument("--n", type=int, default=200, help="how many questions (default 200)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--graph", default="hpo", help="a graph with disease nodes and associated_gene edges")
    args = parser.parse_args(argv)
    rows = questions(args.graph, args.n, args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    print(f"Wrote {len(rows)} questions to {args.out} (seed {args.seed}).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
