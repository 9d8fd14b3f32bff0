"""Graph facts as prompt text, shared by the prompting baselines: one node as a line, a subgraph's edges as triples,
k-hop expansion under a budget, and Graph-CoT's four graph functions (RetrieveNode, NodeFeature, NeighbourCheck,
NodeDegree; Jin et al. 2024, §3.2), which Graph-CoT and GraphCounselor both call.

Every function here reads the :class:`~ark.graph.KnowledgeGraph` and returns text for a model plus the node indices
the text shows, so a method can report the nodes it used. A bad request (an unknown node, feature or relation)
returns an observation saying what is valid; nothing here raises on a model's input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph

Triple = tuple[int, int, int]  # (source node, relation code, target node)


def clip(text: Any, chars: int) -> str:
    """``text`` on one line, cut to ``chars`` characters with an ellipsis."""
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= chars else flat[:max(0, chars - 1)] + "…"


def node_line(graph: KnowledgeGraph, node: int, text_chars: int = 200) -> str:
    """``name [type, id ID]: text`` (the text clipped; left out when ``text_chars`` is 0 or the text is the name)."""
    head = f"{graph.name(node)} [{graph.node_type(node)}, id {graph.node_id(node)}]"
    text = graph.text(node)
    if text_chars <= 0 or not text or clip(text, 400) == graph.name(node):
        return head
    return f"{head}: {clip(text, text_chars)}"


def triple_line(graph: KnowledgeGraph, triple: Triple) -> str:
    source, relation, target = triple
    return f"({graph.name(source)}, {graph.relation_types[relation]}, {graph.name(target)})"


def incident_triples(graph: KnowledgeGraph, node: int, limit: int | None = None) -> list[tuple[Triple, bool]]:
    """The edges at ``node`` in adjacency order (at most ``limit``), each as stored (source, relation, target) with
    whether it leaves ``node``."""
    found = graph.neighbors(node)
    edges = []
    for other, relation, outgoing in list(zip(found.nodes, found.relations, found.outgoing, strict=True))[:limit]:
        other, relation = int(other), int(relation)
        edges.append(((node, relation, other) if outgoing else (other, relation, node), bool(outgoing)))
    return edges


def k_hop_triples(graph: KnowledgeGraph, seeds: list[int], hops: int = 2, per_node: int = 20,
                  max_triples: int = 300) -> list[Triple]:
    """The edges of the ``hops``-hop neighbourhood of ``seeds`` in breadth-first order, each as stored (source,
    relation, target): at most ``per_node`` edges read per node and ``max_triples`` in all (the prompt budget)."""
    seen_edges: dict[Triple, None] = {}
    frontier = list(dict.fromkeys(seeds))
    visited = set(frontier)
    for _ in range(hops):
        following: list[int] = []
        for node in frontier:
            found = graph.neighbors(node)
            for other, relation, outgoing in list(zip(found.nodes, found.relations, found.outgoing,
                                                      strict=True))[:per_node]:
                other, relation = int(other), int(relation)
                triple = (node, relation, other) if outgoing else (other, relation, node)
                seen_edges.setdefault(triple, None)
                if len(seen_edges) >= max_triples:
                    return list(seen_edges)
                if other not in visited:
                    visited.add(other)
                    following.append(other)
        frontier = following
    return list(seen_edges)


def triple_nodes(triples: list[Triple]) -> list[int]:
    """The nodes of ``triples``, first-seen order."""
    return list(dict.fromkeys(node for source, _, target in triples for node in (source, target)))


def schema_lines(graph: KnowledgeGraph, limit: int = 60) -> str:
    """The graph's node types and (source type, relation, target type) combinations, for a prompt."""
    lines = [f"Node types: {', '.join(graph.node_types)}", "Relations (source type -relation-> target type):"]
    lines += [f"- {t.source_type} -{t.relation}-> {t.target_type}" for t in graph.schema[:limit]]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------ Graph-CoT's functions
ACTION = re.compile(r"(RetrieveNode|NodeFeature|Neighbou?rCheck|NodeDegree|Finish)\s*\[(.*)\]", re.IGNORECASE)
ACTIONS_HELP = """RetrieveNode[keywords]: the node best matching the keywords (its id, name and type)
NodeFeature[node id, feature]: one feature of a node (name, type, text, or a listed attribute)
NeighbourCheck[node id, relation or node type]: the node's neighbours along that relation, or of that type
NodeDegree[node id, relation or node type]: how many such neighbours the node has
Finish[answer]: end with the answer"""


@dataclass
class ActionResult:
    """What one action gave: the observation text, the nodes it showed, and the answer of ``Finish``."""

    observation: str
    nodes: list[int] = field(default_factory=list)
    answer: str | None = None
    valid: bool = True


def parse_action(text: str | None) -> tuple[str, list[str]] | None:
    """The first ``Name[arguments]`` action in ``text`` (name normalised, arguments split on the first comma), or
    None when the text holds none."""
    found = ACTION.search(text or "")
    if found is None:
        return None
    name = {"neighborcheck": "NeighbourCheck"}.get(found.group(1).lower(), found.group(1))
    name = next(a for a in ("RetrieveNode", "NodeFeature", "NeighbourCheck", "NodeDegree", "Finish", name)
                if a.lower() == name.lower())
    raw = found.group(2).strip()
    arguments = [raw] if name in ("RetrieveNode", "Finish") else [part.strip() for part in raw.split(",", 1)]
    return name, [a.strip().strip("'\"") for a in arguments]


class GraphFunctions:
    """Graph-CoT's graph functions over one graph; ``names`` is a node-name index with ``search(text, k)``."""

    def __init__(self, graph: KnowledgeGraph, names: Any, neighbour_limit: int = 30, text_chars: int = 500) -> None:
        self.graph = graph
        self.names = names
        self.neighbour_limit = neighbour_limit
        self.text_chars = text_chars

    def run(self, text: str | None) -> ActionResult:
        """Carry out the first action in ``text``; a missing or malformed one is an invalid result saying why."""
        parsed = parse_action(text)
        if parsed is None:
            return ActionResult("No action found. Reply with one action of the form Name[arguments]:\n"
                                + ACTIONS_HELP, valid=False)
        name, arguments = parsed
        if name == "Finish":
            return ActionResult("", answer=arguments[0])
        if name == "RetrieveNode":
            return self.retrieve_node(arguments[0])
        if len(arguments) != 2 or not all(arguments):
            return ActionResult(f"{name} takes two arguments: a node id and a "
                                f"{'feature' if name == 'NodeFeature' else 'relation or node type'}.", valid=False)
        node = self._node(arguments[0])
        if isinstance(node, ActionResult):
            return node
        if name == "NodeFeature":
            return self.node_feature(node, arguments[1])
        return self.neighbours(node, arguments[1], count_only=name == "NodeDegree")

    def retrieve_node(self, keywords: str) -> ActionResult:
        hits = self.names.search(keywords, 1) if keywords.strip() else []
        if not hits:
            return ActionResult(f"No node matches {clip(keywords, 80)!r}.")
        node = int(hits[0][0])
        return ActionResult(f"The best match is node {self.graph.node_id(node)}: {node_line(self.graph, node, 0)}.",
                            [node])

    def node_feature(self, node: int, feature: str) -> ActionResult:
        graph = self.graph
        values = {"name": graph.name(node), "type": graph.node_type(node), "text": graph.text(node),
                  **{key: value for key, value in graph.properties(node).items() if value not in (None, "", [])}}
        wanted = feature.lower().replace(" ", "_")
        if wanted not in values:
            return ActionResult(f"Node {graph.node_id(node)} has no feature {clip(feature, 60)!r}; its features: "
                                f"{', '.join(values)}.", valid=False)
        return ActionResult(f"{wanted} of {graph.node_id(node)}: {clip(values[wanted], self.text_chars)}", [node])

    def neighbours(self, node: int, kind: str, count_only: bool) -> ActionResult:
        graph = self.graph
        found = graph.neighbors(node)
        relation = _resolve(graph.resolve_relation, kind)
        node_type = _resolve(graph.resolve_node_type, kind)
        if relation is not None:
            code = graph.relation_types.index(relation)
            chosen = [int(n) for n, r in zip(found.nodes, found.relations, strict=True) if int(r) == code]
        elif node_type is not None:
            chosen = [int(n) for n in found.nodes if graph.node_type(int(n)) == node_type]
        else:
            relations = sorted({graph.relation_types[int(r)] for r in found.relations})
            types = sorted({graph.node_type(int(n)) for n in found.nodes})
            return ActionResult(f"{clip(kind, 60)!r} is neither a relation nor a node type of node "
                                f"{graph.node_id(node)}; its relations: {', '.join(relations) or 'none'}; its "
                                f"neighbour types: {', '.join(types) or 'none'}.", [node], valid=False)
        chosen = list(dict.fromkeys(chosen))
        if count_only:
            return ActionResult(f"Node {graph.node_id(node)} has {len(chosen)} {kind} neighbours.", [node])
        shown = chosen[:self.neighbour_limit]
        listed = "; ".join(f"{graph.node_id(n)} ({clip(graph.name(n), 80)})" for n in shown) or "none"
        more = f" (first {len(shown)} of {len(chosen)})" if len(chosen) > len(shown) else ""
        return ActionResult(f"{kind} neighbours of {graph.node_id(node)}{more}: {listed}", [node, *shown])

    def _node(self, reference: str) -> int | ActionResult:
        if self.graph.has_node(reference):
            return self.graph.index_of(reference)
        return ActionResult(f"There is no node with id {clip(reference, 60)!r}; use RetrieveNode[keywords] to find "
                            "a node's id.", valid=False)


def _resolve(resolver: Any, name: str) -> str | None:
    """``resolver(name)``, or of its singular when ``name`` ends in s (``genes``), or None."""
    for candidate in (name, name[:-1]) if name.lower().endswith("s") else (name,):
        try:
            return resolver(candidate)
        except (ValueError, KeyError):
            continue
    return None
