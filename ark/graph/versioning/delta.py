"""One update of a graph as a typed record (:class:`GraphDelta`), its files, and the merge of a base with deltas.

A delta holds the rows of new or changed nodes (upserts: id, type, name, text, properties), the edges added and
removed (source id, target id, relation) and the ids of deleted nodes; deleting a node deletes its edges. Within
one delta, deletions apply first, then upserts, then edge removals, then edge additions; a delta that both
deletes and upserts a node, or both adds and removes an edge, is refused.

:func:`~ark.graph.versioning.merge.merge_version` turns a base graph and its deltas into the graph of a version in
one merge (a changed node keeps its place, new nodes follow; see :mod:`ark.graph.versioning.merge`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from ...storage.checksums import check_files, file_records
from ..errors import GraphValidationError, describe_values
from .rows import EDGE_SCHEMA, NODE_COLUMNS, edge_keys, empty_edges, empty_nodes, node_rows

__all__ = ["EDGE_SCHEMA", "NODE_COLUMNS", "GraphDelta", "edge_keys", "empty_edges", "empty_nodes",
           "node_rows"]

FILES = {"nodes": "nodes.arrow", "edges_added": "edges_added.arrow", "edges_removed": "edges_removed.arrow",
         "nodes_deleted": "nodes_deleted.arrow"}


@dataclass
class GraphDelta:
    """One update: node upserts, deleted node ids, edges added and removed (string ids; see the module doc)."""

    nodes: pa.Table
    edges_added: pa.Table
    edges_removed: pa.Table
    nodes_deleted: pa.Array

    @classmethod
    def empty(cls) -> GraphDelta:
        return cls(empty_nodes(), empty_edges(), empty_edges(), pa.array([], pa.string()))

    def counts(self) -> dict[str, int]:
        return {"nodes_upserted": self.nodes.num_rows, "nodes_deleted": len(self.nodes_deleted),
                "edges_added": self.edges_added.num_rows, "edges_removed": self.edges_removed.num_rows}

    def is_empty(self) -> bool:
        return not any(self.counts().values())

    def check_consistent(self) -> None:
        """Refuse a delta that deletes and upserts one node, or adds and removes one edge (naming them)."""
        both = pc.filter(self.nodes_deleted, pc.is_in(self.nodes_deleted, self.nodes.column("id"))).to_pylist()
        if both:
            raise GraphValidationError("node id(s) both deleted and given as nodes in one update: "
                                       + describe_values(both, len(both)))
        added, removed = edge_keys(self.edges_added), edge_keys(self.edges_removed)
        clash = sorted(set(added) & set(removed))
        if clash:
            raise GraphValidationError("edge(s) both added and deleted in one update: "
                                       + describe_values(clash, len(clash)))

    def save(self, directory: Path) -> dict[str, dict[str, object]]:
        """Write the delta's files into ``directory``; returns their checksum records."""
        tables = {"nodes": self.nodes.select(list(NODE_COLUMNS)), "edges_added": self.edges_added,
                  "edges_removed": self.edges_removed,
                  "nodes_deleted": pa.table({"id": self.nodes_deleted})}
        for key, table in tables.items():
            with pa.OSFile(str(directory / FILES[key]), "wb") as sink, \
                    pa.ipc.new_file(sink, table.schema) as writer:
                writer.write_table(table)
        records = file_records(directory, list(FILES.values()))
        (directory / "delta.json").write_text(json.dumps({"counts": self.counts(), "files": records}, indent=1))
        return records

    @classmethod
    def load(cls, directory: Path, records: Mapping[str, Mapping[str, object]], fix: str) -> GraphDelta:
        """The delta saved in ``directory``, its files checked against ``records`` (the manifest's)."""
        check_files(directory, records, fix)
        tables = {}
        for key, name in FILES.items():
            with pa.OSFile(str(directory / name)) as source:
                tables[key] = pa.ipc.open_file(source).read_all()
        return cls(tables["nodes"], tables["edges_added"], tables["edges_removed"],
                   tables["nodes_deleted"].column("id").combine_chunks())
