"""The Python packages installed on this machine as a graph, from their own metadata (``importlib.metadata``):
packages, the people who wrote and maintain them, their licences, keywords and trove topics, and which installed
package requires which.

Types: package (name, summary as description, version), person, licence, keyword, topic. Relations: written_by,
maintained_by (package -> person), licensed_under, tagged_with, classified_under, depends_on (package -> package,
unconditional requirements between installed packages only). The graph is what this environment holds: another
environment gives another graph, and its questions are generated from it.
"""

from __future__ import annotations

import importlib.metadata as metadata
import os
import re
import site
import sys
import sysconfig
from collections import defaultdict
from email.utils import getaddresses

from .tables import DomainData, Edge, Node, Relation, TwoHop

RELATIONS = {
    "written_by": Relation(
        "written_by", ask_dst=("Who wrote {x}?", "Who is the author of {x}?", "Who created the {x} package?"),
        ask_src=("Which packages did {x} write?", "What has {x} authored?"), clause="are written by {x}",
        shared=("Which other packages share an author with {x}?",), target="the author"),
    "maintained_by": Relation(
        "maintained_by", ask_dst=("Who maintains {x}?", "Who is responsible for maintaining {x}?"),
        ask_src=("Which packages does {x} maintain?", "What is maintained by {x}?"), clause="are maintained by {x}",
        shared=("Which other packages have the same maintainer as {x}?",), target="the maintainer"),
    "licensed_under": Relation(
        "licensed_under", ask_dst=("Which licence does {x} use?", "Under what license is {x} released?"),
        ask_src=("Which packages are released under {x}?", "What software is licensed under {x}?"),
        clause="are released under {x}", shared=("Which other packages use the same licence as {x}?",)),
    "tagged_with": Relation(
        "tagged_with", ask_dst=("Which keywords is {x} tagged with?", "What keywords describe {x}?"),
        ask_src=("Which packages are tagged with the keyword {x}?", "Which packages list {x} as a keyword?"),
        clause="are tagged {x}", shared=("Which other packages share a keyword with {x}?",)),
    "classified_under": Relation(
        "classified_under", ask_dst=("Which topics is {x} classified under?", "What subject areas does {x} cover?"),
        ask_src=("Which packages are classified under the topic {x}?", "Which packages are about {x}?"),
        clause="are classified under {x}", shared=("Which other packages cover a topic of {x}?",)),
    "depends_on": Relation(
        "depends_on", ask_dst=("What does {x} depend on?", "Which packages does {x} require?"),
        ask_src=("Which packages need {x}?", "What depends on {x}?"), clause="depend on {x}",
        shared=("Which other packages have a dependency in common with {x}?",), target="a dependency"),
}
TWO_HOPS = [
    TwoHop("written_by", "<written_by", "Which other packages were written by the author of {x}?"),
    TwoHop("maintained_by", "<maintained_by", "What else do the maintainers of {x} maintain?"),
    TwoHop("depends_on", "licensed_under", "Which licences do the dependencies of {x} use?"),
    TwoHop("<depends_on", "written_by", "Who wrote the packages that depend on {x}?"),
]
PLACEHOLDERS = {"", "unknown", "none", "n-a", "na", "todo"}  # metadata fields filled with no person
PLURALS = {"package": "packages", "person": "people", "licence": "licences", "keyword": "keywords",
           "topic": "topics"}


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.casefold()).strip("-")


def _get(meta: metadata.PackageMetadata, key: str) -> str:
    """A metadata field's value, "" when absent."""
    return str(meta[key] or "") if key in meta else ""


def _people(meta: metadata.PackageMetadata, name_field: str, email_field: str) -> list[str]:
    """The person names of a metadata field pair ("A, B" and "A <a@x>, B <b@y>"), an address's name when given,
    else its text before the @."""
    found: list[str] = []
    for field in (email_field, name_field):
        value = _get(meta, field)
        for person, address in getaddresses([value]) if "@" in value else [(p.strip(), "") for p in
                                                                             re.split(r",| and ", value)]:
            person = person.strip().strip('"') or address.split("@")[0]
            if (person and len(person) <= 60 and _key(person) not in PLACEHOLDERS
                    and _key(person) not in {_key(p) for p in found}):
                found.append(person)
    return found


def _licence(meta: metadata.PackageMetadata) -> str:
    expression = (_get(meta, "License-Expression") or "").strip()
    if expression:
        return expression
    classified = [c.split("::")[-1].strip() for c in meta.get_all("Classifier") or [] if c.startswith("License ::")]
    if classified:
        return classified[0]
    text = (_get(meta, "License") or "").strip()
    return text if text and "\n" not in text and len(text) <= 40 else ""


def _keywords(meta: metadata.PackageMetadata) -> list[str]:
    value = _get(meta, "Keywords") or ""
    words = value.split(",") if "," in value else value.split()
    return sorted({w.strip().casefold() for w in words if 2 <= len(w.strip()) <= 40})


def _requirements(dist: metadata.Distribution) -> list[str]:
    """The names of ``dist``'s unconditional requirements (no extra, no environment marker)."""
    names = []
    for requirement in dist.requires or []:
        if ";" in requirement:
            continue
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
        if match:
            names.append(_key(match.group(1)))
    return names


def environment_paths() -> list[str]:
    """The folders this environment installs distributions into (its site-packages, the user's when enabled), in
    ``sys.path`` order: not the rest of ``sys.path``, where the working directory or ``PYTHONPATH`` put a checkout
    whose own metadata (``ark_kg.egg-info``) was never installed."""
    sites = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib"), *site.getsitepackages()}
    if site.ENABLE_USER_SITE:
        sites.add(site.getusersitepackages())
    real = {os.path.realpath(p) for p in sites if p}
    return [p for p in dict.fromkeys(sys.path) if p and os.path.realpath(p) in real]


def build(limit: int | None = None) -> DomainData:
    """The installed distributions (sorted by name; the first ``limit`` of them when given) as a graph."""
    dists: dict[str, metadata.Distribution] = {}
    for dist in metadata.distributions(path=environment_paths()):
        name = _get(dist.metadata, "Name")
        if name and _key(name) not in dists:
            dists[_key(name)] = dist
    chosen = sorted(dists)[:limit] if limit else sorted(dists)
    nodes: dict[str, Node] = {}
    edges: set[Edge] = set()

    def attach(package: str, node_type: str, name: str, relation: str) -> None:
        node_id = f"{node_type}:{_key(name)}"
        nodes.setdefault(node_id, Node(node_id, node_type, name))
        edges.add(Edge(package, node_id, relation))

    for key in chosen:
        meta = dists[key].metadata
        package = f"package:{key}"
        nodes[package] = Node(package, "package", meta["Name"], (_get(meta, "Summary") or "").strip(),
                              {"version": _get(meta, "Version") or ""})
        for person in _people(meta, "Author", "Author-email"):
            attach(package, "person", person, "written_by")
        for person in _people(meta, "Maintainer", "Maintainer-email"):
            attach(package, "person", person, "maintained_by")
        if _licence(meta):
            attach(package, "licence", _licence(meta), "licensed_under")
        for word in _keywords(meta):
            attach(package, "keyword", word, "tagged_with")
        for topic in {c.split("::", 1)[1].strip() for c in meta.get_all("Classifier") or []
                      if c.startswith("Topic ::")}:
            attach(package, "topic", topic, "classified_under")
    requirements: dict[str, set[str]] = defaultdict(set)
    for key in chosen:
        requirements[key] = {r for r in _requirements(dists[key]) if r in chosen and r != key}
        edges.update(Edge(f"package:{key}", f"package:{r}", "depends_on") for r in requirements[key])
    return DomainData("pypackages", "The Python packages installed here: authors, maintainers, licences, keywords, "
                      "topics and requirements, from their own metadata", "importlib.metadata of this environment",
                      sorted(nodes.values(), key=lambda n: n.id),
                      sorted(edges, key=lambda e: (e.src, e.relation, e.dst)), RELATIONS, PLURALS, TWO_HOPS)
