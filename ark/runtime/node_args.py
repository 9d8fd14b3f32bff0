"""Tool-argument types for nodes (pydantic), after the one id rule of :mod:`ark.graph.ids`: a model's ``true`` or
``1.0`` where a node index belongs is refused with an observation naming the field and the value, never read as
node ``1``."""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator, ValidationInfo

from ark.graph.ids import index_value, ref_value


def _index(value: object, info: ValidationInfo[object]) -> object:  # pydantic reads digits as an int after this
    return index_value(value, info.field_name or "node index")


def _ref(value: object, info: ValidationInfo[object]) -> object:
    return ref_value(value, info.field_name or "node")


NodeIndex = Annotated[int, BeforeValidator(_index)]  # an integer or its digits as text; no boolean, no float
NodeRef = Annotated[int | str, BeforeValidator(_ref)]  # an index or a node id; no boolean, no float
