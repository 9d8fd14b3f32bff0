"""Column-oriented inputs to :func:`ark.graph.build_graph`: one row per node and one row per edge."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

import pyarrow as pa

from .errors import GraphValidationError, describe_values
from .ids import id_values

ARROW_COLUMNS = ("id", "type", "name", "text", "properties")


def string_column(values: Sequence[object] | pa.Array | pa.ChunkedArray,
                  none: str | None) -> pa.Array | pa.ChunkedArray:
    """``str(v)`` of every value as an Arrow string column, ``none`` for ``None``/null (``None`` keeps nulls).

    Arrow string, dictionary-of-string and integer columns are converted by Arrow kernels (integers format as
    ``str(int)`` does); anything else goes through ``str`` value by value.
    """
    if isinstance(values, pa.Array | pa.ChunkedArray):
        import pyarrow.compute as pc  # building only: opening a saved graph does not need it (start-up)

        kind = values.type
        if pa.types.is_dictionary(kind):
            kind, values = kind.value_type, values.cast(kind.value_type)
        if pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_integer(kind):
            out = values if values.type == pa.string() else pc.cast(values, pa.string())
            return pc.fill_null(out, none) if out.null_count and none is not None else out
        values = values.to_pylist()
    return pa.array([none if v is None else str(v) for v in values], pa.string())


@dataclass
class NodeTable:
    """Nodes as parallel columns (Python sequences or Arrow arrays). ``properties`` holds dicts or JSON strings (or
    ``None``). :meth:`from_arrow` wraps columns a loader has already converted and checked."""

    ids: Sequence[str]
    types: Sequence[str]
    names: Sequence[str]
    texts: Sequence[str] | None = None
    properties: Sequence[object] | None = None
    source: str = "<nodes>"
    checked: pa.Table | None = field(default=None, repr=False)

    @classmethod
    def from_arrow(cls, table: pa.Table, source: str = "<nodes>") -> NodeTable:
        """Nodes given as the table :meth:`to_arrow` returns: string columns id, type, name, text and properties,
        every property a JSON object (the caller's promise; not checked again)."""
        missing = [c for c in ARROW_COLUMNS if c not in table.column_names]
        if missing:
            raise ValueError(f"{source}: node table lacks column(s) {', '.join(missing)}; needs {ARROW_COLUMNS}")
        table = table.select(list(ARROW_COLUMNS))
        return cls(table["id"], table["type"], table["name"], table["text"], table["properties"], source, table)

    def __len__(self) -> int:
        return len(self.ids)

    def to_arrow(self) -> pa.Table:
        """Validate column lengths and JSON properties; return an Arrow table (id, type, name, text, properties)."""
        if self.checked is not None:
            return self.checked
        n = len(self.ids)
        columns = {"types": self.types, "names": self.names, "texts": self.texts, "properties": self.properties}
        for label, column in columns.items():
            if column is not None and len(column) != n:
                raise GraphValidationError(
                    f"{self.source}: column {label!r} has {len(column)} values but there are {n} node ids"
                )
        texts = self.texts if self.texts is not None else self.names
        return pa.table(
            {
                "id": string_column(id_values(self.ids, f"{self.source}: id"), "None"),
                "type": string_column(self.types, "None"),
                "name": string_column(self.names, ""),
                "text": string_column(texts, ""),
                "properties": pa.array(_properties_json(self.properties, n, self.source), pa.string()),
            }
        )


@dataclass
class EdgeTable:
    """Directed, typed edges between node ids (strings, matched against ``NodeTable.ids``)."""

    sources: Sequence[str]
    targets: Sequence[str]
    relations: Sequence[str]
    source: str = "<edges>"
    allowed_relations: Sequence[str] | None = field(default=None)

    def __len__(self) -> int:
        return len(self.sources)


def _properties_json(values: Sequence[object] | None, n: int, source: str) -> list[str]:
    if values is None:
        return ["{}"] * n
    out: list[str] = []
    bad_rows: list[int] = []
    for row, value in enumerate(values):
        if value is None or value == "":
            out.append("{}")
        elif isinstance(value, dict):
            out.append(json.dumps(value, ensure_ascii=False, default=str))
        elif isinstance(value, str):
            try:
                parsed = json.loads(value)
            except json.JSONDecodeError:
                bad_rows.append(row)
                out.append("{}")
                continue
            if not isinstance(parsed, dict):
                bad_rows.append(row)
            out.append(value)
        else:  # a number, a list...: not a JSON object
            bad_rows.append(row)
            out.append("{}")
    if bad_rows:
        raise GraphValidationError(
            f"{source}: column 'properties' must hold JSON objects; malformed at "
            + describe_values(bad_rows, len(bad_rows))
        )
    return out
