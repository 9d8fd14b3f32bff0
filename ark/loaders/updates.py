"""Updates of a saved graph from files: ``ark graph update GRAPH --nodes FILE --edges FILE --delete FILE`` and
``--from NEW_EXPORT_DIR`` (:mod:`ark.graph.versions` stores them).

``--nodes`` and ``--edges`` are tables in the import formats (:mod:`ark.loaders.tabular`: Parquet, CSV or JSONL;
nodes ``id``, ``name``, ``type``, optional ``properties``, and optionally ``text``, the node's document as it is;
edges ``from``, ``to``, ``type``); a node whose id exists replaces it whole, any other is new; new node types and
relations are allowed. ``--delete`` is a text file: one node id a line (its edges go with it), or an edge as
``from<TAB>to<TAB>type``; blank lines and lines starting with ``#`` are skipped. ``--from`` compares the graph with a
full new export in the import formats and stores the difference.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from ark.graph import GraphValidationError, KnowledgeGraph
from ark.graph.delta import EDGE_SCHEMA, NODE_COLUMNS, GraphDelta, empty_edges, empty_nodes, node_rows
from ark.graph.tables import string_column

from .tabular import EDGE_COLUMNS, _read_table, _texts_and_properties, check_utf8
from .tabular import NODE_COLUMNS as TABLE_NODE_COLUMNS


def read_update(nodes: Path | None = None, edges: Path | None = None, delete: Path | None = None) -> GraphDelta:
    """The update the files describe (see the module doc); nothing is checked against the graph yet."""
    node_table = read_nodes(nodes) if nodes is not None else empty_nodes()
    edge_table = read_edges(edges) if edges is not None else empty_edges()
    deleted, removed = read_deletions(delete) if delete is not None else ([], [])
    return GraphDelta(node_table, edge_table, _edges(removed), pa.array(deleted, pa.string()))


def read_nodes(path: Path) -> pa.Table:
    """A node table (id, type, name, text, properties) from a file in the import formats."""
    _check_format(path)
    columns = _read_table(path, TABLE_NODE_COLUMNS)
    names = string_column(columns["name"], "")
    texts, properties = _texts_and_properties(names, columns.get("properties"), path)
    if "text" in columns:
        texts = pa.chunked_array([string_column(columns["text"], "")])
    table = pa.table({"id": columns["id (stripped)"], "type": columns["type (stripped)"], "name": names,
                      "text": texts, "properties": properties})
    _check_unique(table.column("id"), path)
    return table.select(list(NODE_COLUMNS))


def read_edges(path: Path) -> pa.Table:
    """An edge table (source, target, relation) from a file in the import formats."""
    _check_format(path)
    columns = _read_table(path, EDGE_COLUMNS)
    return pa.table({"source": columns["from (stripped)"], "target": columns["to (stripped)"],
                     "relation": columns["type (stripped)"]}).cast(EDGE_SCHEMA)


def read_deletions(path: Path) -> tuple[list[str], list[tuple[str, str, str]]]:
    """Node ids and edge triples listed in a ``--delete`` file; an error names the line that is neither."""
    if not path.is_file():
        raise FileNotFoundError(f"--delete file not found: {path}")
    check_utf8(path)
    nodes: list[str] = []
    edges: list[tuple[str, str, str]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = [p.strip() for p in line.split("\t")]
        if len(parts) == 1:
            nodes.append(parts[0])
        elif len(parts) == 3 and all(parts):
            edges.append((parts[0], parts[1], parts[2]))
        else:
            raise GraphValidationError(f"{path}, line {number}: expected a node id or from<TAB>to<TAB>type, got "
                                       f"{line[:80]!r}")
    return nodes, edges


def diff_export(current: KnowledgeGraph, new: KnowledgeGraph) -> GraphDelta:
    """The update that turns ``current`` into ``new`` (a full new export): new or changed nodes, deleted ids, edges
    added and removed (edges of deleted nodes go with them)."""
    old_rows, new_rows = node_rows(current), node_rows(new)
    old_ids, new_ids = old_rows.column("id"), new_rows.column("id")
    deleted = pc.filter(old_ids, pc.invert(pc.is_in(old_ids, new_ids))).combine_chunks()
    old_by_id = {row["id"]: row for row in old_rows.to_pylist()}
    changed = [row != old_by_id.get(row["id"]) for row in new_rows.to_pylist()]
    upserts = new_rows.filter(pa.array(changed, pa.bool_()))
    old_edges, new_edges = _edge_set(current), _edge_set(new)
    gone = set(deleted.to_pylist())
    removed = sorted(e for e in old_edges - new_edges if e[0] not in gone and e[1] not in gone)
    return GraphDelta(upserts, _edges(sorted(new_edges - old_edges)), _edges(removed), deleted.cast(pa.string()))


def _edge_set(graph: KnowledgeGraph) -> set[tuple[str, str, str]]:
    src, dst, rel = graph.edges()
    ids = graph.nodes.column("id").to_pylist()
    return {(ids[s], ids[d], graph.relation_types[r]) for s, d, r in zip(src.tolist(), dst.tolist(), rel.tolist(),
                                                                         strict=True)}


def _edges(triples: list[tuple[str, str, str]]) -> pa.Table:
    return pa.table({"source": [t[0] for t in triples], "target": [t[1] for t in triples],
                     "relation": [t[2] for t in triples]}, schema=EDGE_SCHEMA)


def _check_format(path: Path) -> None:
    if not path.is_file():
        raise FileNotFoundError(f"update file not found: {path}")
    if path.suffix not in (".parquet", ".csv", ".jsonl"):
        raise GraphValidationError(f"{path}: unknown table format {path.suffix!r}; valid: .parquet, .csv, .jsonl")


def _check_unique(ids: pa.ChunkedArray, path: Path) -> None:
    counts = pc.value_counts(ids)
    repeated = pc.filter(counts, pc.greater(counts.field("counts"), 1)).field("values").to_pylist()
    if repeated:
        raise GraphValidationError(f"{path}: node id(s) given more than once: {', '.join(map(repr, repeated[:5]))}")
