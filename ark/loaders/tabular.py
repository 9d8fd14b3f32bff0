"""Graph folders in the ark-agent-cli data contract: ``nodes`` + ``edges`` tables as Parquet, CSV or JSONL.

A folder holds ``nodes.parquet`` (columns ``id``, ``name``, ``type``, optional ``properties`` as a
JSON-object string) and ``edges.parquet`` (``from``, ``to``, ``type``, optional ``properties``);
``nodes.csv``/``edges.csv`` and ``nodes.jsonl``/``edges.jsonl`` (one JSON object a line, ``properties`` as
an object or a JSON string) are read the same way. An optional ``graph.json`` (``{id, name, description,
...}``) supplies the graph's name and description.

Edge ``properties`` are not kept: the graph stores typed edges only. CSV and JSONL files must be UTF-8 (an error
names the file, line and column of the first byte that is not); Parquet columns stored as bytes rather than
strings are decoded as UTF-8 (refused with the column and row where that fails).

The document of a node (``graph.text(i)``, the text search ranks) is its name on the first line, then one
line ``key: value`` per textual property: first the keys in :data:`TEXT_KEYS_FIRST` (description, summary,
...) that are present, then the other keys in their stored order. Strings are written as they are, lists of
strings and numbers are joined with ``"; "``; numbers, booleans, nested objects, empty values and keys
starting with ``_`` are left out of the text (they stay in ``graph.properties(i)``).
"""

from __future__ import annotations

import codecs
import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from ark.graph import EdgeTable, GraphValidationError, KnowledgeGraph, NodeTable, build_graph
from ark.graph.storage import check_source_outside_target

FORMATS = ("parquet", "csv", "jsonl")
NODE_COLUMNS = ("id", "name", "type")
EDGE_COLUMNS = ("from", "to", "type")
TEXT_KEYS_FIRST = ("description", "summary", "definition", "abstract", "synonyms", "comment")


def load_tabular(
    path: str | Path, name: str | None = None, relations: Sequence[str] | None = None
) -> KnowledgeGraph:
    """Build a graph from an ark-agent-cli style folder.

    ``name`` overrides the graph name (default: ``graph.json``'s name, else the folder name);
    ``relations``, when given, is the list of allowed edge types and any other type is an error.
    """
    folder = Path(path)
    if not folder.is_dir():
        raise FileNotFoundError(f"graph folder not found: {folder}")
    info = _graph_info(folder)
    nodes_file = _find_table(folder, "nodes")
    edges_file = _find_table(folder, "edges")
    nodes = _read_table(nodes_file, NODE_COLUMNS)
    edges = _read_table(edges_file, EDGE_COLUMNS)
    properties = nodes.get("properties")
    parsed = _parse_properties(properties, nodes_file) if properties is not None else [{}] * len(nodes["id"])
    names = ["" if v is None else str(v) for v in nodes["name"]]
    node_table = NodeTable(
        ids=_strings(nodes["id"]),
        types=_strings(nodes["type"]),
        names=names,
        texts=[node_text(n, p) for n, p in zip(names, parsed, strict=True)],
        properties=parsed,
        source=str(nodes_file),
    )
    edge_table = EdgeTable(
        sources=_strings(edges["from"]),
        targets=_strings(edges["to"]),
        relations=_strings(edges["type"]),
        source=str(edges_file),
        allowed_relations=list(relations) if relations is not None else None,
    )
    metadata = {
        "name": name or info.get("name") or info.get("id") or folder.name,
        "source": f"ark-agent-cli folder {folder.resolve()}",
    }
    for key in ("id", "description", "version", "credit"):
        if info.get(key) not in (None, ""):
            metadata.setdefault(key, info[key])
    return build_graph(node_table, edge_table, metadata=metadata)


def import_tabular(path: str | Path, out: str | Path, name: str | None = None) -> Path:
    """Load the folder at ``path`` and save the graph to ``out``; nothing is written if loading fails."""
    check_source_outside_target(path, out)
    graph = load_tabular(path, name=name)
    return graph.save(out)


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


def _find_table(folder: Path, stem: str) -> Path:
    for fmt in FORMATS:
        candidate = folder / f"{stem}.{fmt}"
        if candidate.is_file():
            return candidate
    expected = ", ".join(f"{stem}.{fmt}" for fmt in FORMATS)
    raise FileNotFoundError(f"{folder}: no {stem} table; expected one of {expected}")


def _read_table(path: Path, required: tuple[str, ...]) -> dict[str, list[Any]]:
    """Read a table as Python columns (ids kept as strings), checking the required columns exist."""
    if path.suffix == ".parquet":
        table = pq.read_table(path)
        columns = {name: _parquet_column(path, name, table.column(name)) for name in table.column_names}
    elif path.suffix == ".csv":
        check_utf8(path)
        columns = _read_csv(path)
    else:
        check_utf8(path)
        columns = _read_jsonl(path)
    missing = [c for c in required if c not in columns]
    if missing:
        raise GraphValidationError(
            f"{path}: missing column(s) {', '.join(missing)}; required: {', '.join(required)}; "
            f"found: {', '.join(columns) or 'none'}"
        )
    for column in required:
        blank = [row for row, v in enumerate(columns[column]) if v is None or str(v).strip() == ""]
        if blank:
            shown = ", ".join(str(r) for r in blank[:5])
            raise GraphValidationError(f"{path}: column {column!r} is empty in {len(blank)} row(s): {shown}")
    return columns


def check_utf8(path: Path, chunk_bytes: int = 1 << 20) -> None:
    """Raise :class:`GraphValidationError` naming the line and column of the first byte of ``path`` that is not
    UTF-8 (read in chunks: the file is never held twice in memory)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = newlines = 0  # bytes and line breaks before the current chunk
    last_break = -1  # position of the last line break seen
    with path.open("rb") as handle:
        while True:
            chunk = handle.read(chunk_bytes)
            try:
                decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as exc:
                position = offset - (len(exc.object) - len(chunk)) + exc.start  # pending bytes hold no line break
                before = chunk[: max(position - offset, 0)]
                line = newlines + before.count(b"\n") + 1
                start = offset + before.rfind(b"\n") + 1 if b"\n" in before else last_break + 1
                raise GraphValidationError(
                    f"{path}, line {line}, column {position - start + 1}: not UTF-8 text (byte "
                    f"{exc.object[exc.start]:#04x}); save the file as UTF-8") from None
            if not chunk:
                return
            newlines += chunk.count(b"\n")
            if b"\n" in chunk:
                last_break = offset + chunk.rfind(b"\n")
            offset += len(chunk)


def _parquet_column(path: Path, name: str, column: pa.ChunkedArray) -> list[Any]:
    """A Parquet column as Python values; a binary column is decoded as UTF-8 text, or refused naming the row."""
    values = column.to_pylist()
    kind = column.type
    if not (pa.types.is_binary(kind) or pa.types.is_large_binary(kind) or pa.types.is_fixed_size_binary(kind)):
        return values
    decoded = []
    for row, value in enumerate(values):
        try:
            decoded.append(value.decode("utf-8") if value is not None else None)
        except UnicodeDecodeError:
            raise GraphValidationError(
                f"{path}: column {name!r} holds bytes that are not UTF-8 text (row {row}: {value[:40]!r}); "
                "write it as a string column of UTF-8 text") from None
    return decoded


def _read_csv(path: Path) -> dict[str, list[Any]]:
    with path.open(encoding="utf-8", newline="") as handle:
        header = next(csv.reader(handle), [])
    # Every column as text, so ids such as "007" keep their form and empty cells stay empty strings.
    options = pa_csv.ConvertOptions(column_types={c: pa.string() for c in header}, strings_can_be_null=False)
    table = pa_csv.read_csv(path, convert_options=options)
    return {name: table.column(name).to_pylist() for name in table.column_names}


def _read_jsonl(path: Path) -> dict[str, list[Any]]:
    rows: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise GraphValidationError(f"{path}, line {line_no}: not valid JSON ({error.msg})") from None
            if not isinstance(row, dict):
                raise GraphValidationError(f"{path}, line {line_no}: expected a JSON object")
            rows.append(row)
    names: dict[str, None] = {}
    for row in rows:
        names.update(dict.fromkeys(row))
    return {name: [row.get(name) for row in rows] for name in names}


def _parse_properties(values: list[Any], path: Path) -> list[dict[str, Any]]:
    """JSON-object strings (or dicts) to dicts; malformed rows are reported together with their count."""
    parsed: list[dict[str, Any]] = []
    bad: list[str] = []
    for row, value in enumerate(values):
        if value is None or value == "":
            parsed.append({})
            continue
        if isinstance(value, dict):
            parsed.append(value)
            continue
        try:
            obj = json.loads(value)
        except (TypeError, json.JSONDecodeError):
            obj = None
        if not isinstance(obj, dict):
            bad.append(f"row {row}: {str(value)[:60]!r}")
            obj = {}
        parsed.append(obj)
    if bad:
        shown = ", ".join(bad[:5])
        more = f" (and {len(bad) - 5} more)" if len(bad) > 5 else ""
        raise GraphValidationError(
            f"{path}: column 'properties' must hold JSON objects; "
            f"malformed in {len(bad)} row(s): {shown}{more}"
        )
    return parsed


def _strings(values: list[Any]) -> list[str]:
    return [str(v).strip() for v in values]
