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

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from ark.graph import EdgeTable, GraphValidationError, KnowledgeGraph, NodeTable, build_graph
from ark.graph.storage import check_source_outside_target
from ark.graph.tables import string_column
from ark.storage.jsonl import parse_json_object

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
    names = string_column(nodes["name"], "")
    texts, properties = _texts_and_properties(names, nodes.get("properties"), nodes_file)
    node_table = NodeTable.from_arrow(
        pa.table({"id": nodes["id (stripped)"], "type": nodes["type (stripped)"], "name": names, "text": texts,
                  "properties": properties}),
        source=str(nodes_file),
    )
    del nodes
    edge_table = EdgeTable(
        sources=edges["from (stripped)"],
        targets=edges["to (stripped)"],
        relations=edges["type (stripped)"],
        source=str(edges_file),
        allowed_relations=list(relations) if relations is not None else None,
    )
    del edges
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


Columns = dict[str, "pa.ChunkedArray | list[Any]"]


def _read_table(path: Path, required: tuple[str, ...]) -> Columns:
    """Read a table (Arrow columns; a JSONL file's non-required columns stay Python lists), checking the required
    columns exist and are never blank; each required column is also given stripped, as ``"<name> (stripped)"``."""
    if path.suffix == ".parquet":
        table = pq.read_table(path)
        columns: Columns = {name: _parquet_column(path, name, table.column(name)) for name in table.column_names}
    elif path.suffix == ".csv":
        check_utf8(path)
        columns = _read_csv(path)
    else:
        check_utf8(path)
        columns = _read_jsonl(path)
        for column in required:
            if column in columns:  # as text, like every other format (ids such as 7 become "7")
                columns[column] = pa.chunked_array([string_column(columns[column], None)])
    missing = [c for c in required if c not in columns]
    if missing:
        raise GraphValidationError(
            f"{path}: missing column(s) {', '.join(missing)}; required: {', '.join(required)}; "
            f"found: {', '.join(columns) or 'none'}"
        )
    for column in required:
        stripped = _stripped(columns[column])
        blank = pc.fill_null(pc.or_kleene(pc.is_null(stripped), pc.equal(pc.utf8_length(stripped), 0)), True)
        if pc.any(blank).as_py():
            rows = np.flatnonzero(blank.to_numpy(zero_copy_only=False))
            shown = ", ".join(str(r) for r in rows[:5])
            raise GraphValidationError(f"{path}: column {column!r} is empty in {len(rows)} row(s): {shown}")
        columns[f"{column} (stripped)"] = stripped
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


def _parquet_column(path: Path, name: str, column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A Parquet column as read; a binary column is cast to UTF-8 text, or refused naming the first bad row."""
    kind = column.type
    if not (pa.types.is_binary(kind) or pa.types.is_large_binary(kind) or pa.types.is_fixed_size_binary(kind)):
        return column
    try:
        return column.cast(pa.string())  # Arrow validates the UTF-8 as it casts
    except pa.ArrowInvalid:
        pass
    for row, value in enumerate(column.to_pylist()):  # only on failure: find the row to name it
        try:
            value is None or value.decode("utf-8")
        except UnicodeDecodeError:
            raise GraphValidationError(
                f"{path}: column {name!r} holds bytes that are not UTF-8 text (row {row}: {value[:40]!r}); "
                "write it as a string column of UTF-8 text") from None
    raise AssertionError("unreachable: Arrow refused a column whose every value decodes")


def _read_csv(path: Path) -> Columns:
    with path.open(encoding="utf-8", newline="") as handle:
        header = next(csv.reader(handle), [])
    if not header:
        raise GraphValidationError(f"{path}: the file is empty; a CSV table starts with a header line naming its "
                                   "columns")
    # Every column as text, so ids such as "007" keep their form and empty cells stay empty strings.
    options = pa_csv.ConvertOptions(column_types={c: pa.string() for c in header}, strings_can_be_null=False)
    try:
        table = pa_csv.read_csv(path, convert_options=options)
    except pa.ArrowInvalid as exc:  # Arrow's message names no file
        raise GraphValidationError(f"{path}: {' '.join(str(exc).split())}") from None
    return {name: table.column(name) for name in table.column_names}


def _read_jsonl(path: Path) -> dict[str, list[Any]]:
    rows: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            rows.append(parse_json_object(line, f"{path}, line {line_no}", GraphValidationError))
    names: dict[str, None] = {}
    for row in rows:
        names.update(dict.fromkeys(row))
    return {name: [row.get(name) for row in rows] for name in names}


def _texts_and_properties(names: pa.ChunkedArray | pa.Array, properties: pa.ChunkedArray | list[Any] | None,
                          path: Path, batch: int = 65_536) -> tuple[pa.ChunkedArray, pa.ChunkedArray]:
    """Node documents (:func:`node_text`) and properties as JSON-object strings, computed a batch of rows at a time
    so that no more than one batch of parsed properties lives as Python objects. Properties given as JSON text
    are kept as written; objects (JSONL) are serialised."""
    n = len(names)
    if properties is None:
        return pa.chunked_array([names], pa.string()), pa.chunked_array([pa.repeat(pa.scalar("{}"), n)], pa.string())
    texts, stored = [], []
    bad: list[str] = []  # the malformed rows, as _parse_properties notes them
    for start in range(0, n, batch):
        end = min(start + batch, n)
        column = properties[start:end]
        values = column.to_pylist() if isinstance(column, pa.ChunkedArray | pa.Array) else column
        parsed = _parse_properties(values, start, bad)
        texts.append(pa.array([node_text(name, p) for name, p in zip(names[start:end].to_pylist(), parsed,
                                                                    strict=True)], pa.string()))
        if isinstance(column, pa.ChunkedArray) and pa.types.is_string(column.type):
            # JSON-object strings are stored as they are (they parse to the same dicts); blanks become "{}".
            blank = pc.fill_null(pc.equal(column, ""), True)
            stored.extend(pc.if_else(blank, "{}", column).chunks)
        else:
            stored.append(pa.array([v if isinstance(v, str) and v else json.dumps(p, ensure_ascii=False, default=str)
                                    for v, p in zip(values, parsed, strict=True)], pa.string()))
    if bad:
        shown = ", ".join(bad[:5])
        more = f" (and {len(bad) - 5} more)" if len(bad) > 5 else ""
        raise GraphValidationError(
            f"{path}: column 'properties' must hold JSON objects; "
            f"malformed in {len(bad)} row(s): {shown}{more}"
        )
    return pa.chunked_array(texts, pa.string()), pa.chunked_array(stored, pa.string())


def _parse_properties(values: list[Any], first_row: int, bad: list[str]) -> list[dict[str, Any]]:
    """JSON-object strings (or dicts) to dicts; malformed rows are noted in ``bad`` (and parse as ``{}``)."""
    parsed: list[dict[str, Any]] = []
    for row, value in enumerate(values, start=first_row):
        if value is None or value == "":
            parsed.append({})
            continue
        if isinstance(value, dict):
            parsed.append(value)
            continue
        try:
            obj = json.loads(value)
        except (TypeError, json.JSONDecodeError, RecursionError):  # RecursionError: nested too deep to read
            obj = None
        if not isinstance(obj, dict):
            bad.append(f"row {row}: {str(value)[:60]!r}")
            obj = {}
        parsed.append(obj)
    return parsed


# Every character Python's str.strip() removes (str.isspace); tests check the set against Python's.
PYTHON_WHITESPACE = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + \
    "\u2028\u2029\u202f\u205f\u3000"
# UTF-8 bytes that can start or end one of those characters: a string whose first or last byte is not among them
# has nothing to strip, so only the (rare) others are checked by Python.
_FIRST_BYTES = np.zeros(256, dtype=bool)
_LAST_BYTES = np.zeros(256, dtype=bool)
for _char in PYTHON_WHITESPACE:
    _encoded = _char.encode()
    _FIRST_BYTES[_encoded[0]] = _LAST_BYTES[_encoded[-1]] = True


def _stripped(values: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
    """``str(v).strip()`` of a string column, nulls kept, exactly as Python strips: a byte test on each value's
    first and last byte finds the few values that may need it (usually none), and Python strips those."""
    values = string_column(values, None) if values.type != pa.string() else values
    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    rows, base = [], 0
    for chunk in chunks:
        _, offsets_buffer, data_buffer = chunk.buffers()
        if data_buffer is not None and len(chunk):
            offsets = np.frombuffer(offsets_buffer, dtype=np.int32)[chunk.offset : chunk.offset + len(chunk) + 1]
            data = np.frombuffer(data_buffer, dtype=np.uint8)
            starts, ends = offsets[:-1], offsets[1:]
            filled = np.flatnonzero(ends > starts)
            maybe = _FIRST_BYTES[data[starts[filled]]] | _LAST_BYTES[data[ends[filled] - 1]]
            candidates = filled[maybe]
            if len(candidates):
                texts = chunk.take(pa.array(candidates)).to_pylist()
                rows += [base + int(r) for r, t in zip(candidates, texts, strict=True) if t != t.strip()]
        base += len(chunk)
    if not rows:
        return values
    column = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    fixed = pa.array([v.strip() for v in column.take(pa.array(rows)).to_pylist()], pa.string())
    mask = np.zeros(len(column), dtype=bool)
    mask[rows] = True
    return pc.replace_with_mask(column, pa.array(mask), fixed)
