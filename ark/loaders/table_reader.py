"""The one reader of node and edge tables, for every way a graph enters ARK: ``ark graph import``, ``ark graph
update --nodes/--edges/--delete`` and ``--from`` exports, from CSV, TSV, JSONL, Parquet or Arrow
(:mod:`.table_files`). The same table gives the same nodes, text and properties whatever its format.

Columns. A node table has an id, a type and a name column, found by name (``--id-column``, ``--type-column``,
``--name-column`` override): id ``id``, ``node_id``, ``entity_id`` or a Neo4j ``:ID``; type ``type``,
``node_type``, ``entity_type`` or ``:LABEL``; name ``name``, ``title`` or ``entity_name`` (none: the id is the
name). An edge table has from/to/type columns: ``from``/``source``/``src``/``head``/``src_id``/``source_id``/
``:START_ID``, ``to``/``target``/``dst``/``tail``/``tgt_id``/``target_id``/``:END_ID``,
``type``/``relation``/``relationship``/``predicate``/``:TYPE`` (no flag chooses them: a column is renamed).
Every other column is a property, and so is every key of an optional ``properties`` column (JSON objects).

Text. A node's document (what search ranks) is its name, then its text-like fields: by default every field
holding text that is not an id, a type, a link or a key starting with ``_``, the usual ones first (:data:`FIRST`:
text, description, summary, definition, ...), then the others in column order; ``--text-columns`` names them
instead (a number or true/false there is written too). A ``text`` field is written as it is; any other as
``key: value`` (a list joined with ``"; "``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ark.graph import GraphValidationError
from ark.graph.ids import id_text, id_values
from ark.graph.tables import string_column
from ark.progress import progress_bar
from ark.text import did_you_mean

from .table_files import Columns, _parse_properties, _stripped, read_columns, typed_cells

FIRST = ("text", "description", "summary", "definition", "abstract", "synonyms", "comment")
NODE_ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "node_id", "entity_id", ":ID"),
    "type": ("type", "node_type", "entity_type", ":LABEL"),
    "name": ("name", "title", "entity_name"),
}
EDGE_ALIASES: dict[str, tuple[str, ...]] = {
    "from": ("from", "source", "src", "head", "src_id", "source_id", ":START_ID"),
    "to": ("to", "target", "dst", "tail", "tgt_id", "target_id", ":END_ID"),
    "type": ("type", "relation", "relationship", "predicate", ":TYPE"),
}
_NOT_TEXT = re.compile(r"(^|_)(id|ids|uuid|iri|uri|url|link|type|types|kind|label|labels)$|^:|[a-z]Id$|:ID|:LABEL",
                       re.IGNORECASE)


@dataclass(frozen=True)
class ColumnChoice:
    """Which columns are the id, the type, the name and the text (None: found as the module doc says)."""

    id: str | None = None
    type: str | None = None
    name: str | None = None
    text: tuple[str, ...] | None = None

    def to_metadata(self) -> dict[str, Any]:
        """The choices given, as a graph's ``GraphInfo.columns`` keeps them (its updates read the same way)."""
        out: dict[str, Any] = {k: v for k, v in (("id", self.id), ("type", self.type), ("name", self.name))
                               if v is not None}
        if self.text is not None:
            out["text"] = list(self.text)
        return out

    @classmethod
    def from_stored(cls, stored: Mapping[str, Any] | None) -> ColumnChoice:
        """The choices a graph keeps (``GraphInfo.columns``); none for a graph imported otherwise."""
        kept = stored or {}
        text = kept.get("text")
        return cls(kept.get("id"), kept.get("type"), kept.get("name"), tuple(text) if text is not None else None)

    def over(self, stored: ColumnChoice) -> ColumnChoice:
        """These choices where given, else ``stored``'s."""
        return ColumnChoice(self.id or stored.id, self.type or stored.type, self.name or stored.name,
                            self.text if self.text is not None else stored.text)


@dataclass
class TypeColumns:
    """What one node type's columns became: the name, the text and the properties."""

    node_type: str
    nodes: int = 0
    name: str = ""
    text: dict[str, None] = field(default_factory=dict)
    properties: dict[str, None] = field(default_factory=dict)

    def describe(self) -> str:
        text = ", ".join([self.name, *[k for k in self.text if k != self.name]])
        props = ", ".join(self.properties) or "none"
        return f"{self.node_type} ({self.nodes:,} nodes): name from {self.name}; text from {text}; properties: {props}"


@dataclass
class NodeRead:
    """A node table (id, type, name, text, properties) and what each type's columns became."""

    table: pa.Table
    by_type: list[TypeColumns]


def is_text_key(key: str) -> bool:
    """Whether a field may be text by its name: not an id, type, label or link, not starting with ``_``."""
    return not key.startswith("_") and not _NOT_TEXT.search(key)


def textual(value: Any, numbers: bool = False) -> str:
    """A field's value as text: a string stripped, a list of strings and numbers joined by ``"; "``, a number or
    true/false when ``numbers`` (a column named by ``--text-columns``); else ""."""
    if isinstance(value, str):
        return value.strip()
    if numbers and isinstance(value, int | float):
        return str(value).lower() if isinstance(value, bool) else str(value)
    if isinstance(value, list) and value and all(isinstance(v, str | int | float) for v in value):
        return "; ".join(str(v).strip() for v in value if str(v).strip())
    return ""


def document(name: str, fields: dict[str, Any], text_keys: Sequence[str] | None = None,
             used: Callable[[str], None] | None = None) -> str:
    """A node's document: its name, then its text fields (module doc); ``used(key)`` hears each key written."""
    lines = [name] if name else []
    if text_keys is None:
        keys = [k for k in FIRST if k in fields] + [k for k in fields if k not in FIRST and is_text_key(k)]
    else:
        keys = [k for k in text_keys if k in fields]
    for key in keys:
        value = textual(fields[key], numbers=text_keys is not None)
        if value and value != name:
            lines.append(value if key == "text" else f"{key}: {value}")
            if used is not None:
                used(key)
    return "\n".join(lines)


def find_column(columns: Columns | Sequence[str], aliases: Sequence[str]) -> str | None:
    """The column named by the first alias (exactly, then case-blind; Neo4j's ``x:ID(Group)`` headers too)."""
    names = list(columns)
    for alias in aliases:
        if alias in names:
            return alias
    lowered = {n.lower(): n for n in names}
    for alias in aliases:
        if alias.lower() in lowered:
            return lowered[alias.lower()]
        if alias.startswith(":"):
            for n in names:
                if n.split("(")[0].upper().endswith(alias.upper()):
                    return n
    return None


def key_columns(path: Path, columns: Columns | Sequence[str], given: dict[str, str | None],
                aliases: dict[str, tuple[str, ...]], optional: tuple[str, ...] = (), flags: bool = True,
                ) -> dict[str, str]:
    """Each role's column (the one given, else the first alias found); an error names what is missing, what the
    file holds and the flag that chooses a column (``flags``), else the names a column may have."""
    found: dict[str, str] = {}
    missing = []
    for role, alias_list in aliases.items():
        wanted = given.get(role)
        if wanted is not None:
            if wanted not in columns:
                raise GraphValidationError(f"{path}: no column {wanted!r} (--{role}-column)"
                                           f"{did_you_mean(wanted, columns)}; found: {', '.join(columns) or 'none'}")
            found[role] = wanted
            continue
        column = find_column(columns, alias_list)
        if column is not None:
            found[role] = column
        elif role not in optional:
            missing.append(role)
    if missing:
        required = ", ".join(r for r in aliases if r not in optional)
        required += "".join(f" (optional: {r})" for r in optional)
        if flags:
            fix = f"name another with {', '.join(f'--{m}-column' for m in missing)}"
        else:
            fix = "rename a column: " + "; ".join(f"{m} is one of {', '.join(aliases[m])}" for m in missing)
        raise GraphValidationError(
            f"{path}: missing column(s) {', '.join(missing)}; required: {required}; found: "
            f"{', '.join(columns) or 'none'} ({fix})")
    return found


def checked_key(path: Path, columns: Columns, column: str) -> pa.ChunkedArray | pa.Array:
    """A key column as text, stripped; an error names the rows where it is blank."""
    blank: list[int] = []
    stripped = stripped_key(path, columns, column, 0, blank)
    raise_blank(path, column, blank)
    return stripped


def stripped_key(path: Path, columns: Columns, column: str, first_row: int,
                 blank: list[int]) -> pa.ChunkedArray | pa.Array:
    """A key column (of rows from ``first_row`` on) as text, stripped; its blank rows are added to ``blank``."""
    values = id_values(columns[column], f"{path}: column {column!r}")  # text or integers (ark.graph.ids)
    if not isinstance(values, pa.ChunkedArray | pa.Array):  # JSONL: ids such as 7 become "7", as in every format
        values = pa.chunked_array([string_column(values, None)])
    stripped = _stripped(values)
    empty = pc.fill_null(pc.or_kleene(pc.is_null(stripped), pc.equal(pc.utf8_length(stripped), 0)), True)
    if pc.any(empty).as_py():
        blank.extend((first_row + np.flatnonzero(empty.to_numpy(zero_copy_only=False))).tolist())
    return stripped


def raise_blank(path: Path, column: str, rows: list[int]) -> None:
    """The error for the ``rows`` where key ``column`` is blank, if any."""
    if rows:
        shown = ", ".join(str(r) for r in rows[:5])
        raise GraphValidationError(f"{path}: column {column!r} is empty in {len(rows)} row(s): {shown}")


def read_nodes(path: Path, choice: ColumnChoice = ColumnChoice(), batch: int = 65_536,
               progress: bool | None = None) -> NodeRead:
    """The node table of a file (module doc), built a batch of rows at a time (at most a batch of parsed
    properties lives as Python objects), under a progress bar (``progress`` None: on a terminal)."""
    columns, typed = read_columns(path)
    keys = key_columns(path, columns, {"id": choice.id, "type": choice.type, "name": choice.name}, NODE_ALIASES,
                       optional=("name",))
    ids, types = checked_key(path, columns, keys["id"]), checked_key(path, columns, keys["type"])
    names = string_column(columns[keys.get("name", keys["id"])], "") if "name" in keys else ids
    extra = [c for c in columns if c not in keys.values() and c != "properties"]
    if not typed:
        for column in extra:
            columns[column] = typed_cells(columns[column])
    if choice.text is not None:
        check_text_columns(path, choice.text, extra, columns.get("properties") is not None)
    texts, stored, by_type = _documents(path, names, types, columns, extra, choice.text, batch, progress)
    for report in by_type.values():
        report.name = keys.get("name", keys["id"])
    table = pa.table({"id": ids, "type": types, "name": names, "text": texts, "properties": stored})
    return NodeRead(table, list(by_type.values()))


def check_text_columns(path: Path, wanted: Sequence[str], extra: list[str], has_properties: bool) -> None:
    if has_properties:
        return  # a key of the properties column may be named: nothing to check against before reading rows
    for column in wanted:
        if column not in extra:
            raise GraphValidationError(f"{path}: --text-columns names no column {column!r}"
                                       f"{did_you_mean(column, extra)}; columns: {', '.join(extra) or 'none'}")


def _documents(path: Path, names: Any, types: Any, columns: Columns, extra: list[str],
               text_keys: Sequence[str] | None, batch: int, progress: bool | None,
               ) -> tuple[pa.ChunkedArray, pa.ChunkedArray, dict[str, TypeColumns]]:
    """Documents and properties (JSON-object strings), a batch at a time, and each type's columns."""
    with progress_bar(f"Reading {path.name}", len(names), enabled=progress) as bar:
        return _batches(path, names, types, columns, extra, text_keys, batch, bar.advance)


def _marker(report: TypeColumns) -> Callable[[str], None]:
    """What :func:`document` calls for each text key it writes: the key noted in the type's report."""
    def mark(key: str) -> None:
        report.text.setdefault(key)
    return mark


def _batches(path: Path, names: Any, types: Any, columns: Columns, extra: list[str],
             text_keys: Sequence[str] | None, batch: int, advance: Callable[[int], None],
             ) -> tuple[pa.ChunkedArray, pa.ChunkedArray, dict[str, TypeColumns]]:
    n = len(names)
    texts: list[pa.Array] = []
    stored: list[pa.Array] = []
    bad: list[str] = []
    by_type: dict[str, TypeColumns] = {}
    for start in range(0, n, batch):
        end = min(start + batch, n)
        part = {c: columns[c][start:end] for c in [*extra, "properties"] if c in columns}
        text, kept = batch_documents(part, names[start:end], types[start:end], extra, text_keys, start, bad, by_type)
        texts.append(text)
        stored.extend(kept.chunks if isinstance(kept, pa.ChunkedArray) else [kept])
        advance(end - start)
    raise_bad_properties(path, bad)
    return pa.chunked_array(texts, pa.string()), pa.chunked_array(stored, pa.string()), by_type


def batch_documents(columns: Columns, names: Any, types: Any, extra: list[str], text_keys: Sequence[str] | None,
                    first_row: int, bad: list[str], by_type: dict[str, TypeColumns],
                    ) -> tuple[pa.Array, pa.Array | pa.ChunkedArray]:
    """The documents and stored properties (JSON-object strings) of a run of rows from ``first_row`` on (``columns``
    holds those rows of the ``extra`` and ``properties`` columns); each type's columns noted in ``by_type``,
    malformed properties in ``bad``."""
    properties = columns.get("properties")
    raw_kept = not extra and isinstance(properties, pa.ChunkedArray | pa.Array) and pa.types.is_string(properties.type)
    values = {c: _slice(columns[c], 0, len(names)) for c in extra}
    parsed = (_parse_properties(_slice(properties, 0, len(names)), first_row, bad) if properties is not None
              else [{}] * len(names))
    rows, stored = [], []
    for i, (name, node_type) in enumerate(zip(_slice(names, 0, len(names)), _slice(types, 0, len(names)),
                                              strict=True)):
        own = {c: v[i] for c, v in values.items() if v[i] is not None and v[i] != ""}
        fields = {**own, **{k: v for k, v in parsed[i].items() if k not in own}}
        report = by_type.get(node_type) or by_type.setdefault(node_type, TypeColumns(node_type))
        report.nodes += 1
        rows.append(document(name, fields, text_keys, used=_marker(report)))
        kept = {k: v for k, v in fields.items() if k != "text"}
        report.properties.update(dict.fromkeys(kept))
        if not raw_kept:
            stored.append(json.dumps(kept, ensure_ascii=False, default=str))
    if raw_kept:  # JSON-object strings are stored as they are (they parse to the same dicts); blanks: "{}"
        assert properties is not None  # raw_kept says so
        return pa.array(rows, pa.string()), pc.if_else(pc.fill_null(pc.equal(properties, ""), True), "{}", properties)
    return pa.array(rows, pa.string()), pa.array(stored, pa.string())


def raise_bad_properties(path: Path, bad: list[str]) -> None:
    """The error for the rows whose ``properties`` are not JSON objects, if any."""
    if bad:
        more = f" (and {len(bad) - 5} more)" if len(bad) > 5 else ""
        raise GraphValidationError(f"{path}: column 'properties' must hold JSON objects; malformed in {len(bad)} "
                                   f"row(s): {', '.join(bad[:5])}{more}")


def _slice(values: Any, start: int, end: int) -> list[Any]:
    part = values[start:end]
    return part.to_pylist() if isinstance(part, pa.ChunkedArray | pa.Array) else list(part)


def read_edges(path: Path) -> dict[str, pa.ChunkedArray | pa.Array]:
    """An edge table's ``from``, ``to`` and ``type`` columns, as text, stripped (other columns are not kept)."""
    columns, _ = read_columns(path)
    keys = key_columns(path, columns, {}, EDGE_ALIASES, flags=False)
    return {role: checked_key(path, columns, column) for role, column in keys.items()}


def read_deleted(path: Path) -> tuple[list[str], list[tuple[str, str, str]]]:
    """The node ids (an id column) and edges (from/to/type columns) a ``--delete`` table lists."""
    columns, _ = read_columns(path)
    node_key = find_column(columns, NODE_ALIASES["id"])
    edge_keys = [find_column(columns, EDGE_ALIASES[r]) for r in ("from", "to", "type")]
    if node_key is None and None in edge_keys:
        raise GraphValidationError(f"{path}: a --delete table needs an id column (node ids) or from, to and type "
                                   f"columns (edges); found: {', '.join(columns) or 'none'}")
    as_text = {c: [("" if v is None else id_text(v, f"{path}: column {c!r}")).strip()
                   for v in _slice(id_values(columns[c], f"{path}: column {c!r}"), 0, len(columns[c]))]
               for c in [node_key, *edge_keys] if c is not None}
    rows = len(next(iter(as_text.values())))
    nodes = [as_text[node_key][r] for r in range(rows) if node_key is not None and as_text[node_key][r]]
    edges: list[tuple[str, str, str]] = []
    if None not in edge_keys:
        triples = zip(*(as_text[c] for c in edge_keys if c is not None), strict=True)
        edges = [(a, b, c) for a, b, c in triples if a and b and c]
    return nodes, edges
