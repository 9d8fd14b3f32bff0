"""Graph folders: a ``nodes`` and an ``edges`` table (CSV, TSV, JSONL, Parquet or Arrow; the ark-agent-cli data
contract and what other tools export), read by :mod:`.table_reader`.

A folder holds ``nodes.<fmt>`` and ``edges.<fmt>`` and an optional ``graph.json`` (``{id, name, description,
...}``) giving the graph's name and description. The columns, the node text and the properties are the table
reader's (see there). Edge properties are not kept: the graph stores typed edges only.

:func:`node_text` is the document of the loaders whose nodes come as a name and features (GRBench): the name, then
``key: value`` per textual feature, :data:`TEXT_KEYS_FIRST` first.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ark.graph import EdgeTable, GraphValidationError, KnowledgeGraph, NodeTable, build_graph
from ark.graph.storage import check_source_outside_target
from ark.progress import progress_bar

from .table_files import PYTHON_WHITESPACE, check_utf8
from .table_reader import ColumnChoice, TypeColumns, read_edges, read_nodes

__all__ = ["PYTHON_WHITESPACE", "ColumnChoice", "check_utf8", "import_tabular", "load_tabular", "node_text"]

FORMATS = ("parquet", "csv", "jsonl", "tsv", "arrow")
TEXT_KEYS_FIRST = ("description", "summary", "definition", "abstract", "synonyms", "comment")


def load_tabular(path: str | Path, name: str | None = None, relations: Sequence[str] | None = None,
                 columns: ColumnChoice = ColumnChoice(), fmt: str | None = None,
                 report: Callable[[TypeColumns], None] | None = None) -> KnowledgeGraph:
    """Build a graph from a folder of node and edge tables.

    ``name`` overrides the graph name (default: ``graph.json``'s name, else the folder name); ``relations``, when
    given, is the list of allowed edge types and any other type is an error; ``columns`` chooses the id, type,
    name and text columns (kept as ``GraphInfo.columns``, so updates read the same way); ``fmt`` looks for that
    format's files first; ``report`` hears, per node type, which columns became the name, the text and properties.
    On a terminal the node rows are read under a bar, then the edges and the graph under a bar of steps.
    """
    return _load(Path(path), name, relations, columns, fmt, report)


def import_tabular(path: str | Path, out: str | Path, name: str | None = None,
                   columns: ColumnChoice = ColumnChoice(), fmt: str | None = None,
                   report: Callable[[TypeColumns], None] | None = None, memory_budget: int | None = None) -> Path:
    """Load the folder at ``path`` and save the graph to ``out`` (the saving a step of the bar of steps); nothing
    is written if loading fails. The tables are read a run of rows at a time and the graph written as it is made
    (:mod:`.tabular_stream`), the runs sized by ``memory_budget`` bytes (default ``$ARK_BUILD_MEMORY_MB``); the
    graph is the one :func:`load_tabular` builds."""
    from .tabular_stream import stream_import  # it imports find_table from here

    check_source_outside_target(path, out)
    folder = Path(path)
    if not folder.is_dir():
        raise FileNotFoundError(f"graph folder not found: {folder}")
    called, metadata = _metadata(folder, name, columns)
    return stream_import(folder, fmt, Path(out), metadata, called, columns, report, memory_budget)


def _load(folder: Path, name: str | None, relations: Sequence[str] | None, columns: ColumnChoice, fmt: str | None,
          report: Callable[[TypeColumns], None] | None) -> KnowledgeGraph:
    if not folder.is_dir():
        raise FileNotFoundError(f"graph folder not found: {folder}")
    called, metadata = _metadata(folder, name, columns)
    nodes_file = find_table(folder, "nodes", fmt)
    read = read_nodes(nodes_file, columns)
    for entry in read.by_type:
        if report is not None:
            report(entry)
    node_table = NodeTable.from_arrow(read.table, source=str(nodes_file))
    del read
    with progress_bar(f"Building graph {called!r} (edges, graph)", 2) as bar:
        edges_file = find_table(folder, "edges", fmt)
        edges = read_edges(edges_file)
        edge_table = EdgeTable(sources=edges["from"], targets=edges["to"], relations=edges["type"],
                               source=str(edges_file),
                               allowed_relations=list(relations) if relations is not None else None)
        del edges
        bar.advance(1)
        graph = build_graph(node_table, edge_table, metadata=metadata)
        bar.advance(1)
    return graph


def _metadata(folder: Path, name: str | None, columns: ColumnChoice) -> tuple[str, dict[str, Any]]:
    """The graph's name and metadata: ``name``, else ``graph.json``'s name or id, else the folder's name."""
    info = _graph_info(folder)
    called = name or info.get("name") or info.get("id") or folder.name
    metadata: dict[str, Any] = {
        "name": called,
        "source": f"ark-agent-cli folder {folder.resolve()}",
    }
    for key in ("id", "description", "version", "credit"):
        if info.get(key) not in (None, ""):
            metadata.setdefault(key, info[key])
    if columns.to_metadata():
        metadata.update(columns=columns.to_metadata())
    return called, metadata


def node_text(name: str, properties: dict[str, Any]) -> str:
    """A node's document: its name, then ``key: value`` lines for its textual properties (see module doc)."""
    lines = [name] if name else []
    keys = [k for k in TEXT_KEYS_FIRST if k in properties]
    keys += [k for k in properties if k not in TEXT_KEYS_FIRST]
    for key in keys:
        value = _textual(properties[key])
        if value and not str(key).startswith("_"):
            lines.append(f"{key}: {value}")
    return "\n".join(lines)


def _textual(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list) and value and all(isinstance(v, str | int | float) for v in value):
        return "; ".join(str(v).strip() for v in value if str(v).strip())
    return ""


def _graph_info(folder: Path) -> dict[str, Any]:
    path = folder / "graph.json"
    if not path.is_file():
        return {}
    check_utf8(path)
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise GraphValidationError(f"{path}: not valid JSON ({error.msg} at line {error.lineno})") from None
    if not isinstance(info, dict):
        raise GraphValidationError(f"{path}: expected a JSON object with id/name/description")
    return info


SUFFIXES = {"parquet": ("parquet",), "csv": ("csv",), "tsv": ("tsv",), "jsonl": ("jsonl", "ndjson"),
            "arrow": ("arrow", "feather")}


def find_table(folder: Path, stem: str, fmt: str | None = None) -> Path:
    """``folder/stem.<suffix>``: ``fmt``'s first, then every format's; an error lists what was looked for."""
    order = ([fmt] if fmt else []) + [f for f in FORMATS if f != fmt]
    looked = [f"{stem}.{suffix}" for f in order for suffix in SUFFIXES[f]]
    for candidate in looked:
        if (folder / candidate).is_file():
            return folder / candidate
    raise FileNotFoundError(f"{folder}: no {stem} table; expected one of {', '.join(looked)}")
