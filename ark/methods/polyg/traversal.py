"""PolyG's traversals, one per question pattern, over the graph's adjacency (no model involved): the neighbourhood
of ``h`` (⟨h,_,_⟩), its neighbours along a relation chain (⟨h,r,_⟩ and nested ⟨⟨h,r1,_⟩,r2,_⟩), the shortest paths
from ``h`` to ``t`` (⟨h,*,t⟩) and the edges between them (⟨h,r,t⟩). Each returns triples under a budget."""

from __future__ import annotations

from collections import deque

from ark.graph import KnowledgeGraph

from ..graph_text import Triple, k_hop_triples


def relation_code(graph: KnowledgeGraph, name: str) -> int | None:
    """The code of relation ``name`` (case and separators ignored), or None when the graph has no such relation."""
    try:
        return graph.relation_code(name)
    except (ValueError, KeyError):
        return None


def _edges(graph: KnowledgeGraph, node: int, code: int | None, limit: int) -> list[tuple[int, Triple]]:
    """(neighbour, stored triple) of ``node``'s edges, of relation ``code`` when given, at most ``limit``."""
    found = graph.neighbors(node)
    pairs = []
    for other, relation, outgoing in zip(found.nodes, found.relations, found.outgoing, strict=True):
        if code is not None and int(relation) != code:
            continue
        other = int(other)
        pairs.append((other, (node, int(relation), other) if outgoing else (other, int(relation), node)))
        if len(pairs) >= limit:
            break
    return pairs


def neighbourhood(graph: KnowledgeGraph, head: int, per_node: int, budget: int) -> list[Triple]:
    """⟨h,_,_⟩: every edge of ``h``."""
    return k_hop_triples(graph, [head], hops=1, per_node=per_node, max_triples=budget)


def relation_chain(graph: KnowledgeGraph, head: int, codes: list[int], per_node: int, budget: int) -> list[Triple]:
    """⟨h,r,_⟩ and its nested forms: from ``h`` along each relation of ``codes`` in turn (either direction)."""
    frontier: list[int] = [head]
    triples: dict[Triple, None] = {}
    for code in codes:
        following: dict[int, None] = {}
        for node in frontier:
            for other, triple in _edges(graph, node, code, per_node):
                triples.setdefault(triple, None)
                following.setdefault(other, None)
                if len(triples) >= budget:
                    return list(triples)
        frontier = list(following)
    return list(triples)


def shortest_paths(graph: KnowledgeGraph, head: int, tail: int, max_hops: int, max_paths: int,
                   per_node: int) -> list[list[Triple]]:
    """⟨h,*,t⟩: up to ``max_paths`` shortest paths from ``h`` to ``t`` of at most ``max_hops`` edges (breadth first
    over edges in both directions, ``per_node`` edges read per node)."""
    parents: dict[int, list[tuple[int, Triple]]] = {head: []}
    depth = {head: 0}
    queue = deque([head])
    while queue:
        node = queue.popleft()
        if depth[node] >= max_hops or (tail in depth and depth[node] >= depth[tail]):
            continue
        for other, triple in _edges(graph, node, None, per_node):
            if other not in depth:
                depth[other] = depth[node] + 1
                parents[other] = []
                queue.append(other)
            if depth[other] == depth[node] + 1:
                parents[other].append((node, triple))
    if tail not in depth:
        return []
    paths: list[list[Triple]] = []

    def walk(node: int, suffix: list[Triple]) -> None:
        if len(paths) >= max_paths:
            return
        if node == head:
            paths.append(suffix)
            return
        for parent, triple in parents[node]:
            walk(parent, [triple, *suffix])

    walk(tail, [])
    return paths


def edges_between(graph: KnowledgeGraph, head: int, tail: int, code: int | None, per_node: int) -> list[Triple]:
    """⟨h,r,t⟩: the edges joining ``h`` and ``t`` (of relation ``code`` when given)."""
    return [triple for other, triple in _edges(graph, head, code, max(per_node, graph.degree(head))) if other == tail]
