"""Synthetic GRBench graphs in the released ``graph.json`` format, for import tests and size rehearsals.

Every domain of the Graph-CoT release is covered with its node kinds and neighbor (edge) kinds, following the
released ``processed_data/<domain>/graph.json`` files: ``{"<type>_nodes": {id: {"features": {...},
"neighbors": {kind: [ids]}}}}``. The biomedical domain's neighbor kinds are ``Source-verb-Target`` names stored on
both endpoints, as released. Text is random words, so the size can be set: :func:`write_graph` streams the file
out node by node and stops adding nodes near ``target_bytes``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# domain -> node type -> (name feature, extra text features, neighbor kind -> target node type)
DOMAINS: dict[str, dict[str, tuple[str, tuple[str, ...], dict[str, str]]]] = {
    "academic": {
        "paper": ("title", ("abstract",), {"author": "author", "venue": "venue", "reference": "paper",
                                            "cited_by": "paper"}),
        "author": ("name", ("organization",), {"paper": "paper"}),
        "venue": ("name", (), {"paper": "paper"}),
    },
    "amazon": {
        "item": ("title", ("description", "feature"), {"brand": "brand", "also_bought_item": "item",
                                                        "also_viewed_item": "item", "bought_together_item": "item"}),
        "brand": ("name", (), {"item": "item"}),
    },
    "goodreads": {
        "book": ("title", ("description", "language_code"), {"author": "author", "publisher": "publisher",
                                                              "series": "series", "similar_books": "book"}),
        "author": ("name", (), {"book": "book"}),
        "publisher": ("name", (), {"book": "book"}),
        "series": ("title", ("description",), {"book": "book"}),
    },
    "biomedical": {
        "Compound": ("name", ("inchikey",), {"Compound-treats-Disease": "Disease",
                                             "Compound-causes-Side Effect": "Side_Effect",
                                             "Compound-binds-Gene": "Gene"}),
        "Disease": ("name", (), {"Compound-treats-Disease": "Compound", "Disease-associates-Gene": "Gene",
                                 "Disease-presents-Symptom": "Symptom"}),
        "Gene": ("name", ("description",), {"Compound-binds-Gene": "Compound",
                                            "Disease-associates-Gene": "Disease"}),
        "Symptom": ("name", (), {"Disease-presents-Symptom": "Disease"}),
        "Side_Effect": ("name", (), {"Compound-causes-Side Effect": "Compound"}),
    },
    "legal": {
        "opinion": ("plain_text", ("type",), {"opinion_cluster": "opinion_cluster", "reference": "opinion",
                                              "cited_by": "opinion"}),
        "opinion_cluster": ("syllabus", ("judges",), {"opinion": "opinion", "docket": "docket"}),
        "docket": ("case_name", ("docket_number",), {"opinion_cluster": "opinion_cluster", "court": "court"}),
        "court": ("full_name", ("jurisdiction",), {"docket": "docket"}),
    },
}
WORDS = [f"w{i}" for i in range(2000)] + ["graph", "protein", "court", "novel", "camera", "learning"]


def node_id(node_type: str, i: int) -> str:
    return f"{node_type}.{i}"  # dots on purpose: ids with dots must survive the streaming parser


def iter_domain_nodes(domain: str, nodes_per_type: int, text_words: int, degree: int,
                      seed: int = 0) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(node type, id, node object) of a synthetic domain graph; neighbors point at ids of the target type."""
    rng = random.Random(seed)
    for node_type, (name_key, extra, kinds) in DOMAINS[domain].items():
        for i in range(nodes_per_type):
            features: dict[str, Any] = {name_key: f"{node_type} {i} " + " ".join(rng.choices(WORDS, k=3))}
            for key in extra:
                features[key] = " ".join(rng.choices(WORDS, k=text_words))
            neighbors = {kind: [node_id(target, rng.randrange(nodes_per_type)) for _ in range(rng.randint(0, degree))]
                         for kind, target in kinds.items()}
            yield node_type, node_id(node_type, i), {"features": features, "neighbors": neighbors}


def write_graph(folder: Path, domain: str = "amazon", target_bytes: int = 1_000_000, text_words: int = 120,
                degree: int = 3, seed: int = 0) -> Path:
    """Write ``folder/graph.json`` of about ``target_bytes`` (streamed: the generator itself stays small)."""
    types = DOMAINS[domain].values()
    # bytes a node of each type takes: ids and names (~70), ~5.7 bytes a word, ~14 bytes a neighbor id (quoted, with
    # its separator)
    per_type = sum(70 + 5.7 * text_words * len(extra) + 14 * degree / 2 * len(kinds) for _n, extra, kinds in types)
    nodes_per_type = max(2, int(target_bytes / per_type))
    folder.mkdir(parents=True, exist_ok=True)
    file = folder / "graph.json"
    with file.open("w", encoding="utf-8") as out:
        out.write("{")
        current = None
        for node_type, nid, node in iter_domain_nodes(domain, nodes_per_type, text_words, degree, seed):
            if node_type != current:
                out.write(("}, " if current else "") + json.dumps(f"{node_type}_nodes") + ": {")
                current, first = node_type, True
            out.write(("" if first else ", ") + json.dumps(nid) + ": " + json.dumps(node))
            first = False
        out.write("}}")
    return file
