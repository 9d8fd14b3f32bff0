"""Updates of a saved graph from files: ``ark graph update GRAPH --nodes FILE --edges FILE --delete FILE`` and
``--from NEW_EXPORT_DIR`` (:mod:`ark.graph.versioning` stores them).

``--nodes`` and ``--edges`` are tables read as an import reads them (:mod:`ark.loaders.table_reader`: CSV, TSV,
JSONL, Parquet or Arrow; the same columns, text and properties); a node whose id exists replaces it whole, any other
is new; new node types and relations are allowed. ``--delete`` is a table in the same formats (an id column: nodes;
from/to/type columns: edges) or a text file: one node id a line (its edges go with it), an edge as
``from<TAB>to<TAB>type``, or a JSON object with those fields; blank lines and lines starting with ``#`` are skipped.
``--from`` compares the graph with a full new export in the import formats and stores the difference.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from ark.graph import GraphValidationError, KnowledgeGraph
from ark.graph.ids import id_text
from ark.graph.versioning.delta import EDGE_SCHEMA, NODE_COLUMNS, GraphDelta, empty_edges, empty_nodes, node_rows
from ark.storage.jsonl import parse_json_object

from . import table_reader
from .table_files import SUFFIXES, check_utf8, table_format
from .table_reader import EDGE_ALIASES, NODE_ALIASES, ColumnChoice, find_column


def read_update(nodes: Path | None = None, edges: Path | None = None, delete: Path | None = None,
                columns: ColumnChoice = ColumnChoice()) -> GraphDelta:
    """The update the files describe (see the module doc); nothing is checked against the graph yet."""
    node_table = read_nodes(nodes, columns) if nodes is not None else empty_nodes()
    edge_table = read_edges(edges) if edges is not None else empty_edges()
    deleted, removed = read_deletions(delete) if delete is not None else ([], [])
    return GraphDelta(node_table, edge_table, _edges(removed), pa.array(deleted, pa.string()))


def read_nodes(path: Path, columns: ColumnChoice = ColumnChoice()) -> pa.Table:
    """A node table (id, type, name, text, properties) from a file in the import formats."""
    _check_file(path)
    table = table_reader.read_nodes(path, columns).table
    _check_unique(table.column("id"), path)
    return table.select(list(NODE_COLUMNS))


def read_edges(path: Path) -> pa.Table:
    """An edge table (source, target, relation) from a file in the import formats."""
    _check_file(path)
    columns = table_reader.read_edges(path)
    return pa.table({"source": columns["from"], "target": columns["to"], "relation": columns["type"]}
                    ).cast(EDGE_SCHEMA)


def read_deletions(path: Path) -> tuple[list[str], list[tuple[str, str, str]]]:
    """Node ids and edge triples a ``--delete`` file lists: a table in the import formats (an id column, or
    from/to/type columns), or text: a node id a line, ``from<TAB>to<TAB>type``, or a JSON object with those
    fields; an error names the line that is none of them."""
    if not path.is_file():
        raise FileNotFoundError(f"--delete file not found: {path}")
    if path.suffix.lower() in SUFFIXES:
        return table_reader.read_deleted(path)
    check_utf8(path)
    nodes: list[str] = []
    edges: list[tuple[str, str, str]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{path}, line {number}"
        if line.lstrip().startswith("{"):
            node, edge = _deleted_object(parse_json_object(line, where, GraphValidationError), where)
            nodes += node
            edges += edge
            continue
        parts = [p.strip() for p in line.split("\t")]
        if len(parts) == 1:
            nodes.append(parts[0])
        elif len(parts) == 3 and all(parts):
            edges.append((parts[0], parts[1], parts[2]))
        else:
            raise GraphValidationError(f"{where}: expected a node id or from<TAB>to<TAB>type (or a JSON object "
                                       f"with an id, or from, to and type), got {line[:80]!r}")
    return nodes, edges


def _deleted_object(row: dict, where: str) -> tuple[list[str], list[tuple[str, str, str]]]:
    """A JSON line of a ``--delete`` text file: ``{"id": ...}`` or ``{"from": ..., "to": ..., "type": ...}``."""
    node = find_column(list(row), NODE_ALIASES["id"])
    if node is not None and row[node] is not None and id_text(row[node], f"{where}: {node!r}").strip():
        return [id_text(row[node], node).strip()], []
    keys = [find_column(list(row), EDGE_ALIASES[r]) for r in ("from", "to", "type")]
    values = [id_text(row[k], f"{where}: {k!r}").strip() if k is not None and row[k] is not None else ""
              for k in keys]
    if all(values):
        return [], [(values[0], values[1], values[2])]
    raise GraphValidationError(f"{where}: a JSON line of a --delete file needs an id, or from, to and type; got "
                               f"keys {', '.join(map(repr, row)) or 'none'}")


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


def _check_file(path: Path) -> None:
    if not path.is_file():
        raise FileNotFoundError(f"update file not found: {path}")
    table_format(path)


def _check_unique(ids: pa.ChunkedArray, path: Path) -> None:
    counts = pc.value_counts(ids)
    repeated = pc.filter(counts, pc.greater(counts.field("counts"), 1)).field("values").to_pylist()
    if repeated:
        raise GraphValidationError(f"{path}: node id(s) given more than once: {', '.join(map(repr, repeated[:5]))}")
