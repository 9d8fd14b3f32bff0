"""Where a question or a node's text says a name: whole-word matches, runs of words and their written form.

Pure functions of strings and word tuples, used by the offline policy's anchoring.
"""

from __future__ import annotations

import re
from collections.abc import Iterable


def listed_names(text: str) -> list[str]:
    """The names a node's text lists: each line without its field label ("Synonyms: "), and the parts of a line
    separated by semicolons or bars ("a; b | c")."""
    out = []
    for line in text.splitlines():
        line = re.sub(r"^\s*[\w ]{1,30}:\s+", "", line)
        out += [part.strip() for part in re.split(r"[;|]", line) if part.strip()]
    return out


def says(text: str, name: str) -> bool:
    """Whether lower-cased ``text`` holds ``name`` as whole words."""
    name = name.lower().strip()
    if len(name) < 3:
        return False
    start = text.find(name)
    while start >= 0:
        end = start + len(name)
        if (start == 0 or not text[start - 1].isalnum()) and (end == len(text) or not text[end].isalnum()):
            return True
        start = text.find(name, start + 1)
    return False


def find_run(haystack: tuple[str, ...], needle: tuple[str, ...]) -> int:
    """Start of the first occurrence of ``needle`` as a contiguous run in ``haystack``, or -1."""
    n = len(needle)
    for start in range(len(haystack) - n + 1):
        if haystack[start:start + n] == needle:
            return start
    return -1


def find_runs(haystack: tuple[str, ...], needle: tuple[str, ...]) -> list[int]:
    """Starts of every occurrence of ``needle`` as a contiguous run in ``haystack``."""
    n = len(needle)
    return [start for start in range(len(haystack) - n + 1) if n and haystack[start:start + n] == needle]


def longest_common_run(name: tuple[str, ...], words: tuple[str, ...]) -> tuple[str, ...]:
    """The longest run of consecutive words of ``name`` that also occurs consecutively in ``words``."""
    best: tuple[str, ...] = ()
    for start in range(len(name)):
        for end in range(len(name), start + len(best), -1):
            if find_run(words, name[start:end]) >= 0:
                best = name[start:end]
                break
    return best


def surface(text: str, run: tuple[str, ...]) -> str:
    """The run of words as the text writes them ("ehlers danlos syndrome" -> "Ehlers-Danlos syndrome")."""
    pattern = r"\W+".join(re.escape(w) for w in run)
    match = re.search(pattern, text, re.IGNORECASE)
    return match.group(0) if match else " ".join(run)


def word_at(text: str, pos: int) -> str:
    """The word of ``text`` starting at ``pos`` ("" when none does)."""
    match = re.match(r"\w+", text[pos:])
    return match.group(0) if match else ""


def name_spans(text: str, names: Iterable[str]) -> list[tuple[int, int]]:
    """Where ``text`` says each of ``names`` (case-insensitive), in order of position: the longest name first, so
    that a name inside a longer one found there ("Parasite" in "Parasite Eve") is not found again inside it."""
    found: list[tuple[int, int]] = []
    for name in sorted(dict.fromkeys(n for n in names if n), key=len, reverse=True):
        found += [m.span() for m in re.finditer(re.escape(name), text, re.IGNORECASE)
                  if not any(start < m.end() and m.start() < end for start, end in found)]
    return sorted(found)


def without_names(text: str, names: Iterable[str]) -> str:
    """``text`` with each of ``names`` it says cut out (a space in its place; see :func:`name_spans`)."""
    kept, last = [], 0
    for start, end in name_spans(text, names):
        kept += [text[last:start], " "]
        last = end
    return "".join(kept) + text[last:]


def whole_words(text: str, span: tuple[int, int]) -> bool:
    """Whether the span of ``text`` starts and ends at word boundaries (no letter or digit beside it)."""
    start, end = span
    return (start == 0 or not text[start - 1].isalnum()) and (end == len(text) or not text[end].isalnum())
