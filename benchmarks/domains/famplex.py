"""FamPlex, the protein families and complexes of human genes, from the ``famplex`` package's ``famplex.obo``
(``pip install famplex==0.0.5``; the extra ``domains``).

Types: family (a FamPlex entry without parts), complex (one with ``has_part``), gene (an HGNC symbol that is a
member or part of one). A family's or complex's text is its name, definition (where FamPlex has one) and synonyms.
Relations: member_of (a gene or family to the family it is in: FamPlex's ``is_a``/``inverse_is_a``), part_of (a
gene or family to the complex it is part of). The root entry is left out.
"""

from __future__ import annotations

import importlib.metadata as metadata
import re
from pathlib import Path

from .tables import DomainData, Edge, Node, Relation, TwoHop

RELATIONS = {
    "member_of": Relation(
        "member_of", ask_dst=("Which family does {x} belong to?", "What protein family is {x} a member of?"),
        ask_src=("Which proteins are members of the {x} family?", "What are the members of {x}?"),
        clause="are members of {x}", shared=("Which other proteins are in the same family as {x}?",
                                            "What else belongs to the family of {x}?"), target="the family"),
    "part_of": Relation(
        "part_of", ask_dst=("Which complexes is {x} part of?", "What complex contains {x}?"),
        ask_src=("What are the subunits of {x}?", "Which components make up {x}?"), clause="are parts of {x}",
        shared=("Which other proteins are found in a complex with {x}?",), target="the complex"),
}
TWO_HOPS = [
    TwoHop("member_of", "part_of", "Which complexes contain the family of {x}?"),
    TwoHop("<part_of", "member_of", "Which families do the subunits of {x} belong to?"),
    TwoHop("member_of", "member_of", "Which broader family is the family of {x} in?"),
]
PLURALS = {"family": "families", "complex": "complexes", "gene": "genes"}
ROOT = "FPLX:root"


def obo_file() -> Path:
    """``famplex.obo`` as installed with the ``famplex`` distribution (its wheel puts it under a data folder),
    or what to install."""
    try:
        files = metadata.distribution("famplex").files or []
    except metadata.PackageNotFoundError:
        files = []
    for file in files:
        if file.name == "famplex.obo" and Path(str(file.locate())).is_file():
            return Path(str(file.locate()))
    raise FileNotFoundError("the FamPlex graph reads famplex.obo: pip install famplex==0.0.5 "
                            "(or the extra: pip install -e '.[domains]')")


def read_terms(path: Path) -> list[dict[str, list[str]]]:
    """Each ``[Term]`` stanza as tag -> values."""
    terms: list[dict[str, list[str]]] = []
    for stanza in path.read_text(encoding="utf-8").split("\n[")[1:]:
        if not stanza.startswith("Term]"):
            continue
        tags: dict[str, list[str]] = {}
        for line in stanza.splitlines()[1:]:
            if ": " in line:
                tag, value = line.split(": ", 1)
                tags.setdefault(tag, []).append(value.strip())
        terms.append(tags)
    return terms


def build(limit: int | None = None) -> DomainData:
    """The FamPlex entries (the first ``limit`` by id when given), their member and part genes, and the edges."""
    terms = sorted((t for t in read_terms(obo_file()) if t["id"][0] != ROOT), key=lambda t: t["id"][0])
    terms = terms[:limit] if limit else terms
    kept = {t["id"][0] for t in terms}
    nodes: dict[str, Node] = {}
    edges: set[Edge] = set()
    for term in terms:
        entry = term["id"][0]
        definition = re.sub(r'^"(.*)" \[.*\]$', r"\1", term.get("def", [""])[0])
        synonyms = "; ".join(dict.fromkeys(re.sub(r'^"(.*)" \w+ \[.*\]$', r"\1", s) for s in term.get("synonym", [])))
        nodes[entry] = Node(entry, "complex" if term.get("has_part") else "family", term["name"][0], definition,
                            {"synonyms": synonyms} if synonyms else {})
        links = [(m, entry, "member_of") for m in term.get("inverse_is_a", [])]
        links += [(entry, p, "member_of") for p in term.get("is_a", []) if p != ROOT]
        links += [(p, entry, "part_of") for p in term.get("has_part", [])]
        links += [(entry, w, "part_of") for w in term.get("part_of", [])]
        for src, dst, relation in links:
            for end in (src, dst):
                if end.startswith("HGNC:"):
                    nodes.setdefault(end, Node(end, "gene", end.split(":", 1)[1]))
            if all(end in kept or end.startswith("HGNC:") for end in (src, dst)):
                edges.add(Edge(src, dst, relation))
    return DomainData("famplex", "FamPlex: protein families and complexes and the human genes in them",
                      "famplex 0.0.5 (famplex.obo, CC0)", sorted(nodes.values(), key=lambda n: n.id),
                      sorted(edges, key=lambda e: (e.src, e.relation, e.dst)), RELATIONS, PLURALS, TWO_HOPS)
