"""Whole-word phrase matching over node texts, and per-type postings for picking distinctive phrases.

A text *mentions* a phrase when the phrase's words occur in it consecutively, as whole words, ignoring case and
the punctuation between words. Words are maximal runs of Unicode letters and digits.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from ..graph import KnowledgeGraph
from ..text import CONSTRAINT_STOPWORDS, LETTERS_AND_DIGITS
from ..text import words as split_words


def words(text: str) -> list[str]:
    """The lower-cased words of ``text`` (letters and digits; the underscore separates words)."""
    return split_words(text, pattern=LETTERS_AND_DIGITS)


def is_candidate_word(word: str) -> bool:
    """Whether ``word`` may serve as a textual constraint: 4+ characters, some letter, not a function word."""
    return len(word) >= 4 and not word.isdigit() and word not in CONSTRAINT_STOPWORDS


class TypeVocabulary:
    """For each node type: word → sorted node indices whose text contains the word (document frequency)."""

    def __init__(self, graph: KnowledgeGraph, max_df_fraction: float = 0.2) -> None:
        self.graph = graph
        self.postings: dict[str, dict[str, np.ndarray]] = {}
        for type_name in graph.node_types:
            nodes = graph.nodes_of_type(type_name)
            limit = max(1, int(max_df_fraction * len(nodes)))
            lists: dict[str, list[int]] = defaultdict(list)
            for i in nodes.tolist():
                for word in set(words(graph.text(i))):
                    if is_candidate_word(word):
                        lists[word].append(i)
            self.postings[type_name] = {
                word: np.asarray(found, dtype=np.int32) for word, found in lists.items() if len(found) <= limit
            }

    def has_text(self, type_name: str) -> bool:
        """True when some node of the type has a word usable as a textual constraint."""
        return bool(self.postings.get(type_name))

    def nodes_with(self, type_name: str, word: str) -> np.ndarray:
        """Sorted indices of ``type_name`` nodes whose text contains ``word`` (empty if it is not a candidate)."""
        return self.postings.get(type_name, {}).get(word, np.zeros(0, np.int32))

    def candidate_words(self, type_name: str, node: int) -> list[str]:
        """Distinct candidate words of one node's text, in order of first occurrence."""
        table = self.postings.get(type_name, {})
        return [w for w in dict.fromkeys(words(self.graph.text(node))) if w in table]
