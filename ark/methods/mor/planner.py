"""MoR's Planning stage: a planning graph — metapaths (routes of node types and relations from an anchor type to the
wanted type) and textual restrictions per node type (Lei et al. 2025, §3.1).

Two planners emit the same :class:`Plan`:

- :class:`OfflinePlanner` reads the question with ARK's question analysis (:mod:`ark.question`): the wanted type,
  the entities named (anchors: name hits whose every word is in the question; a name inside a longer accepted name
  gives way to it), and the chain of node types the question names before each anchor, wanted type first (a type
  word directly labelling an anchor — "the disease X" — names the anchor, not a hop). Each anchor gets the route
  through that chain (rank 0), the same route with repeated types merged (rank 1) and the direct routes of one or
  two hops the schema allows (rank 2); a relation the question hints restricts its hop. Quoted phrases restrict the
  wanted type's text.
- :func:`read_llm_plan` reads a chat model's JSON planning graph (``PLANNER_SYSTEM``), keeps the routes the schema
  allows (each hop a schema relation in either direction, ending in a wanted type) and names the rest; the caller
  falls back to the offline plan when none is left.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ark.question import QuestionReader, name_tokens

if TYPE_CHECKING:
    from ...graph import KnowledgeGraph

MAX_HOPS = 3


@dataclass(frozen=True)
class Route:
    """A metapath from an anchor node: the node types at each step and, per hop, the relations allowed."""

    anchor: int
    types: tuple[str, ...]
    relations: tuple[tuple[str, ...], ...]
    rank: int  # 0: the plan's route; 1: its merged variant; 2: another route the schema allows

    @property
    def signature(self) -> str:
        hops = [f"{self.types[i]}-{'|'.join(self.relations[i])}-" for i in range(len(self.relations))]
        return "".join(hops) + self.types[-1]


@dataclass
class Plan:
    """The planning graph of one question."""

    targets: list[str]
    routes: list[Route] = field(default_factory=list)
    anchors: list[int] = field(default_factory=list)
    restriction: str = ""  # text the wanted nodes' documents should match
    hints: list[str] = field(default_factory=list)
    source: str = "offline"


def schema_relations(graph: KnowledgeGraph) -> dict[tuple[str, str], list[str]]:
    """Relations joining two node types, in either direction, from the graph's schema triples."""
    joined: dict[tuple[str, str], list[str]] = {}
    for triple in graph.schema:
        for pair in ((triple.source_type, triple.target_type), (triple.target_type, triple.source_type)):
            names = joined.setdefault(pair, [])
            if triple.relation not in names:
                names.append(triple.relation)
    return joined


class OfflinePlanner:
    """Plans from the question analysis and the schema (see the module docstring)."""

    def __init__(self, graph: KnowledgeGraph, names: Any, anchors_per_question: int = 5) -> None:
        self.graph, self.names, self.limit = graph, names, anchors_per_question
        self.reader = QuestionReader(graph)
        self.joined = schema_relations(graph)

    def plan(self, question: str, candidate_types: list[str] | None = None) -> Plan:
        analysis = self.reader.read(question)
        targets = [t for t in (analysis.target_types or candidate_types or self.graph.node_types)
                   if not candidate_types or t in candidate_types] or list(candidate_types or self.graph.node_types)
        plan = Plan(targets, restriction=" ".join(analysis.quoted), hints=list(analysis.relation_hints))
        anchors = self.anchors(question, [m.text for m in analysis.mentions if not m.negated] or [question])
        plan.anchors = [node for node, _ in anchors]
        lower = question.lower()
        labels = {self.label_position(lower, at, self.graph.node_type(node), analysis.type_mentions)
                  for node, at in anchors} - {None}
        for node, at in anchors:
            chain = [t for pos, t in analysis.type_mentions if pos < at and pos not in labels]
            plan.routes += self.routes(node, chain, targets, plan.hints)
        return plan

    def anchors(self, question: str, mentions: list[str]) -> list[tuple[int, int]]:
        """(node, position in the question) of the entities named: name hits whose words all occur in the
        question, longest first, none inside a longer one, at most ``limit``."""
        words = set(name_tokens(question))
        found: dict[int, tuple[str, ...]] = {}
        for mention in mentions:
            for node, _ in self.names.search(mention, 20):
                tokens = name_tokens(self.graph.name(int(node)))
                if tokens and set(tokens) <= words and not set(tokens) <= self.reader.all_type_words:
                    found.setdefault(int(node), tokens)
        ranked = sorted(found.items(), key=lambda item: -len(item[1]))
        kept: list[tuple[int, tuple[str, ...]]] = []
        for node, tokens in ranked:
            if not any(set(tokens) < set(other) for _, other in kept):
                kept.append((node, tokens))
        lower = question.lower()
        return [(node, max(lower.find(self.graph.name(node).lower()), lower.find(tokens[0]))) for node, tokens
                in kept[:self.limit]]

    @staticmethod
    def label_position(lower: str, at: int, anchor_type: str, mentions: list[tuple[int, str]]) -> int | None:
        """The position of a type word that labels the anchor at ``at`` ("the disease X"), or None."""
        before = [(pos, t) for pos, t in mentions if pos < at]
        if not before or before[-1][1] != anchor_type:
            return None
        pos = before[-1][0]
        return pos if len(lower[pos:at].split()) <= 2 else None

    def routes(self, anchor: int, chain: list[str], targets: list[str], hints: list[str]) -> list[Route]:
        """The anchor's routes: through the question's type chain, merged, then the schema's direct ones."""
        start = self.graph.node_type(anchor)
        wanted = chain[:1] if chain and chain[0] in targets else targets[:1]
        middle = chain[1:] if chain and chain[0] in targets else chain
        planned = [start, *reversed(middle), *wanted]
        merged = [t for i, t in enumerate(planned) if i == 0 or t != planned[i - 1]]
        shapes: list[tuple[list[str], int]] = [(planned, 0), (merged, 1)]
        for target in targets:
            shapes.append(([start, target], 2))
            shapes += [([start, middle_type, target], 2) for middle_type in self.graph.node_types]
        routes, seen = [], set()
        for types, rank in shapes:
            route = self.route(anchor, types, hints, rank)
            if route is not None and route.signature not in seen:
                seen.add(route.signature)
                routes.append(route)
        return routes

    def route(self, anchor: int, types: list[str], hints: list[str], rank: int) -> Route | None:
        """The route through ``types`` when the schema joins each consecutive pair (hinted relations preferred)."""
        if len(types) < 2 or len(types) - 1 > MAX_HOPS:
            return None
        relations = []
        for pair in zip(types, types[1:], strict=False):
            allowed = self.joined.get(pair)
            if not allowed:
                return None
            hinted = [r for r in allowed if r in hints]
            relations.append(tuple(hinted or allowed))
        return Route(anchor, tuple(types), tuple(relations), rank)


PLANNER_SYSTEM = """You plan how to find the answers to a question in a knowledge graph. Node types: {types}.
Relations (source type, relation, target type):
{schema}

Reply with one JSON object: {{"metapaths": [[type, relation, type, ...], ...], "restrictions": {{type: [text,
...]}}}}. Each metapath starts at the type of an entity the question names and ends at the type of the answers
({targets}), alternating node types and relations of the list above. Restrictions give, per node type, the text the
question says those nodes match: the names of the entities it mentions, and any description of the answers."""


def read_llm_plan(reply: str, graph: KnowledgeGraph, names: Any, targets: list[str], limit: int
                  ) -> tuple[Plan | None, list[str]]:
    """The plan of a planner reply and the problems found (routes dropped, with why); None when no route is left."""
    found = re.search(r"\{.*\}", reply or "", re.DOTALL)
    try:
        value = json.loads(found.group(0)) if found else None
    except json.JSONDecodeError:
        value = None
    if not isinstance(value, dict) or not isinstance(value.get("metapaths"), list):
        return None, ["planner: no JSON object with `metapaths`; used the offline plan"]
    raw = value.get("restrictions")
    restrictions: dict[str, list[Any]] = raw if isinstance(raw, dict) else {}
    joined, problems = schema_relations(graph), []
    plan = Plan(targets, source="llm", restriction=" ".join(str(t) for t in restrictions.get(targets[0], [])[:3]))
    for path in value["metapaths"]:
        items = [str(p) for p in path] if isinstance(path, list) else []
        types, relations = items[0::2], items[1::2]
        bad = len(items) < 3 or len(items) % 2 == 0 or types[-1] not in targets or any(
            relation not in joined.get(pair, []) for pair, relation in zip(zip(types, types[1:], strict=False),
                                                                            relations, strict=False))
        if bad:
            problems.append(f"planner: metapath {json.dumps(path)[:120]} dropped: it must alternate types and "
                            f"relations of the schema and end in {' or '.join(targets)}")
            continue
        texts = [str(t) for t in restrictions.get(types[0], [])][:limit] if isinstance(
            restrictions.get(types[0]), list) else []
        anchors = [int(node) for text in texts for node, _ in names.search(text, 1, node_types=types[0])]
        for anchor in dict.fromkeys(anchors):
            plan.anchors.append(anchor)
            plan.routes.append(Route(anchor, tuple(types), tuple((r,) for r in relations), 0))
    if not plan.routes:
        return None, problems + ["planner: no usable metapath with a restriction naming a graph entity; used the "
                                 "offline plan"]
    return plan, problems
