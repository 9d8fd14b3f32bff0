"""Synthetic graphs of the papers' benchmark sizes, in the benchmarks' released file formats, for size rehearsals.

The real files are not reachable here (STaRK's ``processed.zip`` is on the Hugging Face hub, GRBench's
``graph.json`` files on Google Drive), so these generators write files in the same formats with the real node and
edge counts at ``scale`` 1; the texts are random words, and the type mixes and degree shapes are assumptions, named
below. Counts per node type and relation mixes are ours where the papers give only totals.

- :func:`write_prime`: STaRK PRIME's ``processed/`` folder (``node_info.pkl``, ``node_types.pt``, ``edge_index.pt``,
  ``edge_types.pt``, type dicts), read by ``ark graph import stark prime``: 129,375 nodes (the paper's per-type
  counts), 8,100,498 stored edge rows (each pair in both directions, as PrimeKG stores them), long texts on
  diseases, genes and drugs (~250, ~150 and ~150 words of details; effect, anatomy and process nodes short).
- :func:`write_grbench`: a GRBench ``graph.json`` (read by ``ark graph import grbench``) for the shapes in
  :data:`GRBENCH_SHAPES`: ``amazon`` (GraphScout Table 4: ~9M nodes, ~313M edges; items and brands, ~33 neighbour
  entries an item) and ``legal`` (Freelaw: ~84M nodes, ~114M edges; opinions with 200-word texts, clusters,
  dockets, courts). Every neighbour entry becomes one edge. Neighbour ids are skewed towards low ids, so a few nodes
  are hubs.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import numpy as np

WORDS = np.array([f"w{i}" for i in range(30_000)])
WORD_P = 1.0 / np.arange(1, len(WORDS) + 1) ** 1.07  # Zipf-like word frequencies
WORD_CDF = np.cumsum(WORD_P) / WORD_P.sum()

PRIME_TYPES = {"disease": 17_080, "gene/protein": 27_671, "molecular_function": 11_169, "drug": 7_957,
               "pathway": 2_516, "anatomy": 14_035, "effect/phenotype": 15_311, "biological_process": 28_642,
               "cellular_component": 4_176, "exposure": 818}
PRIME_EDGE_ROWS = 8_100_498
# relation -> (source type, target type, share of the pairs); the shares are ours (PrimeKG's totals are not split)
PRIME_RELATIONS = {
    "synergistic interaction": ("drug", "drug", 0.33), "expression present": ("gene/protein", "anatomy", 0.37),
    "ppi": ("gene/protein", "gene/protein", 0.08), "interacts with": ("gene/protein", "biological_process", 0.07),
    "parent-child": ("disease", "disease", 0.04), "phenotype present": ("disease", "effect/phenotype", 0.05),
    "side effect": ("drug", "effect/phenotype", 0.03), "associated with": ("gene/protein", "disease", 0.02),
    "indication": ("drug", "disease", 0.01), "contraindication": ("drug", "disease", 0.01),
    "target": ("drug", "gene/protein", 0.01), "expression absent": ("gene/protein", "anatomy", 0.01),
    "linked to": ("exposure", "disease", 0.005), "phenotype absent": ("disease", "effect/phenotype", 0.001),
}
PRIME_TEXT = {"disease": {"mondo_definition": 80, "umls_description": 90, "mayo_symptoms": 80},
              "gene/protein": {"summary": 100, "name": 4}, "drug": {"description": 100, "mechanism_of_action": 50},
              "pathway": {"summary": 30}, "effect/phenotype": {}, "anatomy": {}, "molecular_function": {},
              "biological_process": {}, "cellular_component": {}, "exposure": {}}

# GRBench shapes: node type -> (count at scale 1, name feature, name words, {text feature: words},
#                               {neighbour kind: (target type, mean entries)})
GRBENCH_SHAPES: dict[str, dict[str, tuple[int, str, int, dict[str, int], dict[str, tuple[str, float]]]]] = {
    "amazon": {
        "item": (9_300_000, "title", 12, {"description": 40, "category": 3},
                 {"also_viewed_item": ("item", 13.0), "also_bought_item": ("item", 12.0),
                  "bought_together_item": ("item", 1.5), "buy_after_viewing_item": ("item", 5.0),
                  "brand": ("brand", 1.0)}),
        "brand": (130_000, "name", 2, {}, {"item": ("item", 72.0)}),
    },
    "legal": {
        "opinion": (29_400_000, "plain_text", 200, {"type": 1},
                    {"opinion_cluster": ("opinion_cluster", 1.0), "cited_by": ("opinion", 0.1)}),
        "opinion_cluster": (25_200_000, "syllabus", 30, {"judges": 3}, {"docket": ("docket", 1.0)}),
        "docket": (29_400_000, "case_name", 6, {"docket_number": 1}, {"court": ("court", 1.0)}),
        "court": (400, "full_name", 4, {"jurisdiction": 1}, {"docket": ("docket", 73_500.0)}),
    },
}
GRBENCH_SIZES = {"amazon": (9_000_000, 313_000_000), "legal": (84_000_000, 114_000_000)}  # GraphScout Table 4


def words(rng: np.random.Generator, count: int) -> str:
    return " ".join(WORDS[np.searchsorted(WORD_CDF, rng.random(count))]) if count else ""


def skewed(rng: np.random.Generator, size: int, count: int) -> np.ndarray:
    """``count`` ids in ``range(size)``, skewed towards low ids (a few hubs, a long tail)."""
    return np.minimum((size * rng.random(count) ** 2.5).astype(np.int64), size - 1)


def write_prime(root: Path, scale: float = 1.0, seed: int = 0) -> dict[str, Any]:
    """Write ``root/processed/`` in STaRK PRIME's layout; return its counts."""
    import torch

    rng = np.random.default_rng(seed)
    names = list(PRIME_TYPES)
    counts = {t: max(2, round(n * scale)) for t, n in PRIME_TYPES.items()}
    type_codes = np.concatenate([np.full(counts[t], code) for code, t in enumerate(names)])
    rng.shuffle(type_codes)  # PrimeKG interleaves the types in its ids
    members = {t: np.flatnonzero(type_codes == code) for code, t in enumerate(names)}
    node_info = {}
    for i, code in enumerate(type_codes):
        kind = names[code]
        details = {key: words(rng, n) for key, n in PRIME_TEXT[kind].items()}
        node_info[i] = {"id": f"P{i}", "type": kind, "name": f"{kind} {i} {words(rng, 2)}", "source": "SYN",
                        "details": details}
    relations = list(PRIME_RELATIONS)
    shares = np.array([PRIME_RELATIONS[r][2] for r in relations])
    pairs = max(1, round(PRIME_EDGE_ROWS * scale / 2))
    per_relation = rng.multinomial(pairs, shares / shares.sum())
    sources, targets, kinds = [], [], []
    for code, (relation, n) in enumerate(zip(relations, per_relation, strict=True)):
        source_type, target_type, _ = PRIME_RELATIONS[relation]
        src = members[source_type][skewed(rng, len(members[source_type]), int(n))]
        dst = members[target_type][rng.integers(0, len(members[target_type]), int(n))]
        sources += [src, dst]
        targets += [dst, src]
        kinds += [np.full(2 * int(n), code)]
    folder = root / "processed"
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "node_info.pkl").open("wb") as handle:
        pickle.dump(node_info, handle, protocol=pickle.HIGHEST_PROTOCOL)
    torch.save(torch.from_numpy(type_codes.astype(np.int64)), folder / "node_types.pt")
    torch.save(torch.from_numpy(np.stack([np.concatenate(sources), np.concatenate(targets)])), folder / "edge_index.pt")
    torch.save(torch.from_numpy(np.concatenate(kinds).astype(np.int64)), folder / "edge_types.pt")
    for name, value in (("node_type_dict", dict(enumerate(names))), ("edge_type_dict", dict(enumerate(relations)))):
        with (folder / f"{name}.pkl").open("wb") as handle:
            pickle.dump(value, handle)
    return {"nodes": len(type_codes), "edge_rows": 2 * pairs, "types": counts}


def write_grbench(folder: Path, shape: str = "amazon", scale: float = 1.0, seed: int = 0) -> dict[str, Any]:
    """Write ``folder/graph.json`` of GRBench shape ``shape`` streamed node by node; return its counts."""
    rng = np.random.default_rng(seed)
    spec = GRBENCH_SHAPES[shape]
    counts = {t: max(2, round(v[0] * scale)) for t, v in spec.items()}
    folder.mkdir(parents=True, exist_ok=True)
    entries = 0
    with (folder / "graph.json").open("w", encoding="utf-8") as out:
        out.write("{")
        for t_index, (node_type, (_, name_key, name_words, texts, kinds)) in enumerate(spec.items()):
            out.write(("," if t_index else "") + json.dumps(f"{node_type}_nodes") + ": {")
            for i in range(counts[node_type]):
                features = {name_key: f"{node_type} {i} {words(rng, name_words)}"}
                features.update({key: words(rng, n) for key, n in texts.items()})
                neighbors = {}
                for kind, (target, mean) in kinds.items():
                    # a hub type's lists (courts' dockets) hold its share of the scaled graph
                    expected = mean * spec[node_type][0] * scale / counts[node_type] if mean > 1000 else mean
                    n = int(rng.poisson(expected))
                    neighbors[kind] = [f"{target}.{j}" for j in skewed(rng, counts[target], n)]
                    entries += n
                node = {"features": features, "neighbors": neighbors}
                out.write(("," if i else "") + json.dumps(f"{node_type}.{i}") + ":" + json.dumps(node))
            out.write("}")
        out.write("}")
    return {"nodes": sum(counts.values()), "neighbor_entries": entries, "types": counts,
            "bytes": (folder / "graph.json").stat().st_size}
