"""Snippets of tool observations: the same text as the plain definition (the first word-prefix match of any term,
case-insensitive, in the text with its whitespace collapsed, cut to the width around it) on texts of every kind,
short and long, ASCII and not, whichever path finds the match."""

from __future__ import annotations

import random
import re

import pytest

from ark.index import optional_kernel as optional_kernel_module
from ark.methods.ark.tools import observations
from ark.methods.ark.tools.observations import Snippets, snippet


def defined_snippet(text: str, terms: list[str], width: int) -> str | None:
    """The definition, written the plain way (collapse the whole text, one compiled pattern)."""
    if not text or not terms:
        return None
    ordered = sorted(set(terms), key=lambda t: (-len(t), t))
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(t) for t in ordered) + r")\w*", re.IGNORECASE)
    flat = " ".join(text.split())
    match = pattern.search(flat)
    if match is None:
        return None
    word = match.group(0)[: max(width // 2, 10)]
    side = max((width - len(word)) // 2, 0)
    start, end = max(match.start() - side, 0), min(match.end() + side, len(flat))
    return ("..." if start > 0 else "") + f"{flat[start:match.start()]}**{word}**{flat[match.end():end]}" + (
        "..." if end < len(flat) else "")


PIECES = ["a", "b", "Ab", "seiz", "ure", " ", "  ", "\n", "\t", " \n ", "_", "-", "é", "İ", "ſ", "K", "1", ".", "(",
          "\u2003", "\x1c", "ß", " " * 50, "\n" * 120, "word " * 30]
TERM_SETS = [["seiz"], ["ab"], ["a", "ab"], ["seizure", "ure"], ["é"], ["ss"], ["k"], ["s"], ["a b"], ["b-a"], ["1"],
             ["_"], ["ab", "seiz", "b"], ["seizur", "seiz", "seizures"]]


@pytest.mark.parametrize("long_from", [observations.LONG_TEXT_CHARS, 0])  # 0: every text takes the window path
def test_snippets_equal_the_definition_on_random_texts(monkeypatch, long_from):
    monkeypatch.setattr(observations, "LONG_TEXT_CHARS", long_from)
    rng = random.Random(7)
    for _ in range(6000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 120)))
        terms = rng.choice(TERM_SETS)
        width = rng.choice([0, 1, 5, 10, 20, 40, 160])
        assert snippet(text, terms, width) == defined_snippet(text, terms, width), (text, terms, width)


@pytest.fixture(params=["python", "compiled"])
def snippet_search(request, monkeypatch):
    """``locate_all`` searched in Python, then by the compiled search a large index's warm-up loads (numba)."""
    if request.param == "python":  # as before the warm-up has loaded it (or without numba)
        monkeypatch.delitem(optional_kernel_module._LOADED, "_snippet_kernel", raising=False)
        yield request.param
        return
    pytest.importorskip("numba")
    _snippet_kernel = optional_kernel_module.optional_kernel("_snippet_kernel", lambda kernel: kernel.warm_up())
    calls = []
    real = _snippet_kernel.first_matches
    monkeypatch.setattr(_snippet_kernel, "first_matches", lambda *a: calls.append(1) or real(*a))
    yield request.param
    assert calls, "the compiled search was never taken"


def test_snippets_of_a_tool_calls_hits_found_together_equal_each_found_alone(snippet_search):
    """``locate_all`` (a call's matches, found once and shown at each detail level) shows, at every width, the
    snippet the definition gives for each text alone, whatever the texts beside it (empty, non-ASCII, long), found
    in Python or by the compiled search (which leaves the texts it cannot answer to Python)."""
    rng = random.Random(11)
    ascii_pieces = [piece for piece in PIECES if piece.isascii()]  # most batches: all ASCII, found together
    words = ["a", "b", "Ab", "seiz", "ure", "Seizures", "_a", "b-a", "1", "(K)", "x.y"]
    for _ in range(1500):
        pieces = PIECES if rng.random() < 0.2 else ascii_pieces
        texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 60))) for _ in range(rng.randint(1, 20))]
        if rng.random() < 0.4:  # node-text-like: words, single spaces and line breaks (collapsed by one replace)
            texts = ["".join(rng.choice(words) + rng.choice(" \n") for _ in range(rng.randint(1, 30))).strip()
                     for _ in range(rng.randint(1, 20))]
        if rng.random() < 0.05:
            texts.append("seiz " * 600)  # one long text: only its windows are collapsed
        terms = rng.choice(TERM_SETS)
        located = Snippets(terms).locate_all(texts)
        assert len(located) == len(texts)
        for text, where in zip(texts, located, strict=True):
            for width in (0, 10, 40, 160):
                assert Snippets.show(where, width) == defined_snippet(text, terms, width), (text, terms, width)


def test_a_long_text_is_cut_around_its_first_match_without_collapsing_it_whole():
    text = ("filler   text\n\n" * 400) + "the  PROGRESSIVE\thearing loss" + (" tail\n" * 400)
    found = Snippets(["progress", "hearing"])(text, 40)
    assert found == defined_snippet(text, ["progress", "hearing"], 40)
    assert found is not None and "**PROGRESSIVE**" in found and found.startswith("...") and found.endswith("...")


def test_highlight_terms_are_the_indexes_tokens_and_stems(graph, index):
    """A BM25 index gives its tokens and their stems (``seizures`` also highlights ``seizur``); an index without
    terms (a plain TextIndex, e.g. dense) falls back to the query's words."""
    from ark.index import BM25Index, GraphTextIndex
    from ark.index.graph_index import TermHighlighter
    from ark.index.tokenizer import Tokenizer
    from ark.methods.ark.tools import Toolbox

    stemming = GraphTextIndex(graph, BM25Index.build(["x"] * graph.num_nodes, tokenizer=Tokenizer(stemmer="english")))
    assert isinstance(stemming, TermHighlighter)
    assert Toolbox(graph, stemming).highlight_terms("Seizures of the brain") == ["seizures", "brain", "seizur"]

    class NoTerms:
        def search(self, query, k, node_types=None):
            return []

        def score(self, query, candidates):
            return []

    assert not isinstance(NoTerms(), TermHighlighter)
    assert Toolbox(graph, NoTerms()).highlight_terms("Seizures of the brain") == ["seizures", "brain"]
