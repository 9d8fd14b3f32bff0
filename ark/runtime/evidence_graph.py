"""The evidence of one answered question as a small typed graph: the anchors the agents started from, every graph
edge an agent followed that leads to an answer, and the answers, with a deterministic layered layout. One reading
of a question's record, shared by the web app, its run browser and ``ark ask --svg`` (drawn by
:mod:`ark.runtime.evidence_svg`).

Read from the record alone (its ``ranked`` list and its agents' trajectories), for any method whose tools record
what they showed the way ARK's do:

- a *followed edge* is a graph edge a neighbourhood search showed: the call's ``result`` names its ``center`` and
  each shown neighbour's relations (``out``: centre→neighbour, ``in``: neighbour→centre); one edge per
  (source, relation, target), with every (agent, step) that showed it;
- an *anchor* is a node an agent searched around before any of that agent's searches had shown it (where its
  exploration started, typically a node found by global search);
- the *answers* are the first ``top`` nodes of the fused ranking, with their votes and tie groups.

The edges kept are those on the way from an anchor to an answer: an edge an agent travelled (from the centre of a
search to a neighbour it showed) from a node an anchor's exploration reached (the anchor included) to a node from
which exploration went on to an answer (the answer included), never through another anchor or answer; and every
edge travelled between an anchor and an answer (an answer checked against an anchor). Dead ends (a neighbour shown
but never followed on, a branch that reached no answer) are left out.
"""

from __future__ import annotations

import math
from collections import defaultdict, deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from .records import Trajectory

# Tableau 10: distinct, readable on white; a type's colour is fixed by its position in the graph's type list.
PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
           "#bab0ac")
MAX_VIAS = 40  # intermediate nodes drawn at most (the most connected first); the rest are counted as omitted
LABEL_WIDTH = 215  # room for the labels left of the anchors and right of the answers
COLUMN_GAP = 200
ROW_GAP = 30
TOP_MARGIN = 34  # the legend's line
BOTTOM_MARGIN = 14


class NodeLabels(Protocol):
    """What the drawing needs to know of the graph (a :class:`~ark.graph.KnowledgeGraph` is one)."""

    node_types: list[str]

    def name(self, i: int) -> str: ...

    def node_type(self, i: int) -> str: ...

    def is_valid_index(self, i: int) -> bool: ...


@dataclass(frozen=True)
class EvidenceNode:
    index: int
    name: str
    type: str
    role: str  # "answer", "anchor" or "via" (a node both anchor and answer is an answer with anchor=True)
    anchor: bool
    rank: int | None  # the answer's rank in the fused ranking (1-based)
    votes: int  # answers: the fused ranking's votes (1 where it has none); others: the agents that used the node
    tie_group: int | None
    color: str
    x: float
    y: float
    r: float


@dataclass(frozen=True)
class EdgeUse:
    agent: int
    step: int  # 1-based, as the traces number steps


@dataclass(frozen=True)
class EvidenceEdge:
    source: int
    relation: str
    target: int
    uses: tuple[EdgeUse, ...]
    bend: int = 0  # 0 for the first edge between a pair, then 1, -1, 2, ... (parallel edges drawn apart)


@dataclass(frozen=True)
class EvidenceGraph:
    nodes: tuple[EvidenceNode, ...]
    edges: tuple[EvidenceEdge, ...]
    width: float
    height: float
    types: tuple[tuple[str, str], ...]  # (node type, colour) of the drawn nodes, in the graph's order
    omitted: int = 0  # intermediate nodes left out over MAX_VIAS
    question: str = ""

    def node(self, index: int) -> EvidenceNode:
        return next(n for n in self.nodes if n.index == index)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass
class _Reading:
    """What the trajectories say, before pruning."""

    uses: dict[tuple[int, str, int], list[EdgeUse]] = field(default_factory=lambda: defaultdict(list))
    anchors: dict[int, EdgeUse] = field(default_factory=dict)  # anchor → its first exploration
    travels: dict[tuple[int, int], set[tuple[int, str, int]]] = field(default_factory=lambda: defaultdict(set))
    agents_of: dict[int, set[int]] = field(default_factory=lambda: defaultdict(set))


@dataclass(frozen=True)
class AnswerMark:
    """One node of the fused ranking as the drawing marks it: its votes and tie group, where the method has them."""

    index: int
    votes: int | None = None
    tie_group: int | None = None


def evidence_graph(record: Mapping[str, object], labels: NodeLabels, top: int = 10) -> EvidenceGraph:
    """The evidence drawing of a question's JSON record (a run file's line, ``ark ask --json``), read into typed
    trajectories and answer marks (see :func:`evidence_graph_of`)."""
    from .trajectory_file import record_trajectories

    ranked = record.get("ranked")
    marks = [AnswerMark(int(entry["index"]), entry.get("votes"), entry.get("tie_group"))
             for entry in (ranked if isinstance(ranked, list) else [])
             if isinstance(entry, Mapping) and _is_node(entry.get("index"), labels)]
    return evidence_graph_of(str(record.get("question") or ""), record_trajectories(record), marks, labels, top)


def evidence_graph_of(question: str, trajectories: Sequence[Trajectory], ranked: Sequence[AnswerMark],
                      labels: NodeLabels, top: int = 10) -> EvidenceGraph:
    """The evidence drawing of a question (see the module doc): typed nodes and edges with their layout."""
    reading = _read(trajectories, labels)
    answers = _answers(ranked, labels, top)
    travels = _leading(reading.travels, set(reading.anchors), set(answers))
    kept = {edge for travel in travels for edge in reading.travels[travel]}
    kept, omitted = _cap_vias(kept, set(reading.anchors) | set(answers))
    edges = [EvidenceEdge(s, rel, t, tuple(sorted(set(reading.uses[(s, rel, t)]), key=lambda u: (u.agent, u.step))))
             for s, rel, t in sorted(kept, key=lambda e: (e[0], e[2], e[1]))]
    roles = {i: "anchor" for i in reading.anchors} | {i: "answer" for i in answers}
    for s, _, t in kept:
        roles.setdefault(s, "via")
        roles.setdefault(t, "via")
    columns = _columns(roles, kept, reading.anchors, answers)
    return _placed(roles, columns, _bent(edges), reading, answers, labels, omitted, question)


def _read(trajectories: Sequence[Trajectory], labels: NodeLabels) -> _Reading:
    reading = _Reading()
    for trajectory in trajectories:
        agent = trajectory.agent_index
        reached: set[int] = set()
        for step in trajectory.steps:
            use = EdgeUse(agent, step.index + 1)
            for call in step.tool_calls:
                result = call.result if call.ok else None
                centre = result.get("center") if isinstance(result, Mapping) else None
                if result is None or not isinstance(centre, int) or not _is_node(centre, labels):
                    continue
                if centre not in reached:
                    reading.anchors.setdefault(centre, use)
                rows = result.get("results")
                for edge in _shown_edges(centre, rows if isinstance(rows, list) else [], labels):
                    reading.uses[edge].append(use)
                    reading.travels[(centre, edge[2] if edge[0] == centre else edge[0])].add(edge)
                    reading.agents_of[edge[0]].add(agent)
                    reading.agents_of[edge[2]].add(agent)
                    reached.update((edge[0], edge[2]))
                reading.agents_of[centre].add(agent)
    return reading


def _shown_edges(centre: int, shown: Iterable[object], labels: NodeLabels) -> Iterable[tuple[int, str, int]]:
    for entry in shown:
        if not isinstance(entry, Mapping) or not _is_node(entry.get("index"), labels):
            continue
        neighbour = int(entry["index"])
        for relation in entry.get("out") or []:
            yield centre, str(relation), neighbour
        for relation in entry.get("in") or []:
            yield neighbour, str(relation), centre


@dataclass(frozen=True)
class _Answer:
    """An answer drawn: its rank in the drawing, and the votes and tie group of its mark."""

    rank: int
    votes: int | None
    tie_group: int | None


def _answers(ranked: Sequence[AnswerMark], labels: NodeLabels, top: int) -> dict[int, _Answer]:
    answers: dict[int, _Answer] = {}
    for mark in ranked:
        if len(answers) >= top:
            break
        if _is_node(mark.index, labels):
            answers.setdefault(mark.index, _Answer(len(answers) + 1, mark.votes, mark.tie_group))
    return answers


def _leading(travel: Iterable[tuple[int, int]], anchors: set[int], answers: set[int]) -> set[tuple[int, int]]:
    """The travels (centre → shown neighbour) on the way from an anchor to an answer: from a node an anchor's
    exploration reached (the anchor included) to a node from which exploration reached an answer (the answer
    included), never through another anchor or answer; and every travel between an anchor and an answer."""
    travel = set(travel)
    terminals = anchors | answers
    onward: dict[int, set[int]] = defaultdict(set)
    back: dict[int, set[int]] = defaultdict(set)
    for centre, shown in travel:
        onward[centre].add(shown)
        back[shown].add(centre)
    reached = _spread(anchors, onward, terminals) - (answers - anchors)
    reaching = _spread(answers, back, terminals) - (anchors - answers)
    return {(c, n) for c, n in travel
            if (c in reached and n in reaching) or (c in anchors and n in answers) or (c in answers and n in anchors)}


def _spread(starts: set[int], links: Mapping[int, set[int]], stops: set[int]) -> set[int]:
    """``starts`` and every node reached from them along ``links``, not going on from a node in ``stops`` (other
    than the starts themselves)."""
    seen = set(starts)
    queue = deque(sorted(starts))
    while queue:
        node = queue.popleft()
        if node in stops and node not in starts:
            continue
        for other in sorted(links.get(node, ())):
            if other not in seen:
                seen.add(other)
                queue.append(other)
    return seen


def _cap_vias(kept: set[tuple[int, str, int]], terminals: set[int]) -> tuple[set[tuple[int, str, int]], int]:
    """At most :data:`MAX_VIAS` intermediate nodes: the most connected (then lowest index) stay."""
    neighbours = _neighbours(kept)
    vias = sorted((n for n in neighbours if n not in terminals), key=lambda n: (-len(neighbours[n]), n))
    if len(vias) <= MAX_VIAS:
        return kept, 0
    dropped = set(vias[MAX_VIAS:])
    return {e for e in kept if e[0] not in dropped and e[2] not in dropped}, len(dropped)


def _neighbours(edges: Iterable[tuple[int, str, int]]) -> dict[int, set[int]]:
    around: dict[int, set[int]] = defaultdict(set)
    for s, _, t in edges:
        around[s].add(t)
        around[t].add(s)
        around[s].discard(s)
    return around


def _columns(roles: Mapping[int, str], kept: set[tuple[int, str, int]], anchors: Mapping[int, EdgeUse],
             answers: Mapping[int, _Answer]) -> list[list[int]]:
    """Anchors left, answers right, each intermediate node in the column of its distance from the anchors; within
    a column, answers by rank, anchors by first use, the others by the mean row of their neighbours on the left."""
    neighbours = _neighbours(kept)
    distance = {a: 0 for a in anchors if a not in answers}
    queue = deque(sorted(distance))
    while queue:
        node = queue.popleft()
        for other in sorted(neighbours.get(node, ())):
            if other not in distance and roles.get(other) == "via":
                distance[other] = distance[node] + 1
                queue.append(other)
    depth = max((distance.get(n, 1) for n, role in roles.items() if role == "via"), default=0)
    columns: list[list[int]] = [[] for _ in range(depth + 2)]
    for node, role in roles.items():
        column = 0 if role == "anchor" else depth + 1 if role == "answer" else max(1, distance.get(node, 1))
        columns[column].append(node)
    columns[0].sort(key=lambda n: (anchors[n].agent, anchors[n].step, n))
    columns[-1].sort(key=lambda n: answers[n].rank)
    for middle in columns[1:-1]:
        row = {n: k for column in columns for k, n in enumerate(column)}
        middle.sort(key=lambda n: (_mean(row[o] for o in neighbours.get(n, ()) if o in row), n))
    if len(columns) == 2:  # anchors straight to answers: anchors in the order of the answers they lead to
        row = {n: k for k, n in enumerate(columns[1])}
        columns[0].sort(key=lambda n: (_mean(row[o] for o in neighbours.get(n, ()) if o in row),
                                       anchors[n].agent, anchors[n].step, n))
    return [column for column in columns if column] or [[]]


def _mean(values: Iterable[int]) -> float:
    found = list(values)
    return sum(found) / len(found) if found else math.inf


def _bent(edges: list[EvidenceEdge]) -> list[EvidenceEdge]:
    """Parallel edges (any direction) between one pair of nodes numbered 0, 1, -1, 2, -2, ... to be drawn apart."""
    seen: dict[tuple[int, int], int] = defaultdict(int)
    out = []
    for edge in edges:
        pair = (min(edge.source, edge.target), max(edge.source, edge.target))
        k = seen[pair]
        seen[pair] += 1
        out.append(EvidenceEdge(edge.source, edge.relation, edge.target, edge.uses,
                                bend=(k + 1) // 2 * (1 if k % 2 else -1)))
    return out


def _placed(roles: Mapping[int, str], columns: list[list[int]], edges: list[EvidenceEdge], reading: _Reading,
            answers: Mapping[int, _Answer], labels: NodeLabels, omitted: int, question: str) -> EvidenceGraph:
    rows = max(len(column) for column in columns)
    height = TOP_MARGIN + max(rows, 1) * ROW_GAP + BOTTOM_MARGIN
    width = 2 * LABEL_WIDTH + max(len(columns) - 1, 1) * COLUMN_GAP
    type_order = {t: k for k, t in enumerate(labels.node_types)}
    nodes = []
    for c, column in enumerate(columns):
        x = LABEL_WIDTH + (c * COLUMN_GAP if len(columns) > 1 else COLUMN_GAP / 2)
        top = TOP_MARGIN + (rows - len(column)) * ROW_GAP / 2 + ROW_GAP / 2
        for k, index in enumerate(column):
            answer = answers.get(index)
            votes = _int(answer.votes, 1) if answer else len(reading.agents_of.get(index, ())) or 1
            node_type = labels.node_type(index)
            nodes.append(EvidenceNode(
                index=index, name=labels.name(index), type=node_type, role=roles[index],
                anchor=index in reading.anchors, rank=answer.rank if answer else None, votes=votes,
                tie_group=_int(answer.tie_group, 0) or None if answer else None,
                color=PALETTE[type_order.get(node_type, 0) % len(PALETTE)], x=round(x, 1),
                y=round(top + k * ROW_GAP, 1), r=round(min(5.0 + 3.0 * math.sqrt(votes), 14.0), 1)))
    shown = {n.type for n in nodes}
    types = tuple((t, PALETTE[k % len(PALETTE)]) for k, t in enumerate(labels.node_types) if t in shown)
    return EvidenceGraph(tuple(nodes), tuple(edges), float(width), float(height), types, omitted, question)


def _is_node(value: object, labels: NodeLabels) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and labels.is_valid_index(value)


def _int(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default
