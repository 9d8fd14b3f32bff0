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
"""

from __future__ import annotations

import re

from ark.text import clean_inline


def node_label(index: int, name: str, node_type: str, name_limit: int) -> str:
    """``[index] name (type)``; brackets in names are kept, line breaks are not."""
    return f"[{index}] {clean_inline(name, name_limit) or '(no name)'} ({node_type})"


def snippet(text: str, terms: list[str], width: int) -> str | None:
    """``...before **term** after...`` around the first occurrence of any term (word-prefix, case-insensitive)."""
    if not text or not terms:
        return None
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(t) for t in sorted(set(terms), key=len, reverse=True))
                         + r")\w*", re.IGNORECASE)
    flat = " ".join(text.split())
    match = pattern.search(flat)
    if match is None:
        return None
    word = match.group(0)[: max(width // 2, 10)]
    side = max((width - len(word)) // 2, 0)
    start, end = max(match.start() - side, 0), min(match.end() + side, len(flat))
    before, after = flat[start: match.start()], flat[match.end(): end]
    return ("..." if start > 0 else "") + f"{before}**{word}**{after}" + ("..." if end < len(flat) else "")


def count_of(count: int, noun: str) -> str:
    """``"1 node"``, ``"3 nodes"``: a count with its noun in the right number (nouns here take a plain -s)."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def fit_lines(lines: list[str], footer: list[str], limit: int) -> str:
    """Join ``lines`` then ``footer``, dropping trailing result lines so the text stays within ``limit``."""
    return _fit(lines, footer, limit)[0]


def fit_entries(header: list[str], entries: list[list[str]], footer: list[str], limit: int) -> tuple[str, int]:
    """:func:`fit_lines` over ``header`` then each entry's lines; also returns how many entries kept their first
    line (so structured results list exactly the entries the model saw)."""
    text, kept = _fit(header + [line for entry in entries for line in entry], footer, limit)
    kept -= len(header)
    shown = used = 0
    for entry in entries:
        if used >= kept:
            break
        shown += 1
        used += len(entry)
    return text, shown


def _fit(lines: list[str], footer: list[str], limit: int) -> tuple[str, int]:
    """The fitted text and how many of ``lines`` it kept."""
    note = f"(Output cut to {limit} characters.)"
    text = "\n".join(lines + footer)
    if len(text) <= limit:
        return text, len(lines)
    budget = limit - len("\n".join(footer)) - len(note) - 2
    kept: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > budget:
            break
        kept.append(line)
        used += len(line) + 1
    return "\n".join([*kept, note, *footer])[:limit], len(kept)
