"""The graph's evidence for fused answers (the ``fusion_evidence`` option), read from the graph itself.

The vote fusion's tie-break (fusion.py) may consult the graph before the paper's earliest-position rule: among nodes
with equal votes, a node linked to more of the question's *anchors* (the nodes the question names) comes first.
This module finds the anchors and reads each answered node's key; it runs no agent and asks no model.

- anchors: nodes among the relevance index's top hits for the question whose name occurs in the question as a
  whole phrase (case and punctuation aside), e.g. "Marfan syndrome" in "Which genes cause Marfan syndrome?";
- a node's key: ``(anchors it is linked to, edges linking it to them)``, larger is stronger.

With no anchor found the keys are empty and the paper's rule alone orders each vote group.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ark.text import words

if TYPE_CHECKING:
    from ark.graph import KnowledgeGraph
    from ark.index.graph_index import TextIndex

ANCHOR_CANDIDATES = 50  # the index's top hits searched for the nodes the question names


def _phrase(text: str) -> str:
    """``text`` as space-joined lower-case words, padded so that a containment test matches whole words."""
    return f" {' '.join(words(text))} "


def question_anchors(graph: KnowledgeGraph, index: TextIndex, question: str,
                     candidates: int = ANCHOR_CANDIDATES) -> list[int]:
    """The nodes the question names: top hits of ``index`` whose name is a whole phrase of ``question``."""
    asked = _phrase(question)
    found = []
    for node, _ in index.search(question, candidates):
        name = _phrase(graph.name(node))
        if name.strip() and name in asked:
            found.append(node)
    return list(dict.fromkeys(found))


def evidence_keys(graph: KnowledgeGraph, anchors: Iterable[int], nodes: Iterable[int]
                  ) -> dict[int, tuple[int, ...]]:
    """Each of ``nodes``' key ``(anchors linked, edges to them)``; empty when there is no anchor. An anchor
    answering its own question is linked to itself once (the question names it)."""
    wanted = set(anchors)
    if not wanted:
        return {}
    keys: dict[int, tuple[int, ...]] = {}
    for node in dict.fromkeys(int(n) for n in nodes):
        if not graph.is_valid_index(node):
            continue
        linked = [int(j) for j in graph.neighbors(node).nodes.tolist() if int(j) in wanted]
        if node in wanted:
            linked.append(node)
        keys[node] = (len(set(linked)), len(linked))
    return keys


def graph_evidence(graph: KnowledgeGraph, index: TextIndex, question: str, nodes: Iterable[int]
                   ) -> dict[int, tuple[int, ...]]:
    """The keys of ``nodes`` for ``question``: :func:`question_anchors`, then :func:`evidence_keys`."""
    return evidence_keys(graph, question_anchors(graph, index, question), nodes)
