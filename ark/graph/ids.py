"""The one rule for a node id (or node index) that arrives as a value a file, a request or a model wrote.

A node id is text; an integer is taken as its decimal text (``7`` -> ``"7"``, as in every table format). A node
index is an integer (or its digits as text). A boolean or a float is neither: JSON ``true`` must not become the id
``"True"`` nor the index ``1``, and ``1.0`` is not the id ``"1"``. Such a value is refused with
:class:`IdTypeError`, naming the field, the value and what is accepted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias, TypeVar

import pyarrow as pa

from .errors import GraphValidationError

ACCEPTED_ID = "text or an integer"
ACCEPTED_INDEX = "an integer (or its digits as text)"


class IdTypeError(GraphValidationError):
    """A node id or index of a type the rule refuses (a boolean, a float, a list...)."""


_KINDS = {bool: "a boolean", float: "a float", list: "a list", dict: "an object"}


T = TypeVar("T")


def _kind(value: object) -> str:
    return _KINDS.get(type(value), type(value).__name__)


def id_error(field: str, value: object, accepted: str = ACCEPTED_ID, noun: str = "node ids") -> IdTypeError:
    """The error for ``value`` in ``field``: ``field: node ids must be text or an integer, got true (a boolean)``."""
    shown = ("true" if value else "false") if isinstance(value, bool) else repr(value)
    return IdTypeError(f"{field}: {noun} must be {accepted}, got {shown} ({_kind(value)})")


def id_text(value: object, field: str, noun: str = "node ids") -> str:
    """``value`` as an id: text as it is, an integer as its decimal text; anything else :class:`IdTypeError`."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise id_error(field, value, noun=noun)


def index_value(value: T, field: str) -> T:
    """``value`` unchanged unless it is a boolean or a float (:class:`IdTypeError`): a pydantic before-validator's
    core for a node index field, which then reads an integer or its digits as usual."""
    if isinstance(value, bool | float):
        raise id_error(field, value, ACCEPTED_INDEX, "node indices")
    return value


def ref_value(value: T, field: str) -> T:
    """``value`` unchanged unless it is a boolean or a float: the core of a node reference (an index or an id)."""
    if isinstance(value, bool | float):
        raise id_error(field, value, "an integer index or a text id", "nodes")
    return value


Column: TypeAlias = Sequence[object] | pa.Array | pa.ChunkedArray


def id_values(values: Column, field: str) -> Column:
    """``values`` (a column of ids) after the rule: an Arrow column must be text or integers (a boolean or float
    column is refused, naming its first value); a Python list's values are checked one by one (None kept)."""
    if isinstance(values, pa.Array | pa.ChunkedArray):
        kind = values.type.value_type if pa.types.is_dictionary(values.type) else values.type
        if pa.types.is_boolean(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind):
            first = next((v for v in values.to_pylist() if v is not None), None)
            raise id_error(f"{field} (a {kind} column)", first)
        return values
    for value in values:
        if value is not None and not isinstance(value, str) and (isinstance(value, bool) or not isinstance(value, int)):
            raise id_error(field, value)
    return values
