"""Reading one table file of a graph (CSV, TSV, JSONL, Parquet, Arrow) into columns, for :mod:`.table_reader`.

CSV, TSV and JSONL files must be UTF-8 (an error names the file, line and column of the first byte that is not);
Parquet and Arrow columns stored as bytes rather than strings are decoded as UTF-8 (refused with the column and row
where that fails). A CSV/TSV cell is text; a column other than the id, type and name columns whose every filled cell
is an integer (without leading zeros), a decimal number or true/false becomes that type, so a CSV gives the same
properties as the Parquet file of the same table. Empty cells are missing values.
"""

from __future__ import annotations

import codecs
import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from ark.graph import GraphValidationError
from ark.graph.tables import string_column
from ark.storage.jsonl import parse_json_object

SUFFIXES = {".parquet": "parquet", ".arrow": "arrow", ".feather": "arrow", ".csv": "csv", ".tsv": "tsv",
            ".jsonl": "jsonl", ".ndjson": "jsonl"}
Columns = dict[str, "pa.ChunkedArray | list[Any]"]


def table_format(path: Path) -> str:
    """The format of a table file by its suffix; an error names the valid suffixes."""
    fmt = SUFFIXES.get(path.suffix.lower())
    if fmt is None:
        raise GraphValidationError(f"{path}: unknown table format {path.suffix!r}; valid: {', '.join(SUFFIXES)}")
    return fmt


def read_columns(path: Path) -> tuple[Columns, bool]:
    """The columns of a table file (Arrow arrays; a JSONL file's stay Python lists), and whether they are typed
    (False for CSV/TSV: every cell is text, see :func:`typed_cells`)."""
    fmt = table_format(path)
    if not path.is_file():
        raise FileNotFoundError(f"table file not found: {path}")
    if fmt == "parquet":
        table = pq.read_table(path)
    elif fmt == "arrow":
        table = _read_arrow(path)
    elif fmt in ("csv", "tsv"):
        check_utf8(path)
        return _read_csv(path, "\t" if fmt == "tsv" else ","), False
    else:
        check_utf8(path)
        return _read_jsonl(path), True
    return {name: _parquet_column(path, name, table.column(name)) for name in table.column_names}, True


class TableBatches:
    """A table file read a run of rows at a time, for an import in bounded memory: Parquet by record batches of
    its row groups, Arrow by its record batches (sliced); CSV, TSV and JSONL are read whole (:func:`read_columns`)
    and handed out in slices (an Arrow file memory-mapped). ``columns`` names the columns."""

    def __init__(self, path: Path) -> None:
        self.path = path
        fmt = table_format(path)
        if not path.is_file():
            raise FileNotFoundError(f"table file not found: {path}")
        self.whole: Columns | None = None
        self.typed = True
        if fmt == "parquet":
            # pages streamed through a 1 MiB buffer, not a whole row group's column chunks fetched ahead
            self._parquet: pq.ParquetFile | None = pq.ParquetFile(path, buffer_size=1 << 20, pre_buffer=False)
            self.columns = list(self._parquet.schema_arrow.names)
            self.num_rows = self._parquet.metadata.num_rows
        else:
            self._parquet = None
            self.whole, self.typed = read_columns(path)  # an Arrow file memory-mapped, the others decoded
            self.columns = list(self.whole)
            self.num_rows = len(next(iter(self.whole.values()))) if self.whole else 0

    def type_cells(self, names: list[str]) -> None:
        """Type the text cells of these columns of a CSV/TSV file (:func:`typed_cells`: a column's type depends on
        all its cells, so the file is read whole); a no-op for the typed formats."""
        if not self.typed and self.whole is not None:
            for name in names:
                self.whole[name] = typed_cells(self.whole[name])

    def batches(self, batch_bytes: int, max_rows: int) -> Iterator[tuple[int, Columns]]:
        """(first row, columns) of runs of at most ``max_rows`` rows and about ``batch_bytes`` bytes of Arrow
        data (as the row groups' sizes or the columns' buffers say), in order."""
        start = 0
        if self._parquet is not None:
            meta = self._parquet.metadata
            for group in range(meta.num_row_groups):
                info = meta.row_group(group)
                rows = _rows_for(batch_bytes, info.total_byte_size, info.num_rows, max_rows)
                for batch in self._parquet.iter_batches(batch_size=rows, row_groups=[group], use_threads=False):
                    yield start, {name: _parquet_column(self.path, name, pa.chunked_array([batch.column(name)]),
                                                        start) for name in batch.schema.names}
                    start += batch.num_rows
            return
        assert self.whole is not None  # every other format is read whole
        size = sum(c.nbytes if isinstance(c, pa.ChunkedArray) else 64 * len(c) for c in self.whole.values())
        rows = _rows_for(batch_bytes, size, self.num_rows, max_rows)
        for start in range(0, self.num_rows, rows):
            yield start, {name: column[start : start + rows] for name, column in self.whole.items()}


def _rows_for(batch_bytes: int, total_bytes: int, total_rows: int, max_rows: int) -> int:
    """Rows a batch of about ``batch_bytes`` bytes holds where ``total_rows`` rows take ``total_bytes``."""
    per_row = max(total_bytes, 1) / max(total_rows, 1)
    return int(max(1, min(max_rows, batch_bytes // per_row)))


def _read_arrow(path: Path) -> pa.Table:
    """An Arrow IPC file (Feather 2) or stream."""
    try:
        with pa.memory_map(str(path)) as source:
            try:
                return pa.ipc.open_file(source).read_all()
            except pa.ArrowInvalid:
                source.seek(0)
                return pa.ipc.open_stream(source).read_all()
    except (pa.ArrowInvalid, OSError) as exc:
        raise GraphValidationError(f"{path}: not an Arrow IPC file or stream ({exc})") from None

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


def _parquet_column(path: Path, name: str, column: pa.ChunkedArray, first_row: int = 0) -> pa.ChunkedArray:
    """A Parquet column as read; a binary column is cast to UTF-8 text, or refused naming the first bad row."""
    kind = column.type
    if not (pa.types.is_binary(kind) or pa.types.is_large_binary(kind) or pa.types.is_fixed_size_binary(kind)):
        return column
    try:
        return column.cast(pa.string())  # Arrow validates the UTF-8 as it casts
    except pa.ArrowInvalid:
        pass
    for row, value in enumerate(column.to_pylist(), start=first_row):  # only on failure: find the row to name it
        try:
            value is None or value.decode("utf-8")
        except UnicodeDecodeError:
            raise GraphValidationError(
                f"{path}: column {name!r} holds bytes that are not UTF-8 text (row {row}: {value[:40]!r}); "
                "write it as a string column of UTF-8 text") from None
    raise AssertionError("unreachable: Arrow refused a column whose every value decodes")


def _read_csv(path: Path, delimiter: str) -> Columns:
    with path.open(encoding="utf-8", newline="") as handle:
        header = next(csv.reader(handle, delimiter=delimiter), [])
    if not header:
        raise GraphValidationError(f"{path}: the file is empty; a table starts with a header line naming its "
                                   "columns")
    # Every column as text, so ids such as "007" keep their form and empty cells stay empty strings.
    options = pa_csv.ConvertOptions(column_types={c: pa.string() for c in header}, strings_can_be_null=False)
    try:
        table = pa_csv.read_csv(path, parse_options=pa_csv.ParseOptions(delimiter=delimiter),
                                convert_options=options)
    except pa.ArrowInvalid as exc:  # Arrow's message names no file
        raise GraphValidationError(f"{path}: {' '.join(str(exc).split())}") from None
    return {name: table.column(name) for name in table.column_names}


_INTEGER = r"^-?(0|[1-9][0-9]{0,17})$"
_DECIMAL = r"^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$"


def typed_cells(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A CSV column of text typed as its cells read: int64, float64 or bool when every filled cell is one (empty
    cells become missing values), else text with empty cells missing."""
    trimmed = pc.utf8_trim_whitespace(column)
    nulled = pc.if_else(pc.equal(trimmed, ""), pa.scalar(None, pa.string()), column)
    filled = pc.drop_null(pc.if_else(pc.equal(trimmed, ""), pa.scalar(None, pa.string()), trimmed))
    if len(filled) == 0:
        return nulled
    cells = pc.if_else(pc.is_null(nulled), pa.scalar(None, pa.string()), trimmed)
    if pc.all(pc.match_substring_regex(filled, _INTEGER)).as_py():
        return pc.cast(cells, pa.int64())
    if pc.all(pc.match_substring_regex(filled, _DECIMAL)).as_py():
        return pc.cast(cells, pa.float64())
    if pc.all(pc.is_in(pc.utf8_lower(filled), pa.array(["true", "false"]))).as_py():
        return pc.equal(pc.utf8_lower(cells), "true")
    return nulled


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
