"""The user's words as data: which words of a question name which node type or relation of a graph's schema.

``vocabulary.json`` beside this module holds a small general vocabulary (symptom, sign, feature → phenotype-like
types; condition, disorder, illness → disease-like types; kinds, types, forms, subtypes → the hierarchy relation);
a graph folder may add a ``vocabulary.toml`` of the same form (JSON for the shipped file: an offline ``ark ask``
must not pay for importing a TOML parser; a graph's own file is read only where it exists). Entries are matched
against the graph's own type and relation names (and descriptions, ``GraphInfo.type_descriptions`` /
``relation_descriptions``), so the same file serves HPO (``phenotype``, ``has_phenotype``) and PRIME
(``effect/phenotype``, ``phenotype_present``).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ark.errors import ArkError

from ..graph import normalize_name

VOCABULARY_FILE = "vocabulary.toml"
_DEFAULT = Path(__file__).with_name("vocabulary.json")


class VocabularyError(ValueError, ArkError):
    """A vocabulary file that does not have the documented form (names the file and the offending entry)."""


@dataclass(frozen=True)
class TypeEntry:
    """Words of a question (``words``) that name the types and relations whose names hold a ``schema`` word."""

    words: tuple[str, ...]
    schema: tuple[str, ...]


@dataclass
class Vocabulary:
    types: list[TypeEntry] = field(default_factory=list)
    narrower: list[str] = field(default_factory=list)
    broader: list[str] = field(default_factory=list)
    hierarchy_relations: set[str] = field(default_factory=set)
    frame: set[str] = field(default_factory=set)
    two_levels: list[str] = field(default_factory=list)  # a step of two along the hierarchy ("grandparent")

    def extend(self, other: Vocabulary) -> Vocabulary:
        return Vocabulary(self.types + other.types, self.narrower + other.narrower, self.broader + other.broader,
                          self.hierarchy_relations | other.hierarchy_relations, self.frame | other.frame,
                          self.two_levels + other.two_levels)


def _strings(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise VocabularyError(f"{where} must be a list of non-empty strings, got {value!r}")
    return [v.strip().lower() for v in value]


def parse_vocabulary(data: dict[str, Any], source: str = VOCABULARY_FILE) -> Vocabulary:
    """A vocabulary from the parsed TOML of ``source`` (:class:`VocabularyError` naming what is wrong)."""
    known = {"type", "hierarchy", "frame"}
    unknown = sorted(set(data) - known - {"comment"})
    if unknown:
        raise VocabularyError(f"{source}: unknown table(s) {', '.join(unknown)}; valid: {', '.join(sorted(known))}")
    entries = data.get("type", [])
    if not isinstance(entries, list):
        raise VocabularyError(f"{source}: 'type' must be an array of tables ([[type]])")
    types = []
    for n, entry in enumerate(entries):
        if not isinstance(entry, dict) or set(entry) - {"words", "schema"} or "words" not in entry:
            raise VocabularyError(f"{source}: [[type]] entry {n + 1} must have 'words' and optionally 'schema', "
                                  f"got {entry!r}")
        words = _strings(entry["words"], f"{source}: [[type]] entry {n + 1} 'words'")
        schema = _strings(entry.get("schema", words), f"{source}: [[type]] entry {n + 1} 'schema'")
        types.append(TypeEntry(tuple(words), tuple(schema)))
    hierarchy = data.get("hierarchy", {})
    bad = sorted(set(hierarchy) - {"narrower", "broader", "relations", "two_levels"})
    if bad:
        raise VocabularyError(f"{source}: unknown key(s) {', '.join(bad)} in [hierarchy]; valid: broader, narrower, "
                              "relations, two_levels")
    frame = data.get("frame", {})
    if set(frame) - {"words"}:
        raise VocabularyError(f"{source}: [frame] takes only 'words', got {', '.join(sorted(frame))}")
    return Vocabulary(
        types=types,
        narrower=_strings(hierarchy.get("narrower", []), f"{source}: [hierarchy] narrower"),
        broader=_strings(hierarchy.get("broader", []), f"{source}: [hierarchy] broader"),
        hierarchy_relations={normalize_name(r) for r in _strings(hierarchy.get("relations", []),
                                                                  f"{source}: [hierarchy] relations")},
        frame=set(_strings(frame.get("words", []), f"{source}: [frame] words")),
        two_levels=_strings(hierarchy.get("two_levels", []), f"{source}: [hierarchy] two_levels"),
    )


def read_vocabulary(path: Path) -> Vocabulary:
    """A vocabulary file: TOML (a graph folder's ``vocabulary.toml``) or JSON (the shipped one)."""
    if path.suffix == ".json":
        return parse_vocabulary(json.loads(path.read_text(encoding="utf-8")), str(path))
    import tomllib  # only where a graph brings its own words (start-up time of an offline ark ask)

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise VocabularyError(f"{path}: not valid TOML: {exc}") from None
    return parse_vocabulary(data, str(path))


@functools.cache
def default_vocabulary() -> Vocabulary:
    """The general vocabulary shipped with ARK."""
    return read_vocabulary(_DEFAULT)


def graph_vocabulary(graph_path: Path | None) -> Vocabulary:
    """The shipped vocabulary plus the graph folder's own ``vocabulary.toml`` when it has one."""
    vocabulary = default_vocabulary()
    if graph_path is not None and (Path(graph_path) / VOCABULARY_FILE).is_file():
        vocabulary = vocabulary.extend(read_vocabulary(Path(graph_path) / VOCABULARY_FILE))
    return vocabulary


def plural_forms(word: str) -> set[str]:
    """A word or phrase and its plural (its last word inflected: symptom → symptoms, y → ies, s/x/sh/ch → es)."""
    forms = {word}
    if word.endswith("y") and not word.endswith(("ay", "ey", "oy", "uy")):
        forms.add(word[:-1] + "ies")
    elif word.endswith(("s", "x", "sh", "ch")):
        forms.add(word + "es")
    else:
        forms.add(word + "s")
    return forms


def _name_words(name: str) -> set[str]:
    parts = [p for p in re.split(r"[/_\s-]+", name.lower()) if p]
    return {*parts, " ".join(parts)}


def matches_schema(entry: TypeEntry, name: str, description: str = "") -> bool:
    """Whether a type or relation called ``name`` (with an optional description) is what ``entry`` names: its name
    or description holds one of the entry's schema words (or their plurals)."""
    words = _name_words(name) | set(re.findall(r"[a-z]+", description.lower()))
    return any(plural_forms(s) & words for s in entry.schema)


def type_vocabulary(vocabulary: Vocabulary, node_types: list[str],
                    descriptions: Mapping[str, str] | None = None) -> dict[str, set[str]]:
    """For each node type, the user words (with plurals) that name it, from the entries its name matches. A word
    that is another type's own name is left to that type."""
    descriptions = descriptions or {}
    own = {t: _name_words(t) for t in node_types}
    out: dict[str, set[str]] = {t: set() for t in node_types}
    for entry in vocabulary.types:
        for node_type in node_types:
            if matches_schema(entry, node_type, descriptions.get(node_type, "")):
                for word in entry.words:
                    if not any(word in names for other, names in own.items() if other != node_type):
                        out[node_type] |= plural_forms(word)
    return out


def relation_vocabulary(vocabulary: Vocabulary, relations: list[str], node_types: list[str],
                        descriptions: Mapping[str, str] | None = None) -> dict[str, set[str]]:
    """For each relation, the user words (with plurals) that name what it links to, from the [[type]] entries its
    name matches ("symptoms" → ``has_phenotype``, ``phenotype_present``); the types' own names are left out (a
    question naming "phenotypes" says which type it wants, not which relation)."""
    descriptions = descriptions or {}
    own = set().union(*(_name_words(t) for t in node_types)) if node_types else set()
    out: dict[str, set[str]] = {r: set() for r in relations}
    for entry in vocabulary.types:
        words = {form for w in entry.words if w not in own for form in plural_forms(w)}
        for relation in relations:
            if matches_schema(entry, relation, descriptions.get(relation, "")):
                out[relation] |= words
    return out


def phrase_pattern(phrases: list[str]) -> re.Pattern[str] | None:
    """One case-insensitive pattern for whole-word phrases; a trailing ``*`` matches any ending."""
    if not phrases:
        return None
    parts = []
    for phrase in sorted(set(phrases), key=len, reverse=True):
        open_end = phrase.endswith("*")
        body = r"[\s-]+".join(re.escape(w) for w in re.split(r"[\s-]+", phrase.rstrip("*")) if w)
        parts.append(body + (r"\w*" if open_end else r"\b"))
    return re.compile(r"\b(?:" + "|".join(parts) + ")", re.IGNORECASE)
