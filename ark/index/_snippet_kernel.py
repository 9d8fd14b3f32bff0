"""The compiled search of a tool call's snippets (:meth:`ark.methods.ark.tools.observations.Snippets.locate_all`).

Each of a search call's 20 hits is searched for the first word that starts with one of the query's terms: in Python
a ``str.find`` per term and a check of the character before each find cost ~2 us a text (with the whitespace
collapsed first, ~3.5 us: most of the snippets' share of a call on HPO). Here one call searches every text's UTF-8
bytes. It answers only where that is the same as the Python search over the collapsed text: an ASCII text of
printable characters and single line breaks, no run of whitespace, no whitespace at either end (collapsing it then
only turns line breaks into spaces, so positions do not move), shorter than ``longest``; other texts are left to
Python. Terms are lowered ASCII words. Loaded by :mod:`ark.index.kernel_warm_up` with a large index's kernels and
used only once loaded (importing numba in a tool call would stall it); the Python search is the test oracle.
"""

from __future__ import annotations

import numpy as np

from ark.index._prune_kernel import jit

LEFT_TO_PYTHON = -2  # a text this search does not answer
NOT_FOUND = -1


@jit
def word_byte(b):
    """Whether ASCII byte ``b`` is a word character (``[A-Za-z0-9_]``)."""
    return (48 <= b <= 57) or (65 <= b <= 90) or (97 <= b <= 122) or b == 95


@jit
def plain(data, start, stop):
    """Whether ``data[start:stop]`` (non-empty) collapses by turning line breaks into spaces alone: printable ASCII
    and line breaks, no two whitespace characters in a row, none first or last."""
    space = True  # the start counts as whitespace: a text may not begin with it
    for i in range(start, stop):
        b = data[i]
        if b == 10 or b == 32:
            if space:
                return False
            space = True
        elif 33 <= b <= 126:
            space = False
        else:
            return False
    return not space


@jit
def first_matches(data, lengths, terms, term_lengths, longest):
    """Per text (``lengths`` bytes each, one after another in ``data``): ``(start, end)`` of the first word that
    starts with one of ``terms`` (lowered ASCII words, ``term_lengths`` bytes each, one after another), the word
    to its end; ``(NOT_FOUND, NOT_FOUND)`` when no word does; ``(LEFT_TO_PYTHON, 0)`` for a text this search does
    not answer (see the module doc)."""
    out = np.full((len(lengths), 2), NOT_FOUND, np.int64)
    start = 0
    for j in range(len(lengths)):
        stop = start + lengths[j]
        if lengths[j] >= longest or (lengths[j] and not plain(data, start, stop)):
            out[j, 0], out[j, 1] = LEFT_TO_PYTHON, 0
        else:
            at = first_word(data, start, stop, terms, term_lengths)
            if at >= 0:
                end = at
                while end < stop and word_byte(data[end]):
                    end += 1
                out[j, 0], out[j, 1] = at - start, end - start
        start = stop
    return out


@jit
def first_word(data, start, stop, terms, term_lengths):
    """The first position of ``data[start:stop]`` that starts a word and, lowered, one of ``terms``; -1 if none."""
    for i in range(start, stop):
        if not word_byte(data[i]) or (i > start and word_byte(data[i - 1])):
            continue
        t0 = 0
        for k in range(len(term_lengths)):
            n = term_lengths[k]
            if i + n <= stop:
                same = True
                for m in range(n):
                    b = data[i + m]
                    if 65 <= b <= 90:
                        b += 32
                    if b != terms[t0 + m]:
                        same = False
                        break
                if same:
                    return i
            t0 += n
    return -1


def warm_up() -> None:
    """Load the compiled search (from numba's disk cache, or compile it) by one small call (the preparation with
    which :func:`ark.index.kernel_warm_up.warm_up` asks :func:`ark.index.optional_kernel.optional_kernel` for this
    module: tool calls get it from :func:`~ark.index.optional_kernel.loaded_kernel` only after that)."""
    first_matches(np.frombuffer(b"Ab c\nd", dtype=np.uint8), np.array([6], dtype=np.int64),
                  np.frombuffer(b"c", dtype=np.uint8), np.array([1], dtype=np.int64), 2048)
