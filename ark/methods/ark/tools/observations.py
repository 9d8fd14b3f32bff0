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

from pydantic import BaseModel

from ark.text import clean_inline, did_you_mean


def node_label(index: int, name: str, node_type: str, name_limit: int) -> str:
    """``[index] name (type)``; brackets in names are kept, line breaks are not."""
    return f"[{index}] {clean_inline(name, name_limit) or '(no name)'} ({node_type})"


def snippet(text: str, terms: list[str], width: int) -> str | None:
    """``...before **term** after...`` around the first occurrence of any term (word-prefix, case-insensitive)."""
    if not text or not terms:
        return None
    pattern = _terms_pattern(tuple(terms))
    flat = " ".join(text.split())
    match = pattern.search(flat)
    if match is None:
        return None
    word = match.group(0)[: max(width // 2, 10)]
    side = max((width - len(word)) // 2, 0)
    start, end = max(match.start() - side, 0), min(match.end() + side, len(flat))
    before, after = flat[start: match.start()], flat[match.end(): end]
    return ("..." if start > 0 else "") + f"{before}**{word}**{after}" + ("..." if end < len(flat) else "")


@functools.lru_cache(maxsize=256)
def _terms_pattern(terms: tuple[str, ...]) -> re.Pattern:
    """The word-prefix pattern of ``terms`` (deduplicated, longest first), built once per query: a tool call
    snippets up to 20 results with the same terms, and sorting, escaping and joining them per result was about a
    tenth of the tool time on a STaRK-size graph."""
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


def detail_levels(snippet_chars: int, name_chars: int) -> list[Detail]:
    """The :data:`DETAIL_LEVELS` for the configured snippet and name widths, most detailed first."""
    levels = []
    for snippet_share, name_share in DETAIL_LEVELS:
        level = Detail(int(snippet_chars * snippet_share), max(int(name_chars * name_share), MIN_NAME_CHARS))
        if level not in levels:
            levels.append(level)
    return levels


def fit_observation(header: list[str], render: Callable[[Detail], list[list[str]]], footer: list[str], limit: int,
                    snippet_chars: int, name_chars: int) -> tuple[str, Detail]:
    """The observation text at the most detailed level that fits ``limit`` characters, and that level.

    ``render(detail)`` returns the entries' lines at a detail level. Every entry is always shown: when even the
    least detailed level is longer than ``limit`` (a cap set below what the list needs), the text is longer than
    the cap rather than missing results.
    """
    levels = detail_levels(snippet_chars, name_chars)
    for level in levels:
        text = "\n".join([*header, *(line for entry in render(level) for line in entry), *footer])
        if len(text) <= limit:
            break
    return text, level


def suggested(names: list[str], valid: list[str]) -> str:
    """The unknown ``names``, quoted, each with the one valid name closest to it (when one is close)."""
    return ", ".join(f"{name!r}{did_you_mean(name, valid)}" for name in names)
