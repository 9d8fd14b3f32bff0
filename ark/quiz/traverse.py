"""Exact answer sets: walk every constraint's path over the whole graph and intersect (no sampling)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ark.errors import ArkError

from ..graph import KnowledgeGraph
from ..graph.csr import row_positions
from .spec import QuestionSpec, Step
from .textmatch import words

EMPTY = np.zeros(0, np.int32)
# Up to this many start nodes, per-node typed slices (binary search in each row) beat a vectorised gather.
SMALL_FRONTIER = 16


class FrontierTooLarge(ArkError):
    """A walk reached more nodes than the caller allowed (the question would be too broad anyway)."""


@dataclass(frozen=True)
class Resolved:
    """A question's exact answers and the intermediate nodes lying on a path from an anchor to an answer."""

    answers: np.ndarray
    intermediates: np.ndarray


def follow(graph: KnowledgeGraph, nodes: np.ndarray, step: Step, limit: int | None = None) -> np.ndarray:
    """Sorted distinct nodes of ``step.node_type`` one ``step`` away from any of ``nodes``."""
    code = graph.relation_code(step.relation)
    type_code = graph.node_types.index(step.node_type)
    nodes = np.asarray(nodes, dtype=np.int64)
    if len(nodes) <= SMALL_FRONTIER:
        found = [graph.neighbors(int(i), code, step.direction).nodes for i in nodes]
        reached = np.unique(np.concatenate(found)) if found else EMPTY
    else:
        reached = np.unique(_gather(graph, nodes, 2 * code + (step.direction == "in")))
    reached = reached[graph.node_type_codes[reached] == type_code].astype(np.int32)
    if limit is not None and len(reached) > limit:
        raise FrontierTooLarge(len(reached))
    return reached


def _gather(graph: KnowledgeGraph, nodes: np.ndarray, packed_code: int) -> np.ndarray:
    """Neighbors of many nodes under one packed (relation, direction) code, read straight from the CSR rows.

    One gather over all the rows (:func:`ark.graph.csr.row_positions`) because one ``graph.neighbors`` call per node
    costs a few microseconds of Python overhead and a two-step walk may start from thousands of nodes; the test suite
    checks the results against plain sets.
    """
    positions, _ = row_positions(graph.indptr, nodes)
    keep = np.asarray(graph.code_array)[positions] == packed_code
    return np.asarray(graph.neighbor_array)[positions[keep]]


def walk(graph: KnowledgeGraph, anchor: int, path: tuple[Step, ...], limit: int | None = None) -> list[np.ndarray]:
    """Frontiers of a walk from ``anchor``: element ``k`` holds the nodes reached after ``k`` steps."""
    frontiers = [np.asarray([anchor], np.int32)]
    for step in path:
        frontiers.append(follow(graph, frontiers[-1], step, limit))
    return frontiers


def mentions(text: str, phrase: str) -> bool:
    """Whether ``text`` contains the words of ``phrase`` consecutively, as whole words (case-insensitive)."""
    wanted = words(phrase)
    have = words(text)
    n = len(wanted)
    return n > 0 and any(have[k : k + n] == wanted for k in range(len(have) - n + 1))


def resolve(graph: KnowledgeGraph, spec: QuestionSpec, limit: int | None = None) -> Resolved:
    """Every node satisfying ``spec`` (see :mod:`ark.quiz.spec`), with the intermediate nodes used.

    ``limit`` bounds the size of any frontier; beyond it :class:`FrontierTooLarge` is raised.
    """
    anchors = [graph.index_of(a) for a in spec.anchor_ids]
    walks = [walk(graph, a, c.path, limit) for a, c in zip(anchors, spec.constraints, strict=True)]
    answers = walks[0][-1]
    for frontiers in walks[1:]:
        answers = np.intersect1d(answers, frontiers[-1])
    answers = answers[graph.node_type_codes[answers] == graph.node_types.index(spec.answer_type)]
    answers = np.setdiff1d(answers, np.asarray(anchors, np.int32)).astype(np.int32)
    if spec.text_phrase:
        # The substring test is a cheap necessary condition; ``mentions`` decides.
        lowered = spec.text_phrase.lower()
        answers = np.asarray([i for i in answers.tolist() if lowered in graph.text(i).lower()
                              and mentions(graph.text(i), spec.text_phrase)], np.int32)
    used: list[np.ndarray] = []
    for constraint, frontiers in zip(spec.constraints, walks, strict=True):
        kept = answers
        for level in range(len(constraint.path) - 1, 0, -1):
            # Nodes of this level that lead to a kept node of the next: step back from the kept ones.
            step = constraint.path[level]
            back = Step(step.relation, "in" if step.direction == "out" else "out", constraint.path[level - 1].node_type)
            kept = np.intersect1d(frontiers[level], follow(graph, kept, back)).astype(np.int32)
            used.append(kept)
    intermediates = np.unique(np.concatenate(used)).astype(np.int32) if used else EMPTY
    return Resolved(answers, intermediates)

