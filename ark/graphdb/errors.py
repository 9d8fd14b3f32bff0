"""Errors of a Cypher engine: short messages a model can act on, each with a one-word ``kind``.

The hierarchy is small on purpose; callers (the sandbox, tool observations) read ``kind`` to label the failure
and ``str(error)`` to show it:

- :class:`CypherError` (``"error"``): any failure of a query;
- :class:`CypherSyntaxError` (``"syntax"``): the parser rejected the text; the message quotes the offending part;
- :class:`CypherQueryError` (``"query"``): well-formed but invalid (unknown table/property/variable, bad types);
- :class:`CypherParameterError` (``"parameters"``): missing or unusable ``$parameters``;
- :class:`CypherTimeout` (``"timeout"``): the query ran past its time limit;
- :class:`TooManyRows` (``"too_many_rows"``): more rows than allowed without an explicit ``limit``;
- :class:`WriteRefused` (``"write_refused"``): the query would write (or read/write files); the database is read-only;
- :class:`CypherResourceError` (``"resources"``): the query ran out of memory;
- :class:`CypherUnavailable` (``"unavailable"``): the database cannot be opened or reached;
- :class:`CypherCrashed` (``"crashed"``): the query crashed the engine's process (which restarts for the next one).
"""

from __future__ import annotations

from ark.errors import ArkError


class CypherError(ArkError):
    """A Cypher query failed; ``str(error)`` is a short message meant for the query's author."""

    kind = "error"


class CypherSyntaxError(CypherError):
    kind = "syntax"


class CypherQueryError(CypherError):
    kind = "query"


class CypherParameterError(CypherQueryError):
    kind = "parameters"


class CypherTimeout(CypherError):
    kind = "timeout"


class TooManyRows(CypherError):
    kind = "too_many_rows"


class WriteRefused(CypherError):
    kind = "write_refused"


class CypherResourceError(CypherError):
    kind = "resources"


class CypherUnavailable(CypherError):
    kind = "unavailable"


class CypherCrashed(CypherError):
    kind = "crashed"


ERROR_CLASSES: dict[str, type[CypherError]] = {
    cls.kind: cls
    for cls in (CypherError, CypherSyntaxError, CypherQueryError, CypherParameterError, CypherTimeout, TooManyRows,
                WriteRefused, CypherResourceError, CypherUnavailable, CypherCrashed)
}


def error_from_kind(kind: str, message: str) -> CypherError:
    """Rebuild an error sent across a process boundary as ``(kind, message)``."""
    return ERROR_CLASSES.get(kind, CypherError)(message)
