"""Graph expansion from dense seeds, vectorised over the graph's CSR arrays (numpy only).

- :func:`gather_rows`: every stored edge of a set of nodes in one gather (a hub's thousands of edges cost one
  slice, not a Python loop).
- :func:`khop_with_filter`: the paper's K-HOP-WITH-FILTERING (Section 3): from the seeds, hop by hop, score each
  frontier neighbour u as ⅓·sim(q,u) + max over frontier parents v (via relation r) of ⅓·sim(q,v) + ⅓·sim(q,r),
  keep the top b_h per hop, stop at the node budget B.
- :func:`two_hop_neighborhood`: the bounded 2-hop ego graph of the seeds that the Table 1 baselines work on.
- :func:`induced_edges`: the edges among a node set, in local indices.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ark.graph.csr import row_positions
from ark.index.topk import top_k

if TYPE_CHECKING:
    from ...graph import KnowledgeGraph


@dataclass(frozen=True)
class RowEntries:
    """The stored edges of some rows: ``row`` indexes the requested rows, the rest are parallel arrays."""

    row: np.ndarray  # int64 position in the requested rows
    neighbor: np.ndarray  # int64 global node index
    relation: np.ndarray  # int64 relation code
    incoming: np.ndarray  # bool: the edge points into the row's node


def gather_rows(graph: KnowledgeGraph, rows: np.ndarray) -> RowEntries:
    """All CSR entries of ``rows`` (both directions), concatenated in row order."""
    positions, lengths = row_positions(graph.indptr, rows)
    owner = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    codes = np.asarray(graph.code_array[positions], dtype=np.int64)
    return RowEntries(owner, np.asarray(graph.neighbor_array[positions], dtype=np.int64), codes >> 1,
                      (codes & 1).astype(bool))


def best_per_node(nodes: np.ndarray, scores: np.ndarray, num_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """For repeated ``nodes``, each distinct node once (ascending) with its highest score.

    ``np.maximum.at`` scatters the maxima in one unbuffered pass, several times faster than sorting the entries
    (hubs bring tens of thousands of them).
    """
    best = np.full(num_nodes, -np.inf, dtype=np.float32)
    np.maximum.at(best, nodes, scores.astype(np.float32, copy=False))
    distinct = np.flatnonzero(best > -np.inf)
    return distinct, best[distinct]


def first_entry_reaching(nodes: np.ndarray, scores: np.ndarray, targets: np.ndarray, target_scores: np.ndarray,
                         num_nodes: int) -> np.ndarray:
    """For each of ``targets``, the index of the first entry of ``nodes`` giving it its ``target_scores`` value."""
    wanted = np.full(num_nodes, np.nan, dtype=np.float32)
    wanted[targets] = target_scores
    hits = np.flatnonzero(wanted[nodes] == scores)
    first = np.full(num_nodes, -1, dtype=np.int64)
    first[nodes[hits[::-1]]] = hits[::-1]  # the last write wins: the earliest entry
    return first[targets]


@dataclass
class Expansion:
    """The result of a filtered expansion: seeds first, then each hop's kept nodes best first."""

    nodes: np.ndarray  # int64 global indices
    scores: np.ndarray  # float32: sim(q, seed) for seeds, the filter score for expanded nodes
    hops: np.ndarray  # int8: 0 for seeds, h for nodes kept at hop h
    parents: np.ndarray  # int64: the best frontier parent (-1 for seeds)
    relations: np.ndarray  # int64: the relation to the best parent (-1 for seeds)

    def __len__(self) -> int:
        return len(self.nodes)

    def ranking(self) -> tuple[np.ndarray, np.ndarray]:
        """Seeds first (by similarity), then every expanded node by its filter score, as (nodes, scores).

        The returned score of a seed is ``1 + sim`` so that the list is sorted; expanded scores are in [-1, 1].
        """
        seeds = self.hops == 0
        order_expanded = np.flatnonzero(~seeds)
        order_expanded = order_expanded[np.lexsort((self.nodes[order_expanded], -self.scores[order_expanded]))]
        order_seeds = np.flatnonzero(seeds)
        order_seeds = order_seeds[np.lexsort((self.nodes[order_seeds], -self.scores[order_seeds]))]
        order = np.concatenate([order_seeds, order_expanded])
        scores = self.scores[order].astype(np.float32)
        scores[: len(order_seeds)] += 1.0
        return self.nodes[order], scores


def khop_with_filter(graph: KnowledgeGraph, node_sims: np.ndarray, relation_sims: np.ndarray, seeds: Iterable[int],
                     hop_budgets: Sequence[int], budget: int | None = None) -> Expansion:
    """K-HOP-WITH-FILTERING from ``seeds``: at hop h keep the ``hop_budgets[h-1]`` best new frontier neighbours.

    A neighbour u of the current frontier F scores ⅓·sim(q,u) + max_{v→u, v∈F} (⅓·sim(q,v) + ⅓·sim(q,r)); edges
    are followed in both directions. The kept nodes form the next frontier. Expansion stops after the last hop or
    once ``budget`` nodes (seeds included) are collected. Ties go to the lower node index.
    """
    starts = np.asarray(list(dict.fromkeys(int(s) for s in seeds)), dtype=np.int64)
    if budget is not None and budget < len(starts):
        raise ValueError(f"the node budget ({budget}) is smaller than the number of seeds ({len(starts)})")
    if any(b < 0 for b in hop_budgets):
        raise ValueError(f"hop budgets must be non-negative, got {list(hop_budgets)}")
    limit = budget if budget is not None else len(starts) + int(sum(hop_budgets))
    taken = np.zeros(graph.num_nodes, dtype=bool)
    taken[starts] = True
    nodes = [starts]
    scores = [np.asarray(node_sims[starts], dtype=np.float32)]
    hops = [np.zeros(len(starts), dtype=np.int8)]
    parents = [np.full(len(starts), -1, dtype=np.int64)]
    relations = [np.full(len(starts), -1, dtype=np.int64)]
    frontier, total = starts, len(starts)
    for hop, keep in enumerate(hop_budgets, start=1):
        room = min(int(keep), limit - total)
        if room <= 0 or len(frontier) == 0:
            break
        entries = gather_rows(graph, frontier)
        fresh = ~taken[entries.neighbor]
        neighbor, relation = entries.neighbor[fresh], entries.relation[fresh]
        parent = frontier[entries.row[fresh]]
        score = ((node_sims[neighbor] + node_sims[parent] + relation_sims[relation]) / 3.0).astype(np.float32)
        candidates, best_scores = best_per_node(neighbor, score, graph.num_nodes)
        kept, kept_scores = top_k(candidates, best_scores, room)
        if len(kept) == 0:
            break
        entry = first_entry_reaching(neighbor, score, kept, kept_scores, graph.num_nodes)
        taken[kept] = True
        nodes.append(kept)
        scores.append(kept_scores)
        hops.append(np.full(len(kept), hop, dtype=np.int8))
        parents.append(parent[entry])
        relations.append(relation[entry])
        frontier, total = kept, total + len(kept)
    return Expansion(np.concatenate(nodes), np.concatenate(scores), np.concatenate(hops), np.concatenate(parents),
                     np.concatenate(relations))


@dataclass
class Neighborhood:
    """A bounded ego graph: nodes (seeds first) with their hop distance, and its edges in local indices."""

    nodes: np.ndarray  # int64 global
    hops: np.ndarray  # int8
    src: np.ndarray  # int64 local, one entry per stored directed edge (source → target as in the graph)
    dst: np.ndarray
    relation: np.ndarray  # int64


def two_hop_neighborhood(graph: KnowledgeGraph, seeds: Iterable[int], node_sims: np.ndarray, max_nodes: int = 2000,
                         hops: int = 2) -> Neighborhood:
    """The seeds and their ``hops``-hop neighbours, at most ``max_nodes`` of them: each hop keeps its neighbours
    most similar to the query when the cap would be exceeded (hubs make unbounded 2-hop sets graph-sized)."""
    starts = np.asarray(list(dict.fromkeys(int(s) for s in seeds)), dtype=np.int64)
    taken = np.zeros(graph.num_nodes, dtype=bool)
    taken[starts] = True
    layers, frontier = [starts], starts
    for _ in range(hops):
        room = max_nodes - sum(len(layer) for layer in layers)
        if room <= 0 or len(frontier) == 0:
            break
        found = np.unique(gather_rows(graph, frontier).neighbor)
        found = found[~taken[found]]
        if len(found) > room:
            found, _ = top_k(found, node_sims[found], room)
        taken[found] = True
        layers.append(np.sort(found))
        frontier = found
    nodes = np.concatenate(layers)
    hop_of = np.concatenate([np.full(len(layer), h, dtype=np.int8) for h, layer in enumerate(layers)])
    src, dst, relation = induced_edges(graph, nodes, outgoing_only=True)
    return Neighborhood(nodes, hop_of, src, dst, relation)


def induced_edges(graph: KnowledgeGraph, nodes: np.ndarray, outgoing_only: bool = False
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Edges among ``nodes`` as local ``(src, dst, relation)``.

    With ``outgoing_only`` each directed edge appears once, from its source to its target. Otherwise each edge
    appears from both ends, as the message it carries to the row's node: ``src`` is the neighbour, ``dst`` the
    row's node and ``relation`` is returned as the direction-aware code ``2·r + incoming`` (seen from ``dst``).
    """
    nodes = np.asarray(nodes, dtype=np.int64)
    local = np.full(graph.num_nodes, -1, dtype=np.int64)
    local[nodes] = np.arange(len(nodes))
    entries = gather_rows(graph, nodes)
    inside = local[entries.neighbor] >= 0
    if outgoing_only:
        inside &= ~entries.incoming
        return entries.row[inside], local[entries.neighbor[inside]], entries.relation[inside]
    codes = 2 * entries.relation[inside] + entries.incoming[inside]
    return local[entries.neighbor[inside]], entries.row[inside], codes
