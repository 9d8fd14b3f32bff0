"""The rows of a graph's versions: node rows with their type, edge keys, and the codes of new type names (shared by
the delta records, the merge and the fingerprint, which import this module and not each other's internals)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:
    from ..store import KnowledgeGraph

NODE_COLUMNS = ("id", "type", "name", "text", "properties")
EDGE_SCHEMA = pa.schema([("source", pa.string()), ("target", pa.string()), ("relation", pa.string())])


def empty_edges() -> pa.Table:
    return EDGE_SCHEMA.empty_table()


def empty_nodes() -> pa.Table:
    return pa.schema([(name, pa.string()) for name in NODE_COLUMNS]).empty_table()


def edge_keys(edges: pa.Table) -> list[tuple[str, str, str]]:
    columns = [edges.column(c).to_pylist() for c in ("source", "target", "relation")]
    return list(zip(*columns, strict=True))


def node_rows(graph: KnowledgeGraph) -> pa.Table:
    """The graph's node table with its ``type`` column (id, type, name, text, properties)."""
    types = pa.array(graph.node_types, pa.string()).take(pa.array(np.asarray(graph.node_type_codes, np.int64)))
    nodes = graph.nodes
    columns = {c: nodes.column(c) if c != "type" else types for c in NODE_COLUMNS}
    return pa.table(columns)


def last_rows(nodes: pa.Table) -> pa.Table:
    """The rows of ``nodes`` that are the last for their id (an id given twice in one update keeps its last row)."""
    ids = nodes.column("id").to_pylist()
    last = {node_id: k for k, node_id in enumerate(ids)}
    return nodes.filter(pa.array([last[x] == k for k, x in enumerate(ids)], pa.bool_()))


def numbered_types(known: list[str], column: pa.ChunkedArray) -> tuple[list[str], npt.NDArray[np.int16]]:
    names = list(known)
    for value in pc.unique(column).to_pylist():
        if value not in names:
            names.append(value)
    codes = pc.index_in(column, value_set=pa.array(names, pa.string()))
    return names, np.asarray(codes.to_numpy(zero_copy_only=False), dtype=np.int16)
