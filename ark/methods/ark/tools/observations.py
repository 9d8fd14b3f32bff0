"""The text the model reads after each tool call: formats and the helpers that build them.

Formats (what the model sees; every other consumer reads the tools' structured ``data`` instead):

``search_in_graph``::

    Found 2 nodes for query: 'seizure':

    [12] Seizure (phenotype) - Score: 7.314
        Context: ...recurrent **seizures** of ...
    [40] Febrile seizure (phenotype) - Score: 5.102

    (empty result) No nodes found for query: 'xyz'

``search_in_neighborhood``::

    Search around [12] Seizure (phenotype) (query='x', node_type=disease, edge_type=has_phenotype) found 57 results:

    1. [456] Epilepsy (disease) <-has_phenotype-
        Context: ...
    2. -is_a-> [3] Abnormality of the nervous system (phenotype)

    (Showing 20 of 57 results. You may want to refine your search.)

A neighbor line is ``<rank>. [-rel->] [index] name (type) [<-rel-]``: ``-rel->`` before the node marks edges from
the centre to it, ``<-rel-`` after it edges from it to the centre; several relations are comma-joined.

``add_to_answer``: ``Added the following nodes to the answer:`` then ``- [index] name (type)`` lines, each followed by
``  Reasoning: ...``.

Every observation lists *all* its results: when the text would exceed ``tools.max_observation_chars``, snippets are
shortened, then dropped, then names are shortened (:func:`fit_observation`), so the structured ``data["results"]``
and the text always hold the same entries.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel

from ark.arrays import I64, U8
from ark.index.optional_kernel import loaded_kernel
from ark.text import clean_inline, did_you_mean


def node_label(index: int, name: str, node_type: str, name_limit: int) -> str:
    """``[index] name (type)``; brackets in names are kept, line breaks are not."""
    return f"[{index}] {clean_inline(name, name_limit) or '(no name)'} ({node_type})"


def node_labels(indices: list[int], names: list[str], node_types: list[str], name_limit: int) -> list[str]:
    """:func:`node_label` of each node (a tool call's hits), in one loop."""
    return [f"[{index}] {clean_inline(name, name_limit) or '(no name)'} ({node_type})"
            for index, name, node_type in zip(indices, names, node_types, strict=True)]


def snippet(text: str, terms: list[str], width: int) -> str | None:
    """``...before **term** after...`` around the first occurrence of any term (word-prefix, case-insensitive) in
    the text with its whitespace collapsed (``" ".join(text.split())``); see :class:`Snippets`."""
    return Snippets(terms)(text, width)


_WORD = re.compile(r"\w+")
_WORD_TAIL = re.compile(r"\w*")
LONG_TEXT_CHARS = 2048  # from this length on, only the windows around the match are collapsed
_KERNEL = "_snippet_kernel"  # used once a large index's kernel warm-up has loaded it, never imported here
Located = tuple[str, int, int, bool]  # the text searched, the match's start and end, whether that text is collapsed


class Snippets:
    """:func:`snippet` for one query's terms, prepared once and applied to each result's text.

    ASCII word terms over an ASCII text are found with ``str.find`` (a pattern compiled per query cost 75-150 us,
    more than the 20 snippets of a tool call). A long text is searched as it is and only the two windows shown are
    collapsed: whitespace is no word character, so a word term's first match and its word are the same in both
    forms, and the text is never copied whole."""

    def __init__(self, terms: list[str]) -> None:
        self.terms = tuple(terms)
        ascii_words = [_ascii_word(term) for term in self.terms]
        self.ascii = all(ascii_words)
        self.word_terms = self.ascii or all(word or _WORD.fullmatch(term) for term, word in
                                            zip(self.terms, ascii_words, strict=True))
        # A term with another term as its prefix matches nowhere that one does not: only the shortest are searched.
        kept: list[str] = []
        for term in sorted({term.lower() for term in self.terms}, key=len):
            if not term.startswith(tuple(kept)):
                kept.append(term)
        self.lowered = tuple(kept)
        self._term_arrays: tuple[U8, I64] | None = None  # the lowered terms as the kernel takes them

    def __call__(self, text: str, width: int) -> str | None:
        return self.show(self.locate(text), width)

    def locate(self, text: str) -> Located | None:
        """Where the snippet of ``text`` lies (the same at every width): None when no term is in it."""
        if not text or not self.terms:
            return None
        whole = len(text) < LONG_TEXT_CHARS or not self.word_terms
        if whole:
            text = _collapse(text)
        found = self._first_match(text)
        return None if found is None else (text, found[0], found[1], whole)

    def locate_all(self, texts: list[str]) -> list[Located | None]:
        """:meth:`locate` for each of ``texts`` (a tool call's hits), found once for every detail level tried: in
        one compiled call over the texts' bytes where a large index's warm-up loaded it and the terms are ASCII
        words (:mod:`ark.index._snippet_kernel`: the texts it leaves are searched here). (Joining the texts,
        lowering them once and searching each term across all of them in Python measured slower, 80 against 65 us
        a call on HPO: the per-text ``find`` bounded by the best match so far does less.)"""
        kernel = loaded_kernel(_KERNEL)
        if kernel is None or not self.ascii or not self.lowered or len(texts) < 2:
            return [self.locate(text) for text in texts]
        if self._term_arrays is None:
            self._term_arrays = (np.frombuffer("".join(self.lowered).encode(), dtype=np.uint8),
                                 np.array([len(t) for t in self.lowered], dtype=np.int64))
        encoded = [text.encode("utf-8", "surrogatepass") for text in texts]
        found = kernel.first_matches(np.frombuffer(b"".join(encoded), dtype=np.uint8),
                                     np.array([len(b) for b in encoded], dtype=np.int64), *self._term_arrays,
                                     LONG_TEXT_CHARS).tolist()
        located: list[Located | None] = []
        for text, (at, end) in zip(texts, found, strict=True):
            if at >= 0:  # a plain text: collapsed by turning its line breaks into spaces
                located.append((text.replace("\n", " ") if "\n" in text else text, at, end, True))
            else:
                located.append(None if at == kernel.NOT_FOUND else self.locate(text))
        return located

    @staticmethod
    def show(located: Located | None, width: int) -> str | None:
        """The snippet ``width`` characters wide at ``located`` (from :meth:`locate`)."""
        return Snippets.show_all([located], width)[0]

    @staticmethod
    def show_all(located: list[Located | None], width: int) -> list[str | None]:
        """:meth:`show` of each of ``located`` (a tool call's hits), in one loop."""
        shown: list[str | None] = []
        word_chars = max(width // 2, 10)
        for where in located:
            if where is None:
                shown.append(None)
                continue
            text, at, end, whole = where
            word = text[at:end][:word_chars]
            side = max((width - len(word)) // 2, 0)
            if whole:
                start, stop = max(at - side, 0), min(end + side, len(text))
                before, cut_before, after, cut_after = text[start:at], start > 0, text[end:stop], stop < len(text)
            else:
                (before, cut_before), (after, cut_after) = _flat_tail(text, at, side), _flat_head(text, end, side)
            shown.append(("..." if cut_before else "") + before + "**" + word + "**" + after
                         + ("..." if cut_after else ""))
        return shown

    def _first_match(self, text: str) -> tuple[int, int] | None:
        """Start and end of the first word-prefix match of any term in ``text``, or None."""
        if self.ascii and text.isascii():
            lowered, best = text.lower(), -1
            for term in self.lowered:
                limit = best + len(term) if best >= 0 else len(lowered)
                at = lowered.find(term, 0, limit)
                while at > 0 and (lowered[at - 1].isalnum() or lowered[at - 1] == "_"):
                    at = lowered.find(term, at + 1, limit)
                if at >= 0 and (best < 0 or at < best):
                    best = at
            if best < 0:
                return None
            match = _WORD_TAIL.match(text, best)
            return best, match.end() if match else best
        match = _terms_pattern(self.terms).search(text)
        return None if match is None else (match.start(), match.end())


def _ascii_word(term: str) -> bool:
    """Whether ``term`` is all ASCII letters, digits and underscores (``[A-Za-z0-9_]+``, without a regex)."""
    return term.isascii() and term.replace("_", "a").isalnum()


def _collapse(text: str) -> str:
    """``" ".join(text.split())``, made by one replacement where that is the same: an ASCII text whose only
    whitespace is single spaces and single line breaks, none at either end (most node texts: name, then
    ``Definition:`` and ``Synonyms:`` lines; the split and join cost ~2 us each of a call's 20 snippets)."""
    flat = text.replace("\n", " ") if "\n" in text else text
    if flat.isascii() and flat.isprintable() and "  " not in flat and flat[0] != " " and flat[-1] != " ":
        return flat
    return " ".join(text.split())


def _flat_tail(text: str, stop: int, chars: int) -> tuple[str, bool]:
    """The last ``chars`` characters of ``text[:stop]`` collapsed as the whole text is (a space stands for a
    whitespace run between words), and whether collapsed text comes before them."""
    window = 2 * chars + 16
    while True:
        start = max(stop - window, 0)
        part = text[start:stop]
        flat = " ".join(part.split())
        if part and part[-1].isspace() and flat:
            flat += " "
        if start == 0 or len(flat) > chars:
            return flat[max(len(flat) - chars, 0):] if chars else "", len(flat) > chars
        window *= 4


def _flat_head(text: str, start: int, chars: int) -> tuple[str, bool]:
    """The first ``chars`` characters of ``text[start:]`` collapsed as the whole text is, and whether collapsed
    text follows them."""
    window = 2 * chars + 16
    while True:
        stop = min(start + window, len(text))
        part = text[start:stop]
        flat = " ".join(part.split())
        if part and part[0].isspace() and flat:
            flat = " " + flat
        if stop == len(text) or len(flat) > chars:
            return flat[:chars], len(flat) > chars
        window *= 4


@functools.lru_cache(maxsize=256)
def _terms_pattern(terms: tuple[str, ...]) -> re.Pattern:
    """The word-prefix pattern of ``terms`` (deduplicated, longest first), built once per query: a tool call
    snippets up to 20 results with the same terms."""
    ordered = sorted(set(terms), key=lambda t: (-len(t), t))
    return re.compile(r"\b(?:" + "|".join(re.escape(t) for t in ordered) + r")\w*", re.IGNORECASE)


def count_of(count: int, noun: str) -> str:
    """``"1 node"``, ``"3 nodes"``: a count with its noun in the right number (nouns here take a plain -s)."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


# Detail levels tried in turn until an observation fits its length cap: (share of the snippet width, name length).
# Results are never dropped: snippets shrink, then go, then names shorten (down to MIN_NAME_CHARS).
DETAIL_LEVELS = ((1.0, 1.0), (0.6, 1.0), (0.35, 0.6), (0.0, 0.5), (0.0, 0.3), (0.0, 0.0))
MIN_NAME_CHARS = 16


class Shortened(BaseModel):
    """How far a search observation was shortened to fit its cap (in a result only when it was)."""

    snippet_chars: int
    name_chars: int


@dataclass(frozen=True)
class Detail:
    """How much of each entry an observation shows: snippet width (0: no snippet) and name length."""

    snippet_chars: int
    name_chars: int


@functools.lru_cache(maxsize=64)
def detail_levels(snippet_chars: int, name_chars: int) -> tuple[Detail, ...]:
    """The :data:`DETAIL_LEVELS` for the configured snippet and name widths, most detailed first (made once per
    configuration)."""
    levels = []
    for snippet_share, name_share in DETAIL_LEVELS:
        level = Detail(int(snippet_chars * snippet_share), max(int(name_chars * name_share), MIN_NAME_CHARS))
        if level not in levels:
            levels.append(level)
    return tuple(levels)


def fit_observation(header: list[str], render: Callable[[Detail], list[str]], footer: list[str], limit: int,
                    snippet_chars: int, name_chars: int) -> tuple[str, Detail]:
    """The observation text at the most detailed level that fits ``limit`` characters, and that level.

    ``render(detail)`` returns the entries' lines (each entry's in turn) at a detail level. Every entry is always
    shown: when even the least detailed level is longer than ``limit`` (a cap set below what the list needs), the
    text is longer than the cap rather than missing results.
    """
    levels = detail_levels(snippet_chars, name_chars)
    for level in levels:
        text = "\n".join(header + render(level) + footer)
        if len(text) <= limit:
            break
    return text, level


def suggested(names: list[str], valid: list[str]) -> str:
    """The unknown ``names``, quoted, each with the one valid name closest to it (when one is close)."""
    return ", ".join(f"{name!r}{did_you_mean(name, valid)}" for name in names)
