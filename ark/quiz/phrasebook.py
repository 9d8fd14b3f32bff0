"""English for a graph's schema: node type nouns and relation verb phrases, from a small per-graph TOML file.

File format (see ``ark/quiz/phrases/hpo.toml``)::

    [types.disease]
    singular = "disease"
    plural = "diseases"

    [[relations]]
    name = "has_phenotype"      # the graph's relation name
    source = "disease"          # optional: only for edges from this node type
    target = "phenotype"        # optional: only for edges to this node type
    forward = ["present with {anchor}"]        # the answers are the edges' sources, the anchor their target
    inverse = ["are features of {anchor}"]     # the answers are the edges' targets, the anchor their source

Phrases are plural verb phrases ("Which diseases <phrase>?") with one ``{anchor}`` slot. Relations or types the
file does not mention get a generic phrasing built from their names.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

GENERIC_FORWARD = ("are linked to {anchor} by the relation '{relation}'", "have a '{relation}' link to {anchor}")
GENERIC_INVERSE = ("are linked from {anchor} by the relation '{relation}'",
                   "have an incoming '{relation}' link from {anchor}")


@dataclass(frozen=True)
class RelationPhrases:
    """Phrasings of one relation, optionally restricted to edges between two node types."""

    name: str
    forward: tuple[str, ...]
    inverse: tuple[str, ...]
    source: str | None = None
    target: str | None = None

    def matches(self, relation: str, source: str, target: str) -> bool:
        return self.name == relation and self.source in (None, source) and self.target in (None, target)

    @property
    def specificity(self) -> int:
        return (self.source is not None) + (self.target is not None)


@dataclass
class PhraseBook:
    """Type nouns and relation phrases for one graph, with generic fallbacks."""

    types: dict[str, tuple[str, str]] = field(default_factory=dict)
    relations: list[RelationPhrases] = field(default_factory=list)
    origin: str = "<generic>"

    def singular(self, node_type: str) -> str:
        return self.types.get(node_type, (_words(node_type), ""))[0]

    def plural(self, node_type: str) -> str:
        found = self.types.get(node_type)
        return found[1] if found else _pluralize(_words(node_type))

    def relation_phrases(self, relation: str, source: str, target: str, answer_is_source: bool) -> tuple[str, ...]:
        """Verb phrases (with an ``{anchor}`` slot) saying how an answer relates to the anchor."""
        entries = [e for e in self.relations if e.matches(relation, source, target)]
        if entries:
            best = max(entries, key=lambda e: e.specificity)
            chosen = best.forward if answer_is_source else best.inverse
            if chosen:
                return chosen
        generic = GENERIC_FORWARD if answer_is_source else GENERIC_INVERSE
        return tuple(p.replace("{relation}", _words(relation)) for p in generic)


def load_phrasebook(path: str | Path) -> PhraseBook:
    """Read a phrase file; ``ValueError`` names the file and what is malformed."""
    path = Path(path)
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"phrase file {path}: cannot read it as TOML: {exc}") from exc
    return _parse(document, str(path))


def builtin_phrasebook(graph_name: str) -> PhraseBook:
    """The shipped phrase file for a named graph (``ark/quiz/phrases/<name>.toml``), else the generic one."""
    resource = resources.files(__package__).joinpath("phrases").joinpath(f"{graph_name}.toml")
    if not graph_name or not resource.is_file():
        return PhraseBook()
    return _parse(tomllib.loads(resource.read_text(encoding="utf-8")), f"built-in phrases for {graph_name!r}")


def _parse(document: dict[str, Any], origin: str) -> PhraseBook:
    types: dict[str, tuple[str, str]] = {}
    for name, entry in document.get("types", {}).items():
        if not isinstance(entry, dict) or not isinstance(entry.get("singular", ""), str):
            raise ValueError(f"{origin}: [types.{name}] must be a table with 'singular' and 'plural' strings")
        singular = entry.get("singular") or _words(name)
        types[name] = (singular, entry.get("plural") or _pluralize(singular))
    relations = []
    for k, entry in enumerate(document.get("relations", [])):
        if not isinstance(entry, dict) or "name" not in entry:
            raise ValueError(f"{origin}: relations entry {k} needs a 'name'")
        phrases = {}
        for side in ("forward", "inverse"):
            value = entry.get(side, [])
            value = [value] if isinstance(value, str) else value
            bad = [p for p in value if not isinstance(p, str) or "{anchor}" not in p]
            if bad:
                raise ValueError(f"{origin}: relation {entry['name']!r}: every {side} phrase must be a string "
                                 f"with an {{anchor}} slot; bad: {bad}")
            phrases[side] = tuple(value)
        relations.append(RelationPhrases(str(entry["name"]), phrases["forward"], phrases["inverse"],
                                         entry.get("source"), entry.get("target")))
    return PhraseBook(types, relations, origin)


def _words(name: str) -> str:
    return " ".join(name.replace("_", " ").replace("-", " ").split())


def _pluralize(noun: str) -> str:
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and len(noun) > 1 and noun[-2] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"
