"""Column-oriented inputs to :func:`ark.graph.build_graph`: one row per node and one row per edge."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from .errors import GraphValidationError, describe_values


@dataclass
class NodeTable:
    """Nodes as parallel columns. ``properties`` holds dicts or JSON strings (or ``None``)."""

    ids: Sequence[str]
    types: Sequence[str]
    names: Sequence[str]
    texts: Sequence[str] | None = None
    properties: Sequence[Any] | None = None
    source: str = "<nodes>"

    def __len__(self) -> int:
        return len(self.ids)

    def to_arrow(self) -> pa.Table:
        """Validate column lengths and JSON properties; return an Arrow table (id, type, name, text, properties)."""
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
                "id": pa.array([str(x) for x in self.ids], pa.string()),
                "type": pa.array([str(x) for x in self.types], pa.string()),
                "name": pa.array(["" if x is None else str(x) for x in self.names], pa.string()),
                "text": pa.array(["" if x is None else str(x) for x in texts], pa.string()),
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


def _properties_json(values: Sequence[Any] | None, n: int, source: str) -> list[str]:
    if values is None:
        return ["{}"] * n
    out: list[str] = []
    bad_rows: list[int] = []
    for row, value in enumerate(values):
        if value is None or value == "":
            out.append("{}")
        elif isinstance(value, dict):
            out.append(json.dumps(value, ensure_ascii=False, default=str))
        else:
            try:
                parsed = json.loads(value)
            except (TypeError, json.JSONDecodeError):
                bad_rows.append(row)
                out.append("{}")
                continue
            if not isinstance(parsed, dict):
                bad_rows.append(row)
            out.append(value)
    if bad_rows:
        raise GraphValidationError(
            f"{source}: column 'properties' must hold JSON objects; malformed at "
            + describe_values(bad_rows, len(bad_rows))
        )
    return out
