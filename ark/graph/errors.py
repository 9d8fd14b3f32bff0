"""Errors raised while building or loading a graph."""

from __future__ import annotations

from ark.errors import ArkError


class GraphValidationError(ValueError, ArkError):
    """Input data cannot form a valid graph; the message names the source, the offending values and their count."""


def describe_values(values: list, total: int, limit: int = 5) -> str:
    """Render up to ``limit`` offending values and how many there are in all."""
    shown = ", ".join(repr(v) for v in values[:limit])
    more = f" (and {total - limit} more)" if total > limit else ""
    return f"{total} row(s): {shown}{more}"
