"""EDAM, the ontology of bioinformatics topics, operations, data and formats, from the ``edam-ontology`` package's
``EDAM.tsv`` (``pip install edam-ontology==1.25.3``; the extra ``domains``).

Types: topic, operation, data, format (the concept's branch); obsolete concepts are left out. Each concept's text
is its label, definition and synonyms. Relations: subclass_of (a concept to each of its parents, most within a
branch, a few operations under a topic).
"""

from __future__ import annotations

import csv
from pathlib import Path

from .tables import DomainData, Edge, Node, Relation, TwoHop, package_folder

RELATIONS = {
    "subclass_of": Relation(
        "subclass_of", ask_dst=("What is {x} a kind of?", "Which broader concept does {x} fall under?",
                                "What is the parent class of {x}?"),
        ask_src=("What are the kinds of {x}?", "Which concepts are narrower than {x}?",
                 "Which subclasses does {x} have?"),
        clause="are kinds of {x}", shared=("Which other concepts sit under the same parent as {x}?",
                                            "What are the siblings of {x}?"), target="the parent"),
}
TWO_HOPS = [TwoHop("subclass_of", "subclass_of", "What is the grandparent class of {x}?"),
            TwoHop("<subclass_of", "<subclass_of", "Which concepts are two levels below {x}?")]
PLURALS = {"data": "data concepts", "format": "formats", "operation": "operations", "topic": "topics"}


def edam_file() -> Path:
    """``EDAM.tsv`` inside the installed ``edam_ontology`` package."""
    return package_folder("edam_ontology", "edam-ontology==1.25.3") / "EDAM.tsv"


def build(limit: int | None = None) -> DomainData:
    """The current (non-obsolete) EDAM concepts, the first ``limit`` by id when given, and their subclass edges."""
    with open(edam_file(), encoding="utf-8", newline="") as handle:
        rows = [r for r in csv.DictReader(handle, delimiter="\t") if r["Obsolete"] != "TRUE"
                and r["Class ID"].startswith("http://edamontology.org/")]
    rows.sort(key=lambda r: r["Class ID"])
    rows = rows[:limit] if limit else rows
    ids = {r["Class ID"] for r in rows}
    nodes, edges = [], []
    for row in rows:
        node_id = row["Class ID"].rsplit("/", 1)[-1]
        definition = row["Definitions"].split("|")[0].strip()
        synonyms = "; ".join(s for s in row["Synonyms"].split("|") if s and not s.startswith("http"))
        nodes.append(Node(node_id, node_id.split("_")[0], row["Preferred Label"].strip(), definition,
                          {"synonyms": synonyms} if synonyms else {}))
        edges += [Edge(node_id, parent.rsplit("/", 1)[-1], "subclass_of") for parent in row["Parents"].split("|")
                  if parent in ids]
    return DomainData("edam", "EDAM: bioinformatics topics, operations, data and formats and their subclasses",
                      "edam-ontology 1.25.3 (EDAM.tsv, CC BY-SA 4.0)", nodes, edges, RELATIONS, PLURALS, TWO_HOPS)
