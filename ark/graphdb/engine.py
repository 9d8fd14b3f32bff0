"""The engine-neutral part: the :class:`CypherEngine` protocol, query results, the read-only guard and row limits.

Read-only is enforced twice: engines open the database read-only (or run read transactions), and
:func:`~ark.graphdb.guard.check_read_only` accepts, before anything runs, only reading statements built from
allow-listed keywords, functions and procedures (see :mod:`ark.graphdb.guard`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .errors import CypherParameterError, TooManyRows
from .schema import CypherSchema

DEFAULT_TIMEOUT_S = 10.0
DEFAULT_MAX_ROWS = 1000  # rows a query may return without an explicit ``limit``
HARD_MAX_ROWS = 100_000  # the largest ``limit`` a caller may ask for


@dataclass
class CypherResult:
    """Rows of a query: column names and one list of values per row; ``truncated`` when ``limit`` cut it."""

    columns: list[str]
    rows: list[list[Any]]
    truncated: bool = False
    elapsed_s: float = 0.0
    node_indices: list[int] = field(default_factory=list)  # ``idx`` of the graph nodes in the rows

    def records(self) -> list[dict[str, Any]]:
        """Rows as dicts keyed by column name (what the sandbox's ``cypher()`` returns)."""
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]

    def __len__(self) -> int:
        return len(self.rows)


@runtime_checkable
class CypherEngine(Protocol):
    """A read-only Cypher endpoint over one graph."""

    dialect: str  # "ladybug" | "neo4j"
    schema: CypherSchema | None

    def query(self, cypher: str, params: Mapping[str, Any] | None = None, limit: int | None = None,
              timeout_s: float | None = None) -> CypherResult:
        """Run one read-only statement. Without ``limit`` more than the engine's ``max_rows`` rows raise
        :class:`TooManyRows`; with it the rows are cut at ``limit`` (``truncated`` says so). Failures raise a
        :class:`~ark.graphdb.errors.CypherError` subclass."""
        ...

    def close(self) -> None:
        ...


# --------------------------------------------------------------------------------------------- arguments
def check_params(params: Mapping[str, Any] | None) -> dict[str, Any]:
    """``params`` as a plain dict with string keys and JSON-like values; :class:`CypherParameterError` otherwise."""
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise CypherParameterError(f"params must be a dict of name -> value, got {type(params).__name__}")
    out: dict[str, Any] = {}
    for key, value in params.items():
        if not isinstance(key, str) or not re.fullmatch(r"[A-Za-z_]\w*", key):
            raise CypherParameterError(f"parameter name {key!r} is not an identifier (use names like 'node_id')")
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            raise CypherParameterError(f"parameter {key!r} has a value of type {type(value).__name__}; use "
                                       "strings, numbers, booleans, None, or lists/dicts of them") from None
        out[key] = value
    return out


def check_limit(limit: int | None) -> int | None:
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise CypherParameterError(f"limit must be a non-negative integer or None, got {limit!r}")
    if limit > HARD_MAX_ROWS:
        raise CypherParameterError(f"limit {limit} is above the maximum of {HARD_MAX_ROWS} rows; aggregate instead")
    return limit


def check_timeout(timeout_s: float | None, default: float) -> float:
    value = default if timeout_s is None else timeout_s
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise CypherParameterError(f"timeout_s must be a positive number of seconds, got {timeout_s!r}")
    return float(value)


def too_many_rows(max_rows: int) -> TooManyRows:
    return TooManyRows(f"the query returned more than {max_rows} rows; aggregate (count, collect), add LIMIT, "
                       f"or pass limit=N to get the first N rows")


# --------------------------------------------------------------------------------------------- values
def node_indices(rows: list[list[Any]]) -> list[int]:
    """The ``idx`` of every node value in ``rows`` (nodes are dicts with a ``_label`` key), first-seen order."""
    seen: dict[int, None] = {}

    def visit(value: Any) -> None:
        if isinstance(value, dict):
            if "_label" in value and isinstance(value.get("idx"), int):
                seen.setdefault(value["idx"], None)
            for item in value.values():
                if isinstance(item, dict | list):
                    visit(item)
        elif isinstance(value, list):
            for item in value:
                visit(item)

    for row in rows:
        visit(row)
    return list(seen)


def mentioned_strings(rows: list[list[Any]], params: dict[str, Any] | None = None, max_values: int = 1000,
                      max_chars: int = 200) -> list[str]:
    """Distinct short strings among the parameters and the row values (inside lists and node values too), first
    seen first: the ids and names a query was given or returned, which a caller can map to the graph's nodes."""
    seen: dict[str, None] = {}

    def visit(value: Any) -> None:
        if len(seen) >= max_values:
            return
        if isinstance(value, str):
            if 0 < len(value) <= max_chars:
                seen.setdefault(value, None)
        elif isinstance(value, dict):
            for item in value.values():
                visit(item)
        elif isinstance(value, list | tuple):
            for item in value:
                visit(item)

    visit(list((params or {}).values()))
    for row in rows:
        visit(row)
    return list(seen)
