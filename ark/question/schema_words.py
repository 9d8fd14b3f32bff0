"""Which relation of a graph's own schema a question's words name, and which node type that asks for.

Relation names are read as English: their words (``acted_in`` → acted; ``directed``; ``maintained_by`` →
maintained) and, where the graph gives one, their description's words, each cut to stems by a few generic
English endings (``directed``, ``director``, ``directs`` → direct; ``acted``, ``actors`` → act; see
:func:`stems`). A question word of the same stem names the relation. An agent noun (``director``, ``actors``,
``maintainer``: -or, -er, -ist) names the nodes that do what the relation says: its source, or its target for a
passive relation (``written_by``, ``maintained_by``). No domain words here: the words come from the graph.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..text import ENGLISH_STOPWORDS

# Generic endings, longest first; a stem keeps at least three letters.
_ENDINGS = ("ations", "ation", "ments", "ment", "ances", "ance", "ences", "ence", "ings", "ing", "ors", "ers",
            "ists", "ist", "ies", "ied", "ed", "es", "or", "er", "s", "e")
_AGENT_ENDINGS = ("ors", "ers", "ists", "or", "er", "ist")
_GENERIC = frozenset({"has", "have", "had", "is", "a", "an", "of", "with", "to", "in", "on", "by", "for", "the",
                      "associated", "related", "linked", "connected", "link", "relation", "related_to", "and", "or",
                      "from", "at", "as", "be", "are", "was", "were", "this", "that", "it", "its"})
# Words that say the node the question names is not itself wanted ("which *other* films ...", "the *same* ... as").
EXCLUDES_NAMED = re.compile(r"\b(?:other|others|else|siblings?|besides|apart from|aside from|except|excluding|"
                            r"same)\b", re.I)


def excludes_outside(question: str, names: Iterable[str]) -> bool:
    """Whether a word of :data:`EXCLUDES_NAMED` stands in ``question`` outside the ``names`` it contains: in
    "... of Corneal opacification with *other* ocular anomalies" the word is part of a node's name, not the question's
    "which *other* ..."."""
    for name in names:
        if name:
            question = re.sub(re.escape(name), " ", question, flags=re.I)
    return bool(EXCLUDES_NAMED.search(question))


# Abbreviations that end in a full stop inside a name ("Dr. Smith", "St. Louis"): a capital and one or two
# lower-case letters before it, a capitalised word after it.
_ABBREVIATION = re.compile(r"(?:^|(?<=\W))[A-Z][a-z]{1,2}\.$")


def stems(word: str) -> frozenset[str]:
    """A word and its cuts by each generic ending that leaves at least three letters (``directed`` → direct;
    ``authored`` → author; ``actors`` → act); a doubled last consonant counts once ("mapped" → map)."""
    word = word.lower()
    out = {word}
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            cut = word[: -len(ending)]
            doubled = len(cut) >= 4 and cut[-1] == cut[-2] and cut[-1] not in "aeiouls"
            if ending in ("ed", "ing", "er", "ers") and doubled:
                cut = cut[:-1]
            out.add(cut)
    return frozenset(out)


def same_stem(a: frozenset[str], b: frozenset[str], a_word: str, b_word: str) -> bool:
    """Whether two words' stems meet: in four letters or more, or in three when both words are short."""
    return any(len(s) >= 4 or (len(a_word) <= 6 and len(b_word) <= 6) for s in a & b)


def is_agent_noun(word: str) -> bool:
    """Whether a word has an agent ending (``director``, ``actors``, ``maintainer``, ``publisher``)."""
    lower = word.lower()
    return any(lower.endswith(e) and len(lower) - len(e) >= 3 for e in _AGENT_ENDINGS)


def relation_words(relation: str) -> list[str]:
    """The content words of a relation's name (``maintained_by`` → maintained; ``acted_in`` → acted)."""
    return [w for w in re.split(r"[^a-z0-9]+", relation.lower()) if w and w not in _GENERIC]


def is_passive(relation: str) -> bool:
    """Whether a relation's name reads passively (``written_by``: its target does what it says)."""
    return bool(re.search(r"(?:^|[_\s/-])by$", relation.lower()))


@dataclass(frozen=True)
class NamedRelation:
    """A relation a question word names; ``agent`` when the word is an agent noun naming who does it."""

    relation: str
    word: str
    agent: bool


class SchemaWords:
    """The stems of one graph's relation names (and descriptions) and the types at their ends."""

    def __init__(self, relations: Iterable[str], descriptions: Mapping[str, str] | None = None,
                 ignored: Iterable[str] = ()) -> None:
        ignored = set(ignored)
        descriptions = descriptions or {}
        self.stems: dict[str, list[tuple[str, frozenset[str]]]] = {}
        for relation in relations:
            described = re.findall(r"[a-z]+", descriptions.get(relation, "").lower())
            words = relation_words(relation) + [w for w in described if len(w) >= 4 and w not in _GENERIC
                                                and w not in ENGLISH_STOPWORDS][:12]
            self.stems[relation] = [(w, stems(w)) for w in dict.fromkeys(words) if w not in ignored]

    def named(self, question_words: Iterable[str]) -> list[NamedRelation]:
        """The relations the question's words name, in the question's order (one entry per relation)."""
        out: list[NamedRelation] = []
        for word in question_words:
            # A stopword names no relation, even one whose name holds it ("Under which licence ...": not
            # classified_under), nor is it an agent noun ("under", "after").
            if len(word) < 3 or word in _GENERIC or word.lower() in ENGLISH_STOPWORDS:
                continue
            mine = stems(word)
            for relation, theirs in self.stems.items():
                if any(same_stem(mine, s, word, w) for w, s in theirs) and all(n.relation != relation for n in out):
                    out.append(NamedRelation(relation, word, is_agent_noun(word)))
        return out


def agent_type(relation: str, schema: Iterable[tuple[str, str, str]]) -> str | None:
    """The type of the nodes doing what a relation says: its source type (its target for a passive relation), when
    the schema gives it one."""
    ends = {(s if not is_passive(relation) else t) for s, r, t in schema if r == relation}
    return next(iter(ends)) if len(ends) == 1 else None


def split_keeps(text: str, position: int) -> bool:
    """Whether the full stop at ``position`` lies inside a name: an abbreviation before it ("Dr. Smith") or a
    character right after it ("X-1.0", "node.js")."""
    after = text[position + 1: position + 2]
    if after and not after.isspace():
        return True
    follows = re.match(r"\s+[A-Z]", text[position + 1:])
    return bool(follows and _ABBREVIATION.search(text[: position + 1]))
