"""A tiny graph with what the Cypher export must handle: node properties of several kinds, type and relation
names that are not Cypher identifiers (``gene/protein``, ``order``), and one relation joining several type pairs.

- drugs ``DB1`` (aspirin) and ``DB2`` (warfarin) with a float ``weight``, an int ``approved_year``, a bool
  ``otc``, a list of strings ``synonyms`` and a nested ``vendor`` object;
- ``gene/protein`` nodes ``G1`` (PTGS1), ``G2`` (VKORC1), ``G3`` (CYP2C9);
- ``disease`` nodes ``D1`` (thrombosis), ``D2`` (pain) and an ``order`` node ``O1`` (a node type named like a
  reserved word);
- ``targets``: drug -> gene/protein; ``interacts``: drug -> drug AND gene/protein -> gene/protein (one relation,
  two type pairs); ``treats``: drug -> disease; ``belongs to``: disease -> order.
"""

from __future__ import annotations

from ark.graph import EdgeTable, KnowledgeGraph, NodeTable, build_graph

NODES = [
    ("DB1", "drug", "aspirin", {"weight": 180.16, "approved_year": 1899, "otc": True,
                                "synonyms": ["acetylsalicylic acid", "ASA"], "vendor": {"name": "Bayer"}}),
    ("DB2", "drug", "warfarin", {"weight": 308.3, "approved_year": 1954, "otc": False,
                                 "synonyms": ["coumadin"], "vendor": {"name": "BMS"}}),
    ("G1", "gene/protein", "PTGS1", {"chromosome": "9"}),
    ("G2", "gene/protein", "VKORC1", {"chromosome": "16"}),
    ("G3", "gene/protein", "CYP2C9", {"chromosome": "10"}),
    ("D1", "disease", "thrombosis", {}),
    ("D2", "disease", "pain", {}),
    ("O1", "order", "vascular disorders", {}),
]
EDGES = [
    ("DB1", "G1", "targets"), ("DB2", "G2", "targets"), ("DB2", "G3", "targets"),
    ("DB1", "DB2", "interacts"), ("G2", "G3", "interacts"),
    ("DB1", "D2", "treats"), ("DB2", "D1", "treats"), ("DB1", "D1", "treats"),
    ("D1", "O1", "belongs to"),
]


def build_drug_graph() -> KnowledgeGraph:
    ids, types, names, props = zip(*NODES, strict=True)
    texts = [f"{name} ({node_type})" for _, node_type, name, _ in NODES]
    src, dst, rel = zip(*EDGES, strict=True)
    return build_graph(NodeTable(list(ids), list(types), list(names), texts, list(props), source="drugs"),
                       EdgeTable(list(src), list(dst), list(rel)), metadata={"name": "drugs"})
