"""The one-hop moves a graph's schema allows, with the nodes each can start from; degenerate parts are noted."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from ..graph import KnowledgeGraph
from ..graph.csr import entry_blocks
from ..graph.keys import KeyTable, column_chunks
from .spec import Step, StepDirection

Key = TypeVar("Key", int, np.ndarray)  # one entry's kind, or an array of them


@dataclass(frozen=True)
class Hop:
    """Following ``step`` from a node of ``from_type``; ``starts`` are the nameable nodes with such a neighbor."""

    from_type: str
    step: Step
    starts: np.ndarray

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.from_type, self.step.relation, self.step.direction, self.step.node_type)


def nameable_mask(graph: KnowledgeGraph) -> np.ndarray:
    """Nodes that can be named in a question: a non-empty name no other node of the same type shares.

    Counted by the hash of (type, name) a record batch at a time (:class:`~ark.graph.keys.KeyTable`), never a
    Python set of every name: only the rows whose hash another row shares are compared by their names."""
    codes = np.asarray(graph.node_type_codes)

    def normalized(start: int, names: list) -> list:
        return [(int(t), " ".join(name.lower().split()))
                for t, name in zip(codes[start:start + len(names)].tolist(), names, strict=True)]

    def key(start: int, names: list) -> list:
        return [pair if pair[1] else None for pair in normalized(start, names)]

    table = KeyTable.build((start, key(start, names)) for start, names in column_chunks(graph.nodes.column("name")))
    mask = np.zeros(graph.num_nodes, dtype=bool)
    mask[table.row_array] = True  # a non-empty name
    shared = table.shared_hash_rows()
    if len(shared):
        pairs = [normalized(int(row), [graph.name(int(row))])[0] for row in shared]
        counts = Counter(pairs)
        mask[shared] = [counts[pair] == 1 for pair in pairs]
    return mask


def schema_hops(graph: KnowledgeGraph, nameable: np.ndarray) -> tuple[list[Hop], list[str]]:
    """Both directions of every schema triple with edges, and notes on what had to be skipped."""
    notes: list[str] = []
    used = {t.relation for t in graph.schema if t.count > 0}
    for relation in graph.relation_types:
        if relation not in used:
            notes.append(f"relation {relation!r} has no edges: skipped")
    counts = graph.type_counts()
    for node_type, count in counts.items():
        if count == 0:
            notes.append(f"node type {node_type!r} has no nodes: skipped")
    starts_of = _hop_starts(graph)
    width = len(graph.node_types)
    hops: list[Hop] = []
    for triple in graph.schema:
        if triple.count == 0:
            continue
        s_code, t_code = graph.node_types.index(triple.source_type), graph.node_types.index(triple.target_type)
        code = 2 * graph.relation_types.index(triple.relation)
        ways: tuple[tuple[str, str, StepDirection, int], ...] = (
            (triple.source_type, triple.target_type, "out", _hop_key(s_code, code, t_code, width)),
            (triple.target_type, triple.source_type, "in", _hop_key(t_code, code + 1, s_code, width)),
        )
        for from_type, to_type, direction, hop_key in ways:
            starts = starts_of.get(hop_key, np.empty(0, dtype=np.int32))
            starts = starts[nameable[starts]]
            if len(starts) == 0:
                notes.append(f"no uniquely named {from_type!r} node starts relation {triple.relation!r} "
                             f"({direction}): skipped as an anchor")
            hops.append(Hop(from_type, Step(triple.relation, direction, to_type), starts))
    return hops, notes


def _hop_key(row_type: Key, code: Key, neighbor_type: Key, width: int) -> Key:
    """The key of a CSR entry's kind: its row's type, its packed (relation, direction) code, its neighbour's type
    (``width``: the number of node types)."""
    return (code * width + row_type) * width + neighbor_type


def _hop_starts(graph: KnowledgeGraph) -> dict[int, np.ndarray]:
    """For each kind of CSR entry (:func:`_hop_key`), the sorted distinct rows holding one: the nodes a hop of that
    kind starts from. The CSR is read a block of rows at a time, so memory is bounded by the block and the starts,
    not by the graph's edges; blocks come in row order, so each kind's rows come sorted."""
    types, width = np.asarray(graph.node_type_codes, dtype=np.int64), len(graph.node_types)
    found: dict[int, list[np.ndarray]] = {}
    for rows, neighbors, codes in entry_blocks(graph):
        keys = _hop_key(types[rows], codes, types[neighbors], width)
        order = np.argsort(keys, kind="stable")  # rows stay ascending within a kind
        keys, rows = keys[order], rows[order]
        fresh = np.ones(len(keys), dtype=bool)
        fresh[1:] = (keys[1:] != keys[:-1]) | (rows[1:] != rows[:-1])
        keys, rows = keys[fresh], rows[fresh]
        bounds = np.flatnonzero(keys[1:] != keys[:-1]) + 1
        for part_keys, part_rows in zip(np.split(keys, bounds), np.split(rows, bounds), strict=True):
            if len(part_keys):
                found.setdefault(int(part_keys[0]), []).append(part_rows)
    return {key: np.concatenate(parts).astype(np.int32) for key, parts in found.items()}
