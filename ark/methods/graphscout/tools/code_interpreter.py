"""``code_interpreter(code)``: run Python in the trajectory's sandboxed interpreter, where ``cypher(query,
params=None, limit=None)`` queries the graph read-only (GraphScout §3.2.1).

Observation: what the code printed, then a restart note or the error, if any
(:meth:`ark.sandbox.RunResult.observation`)::

    [{'n': 3}]
    [error: cypher] CypherSyntaxError: ... near 'RETRUN'

``data`` is the run's structured result, a :class:`CodeInterpreterResult` (the fields of
:class:`ark.sandbox.RunResult`: ``stdout``, ``error_kind``, ``cypher_calls`` with each query's rows count and
time, ...) plus ``touched``: the graph nodes the code's queries were given or returned (node values, and ids or
unique names among parameters and row values); for a run that failed, the error kind as ``error`` and its message
as ``error_message``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, ValidationError, model_serializer

from ark.runtime.tools import INVALID_ARGUMENTS, ToolResult, ToolSpec

if TYPE_CHECKING:
    from .toolbox import Toolbox

NAME = "code_interpreter"
MAX_CODE_CHARS = 20_000


class CodeInterpreterArgs(BaseModel):
    model_config = ConfigDict(extra="ignore")

    code: str = Field(description="Python code. Call cypher(query, params=None, limit=None) inside it to query the "
                                  "graph; print what you need to see.")


class CypherCallRecord(BaseModel):
    """One ``cypher()`` call of the code: the query, then its rows count or its error (kind and message)."""

    query: str
    error: str | None = None
    message: str | None = None
    rows: int | None = None
    truncated: bool | None = None
    ms: int | float | None = None
    node_indices: list[int] | None = None


class CodeInterpreterResult(BaseModel):
    """A run: what it printed, its queries and the nodes they touched; for a run that failed, ``error`` is its kind
    (``timeout``, ``cypher``, ``sandbox``, ...) and ``error_message`` what it said."""

    stdout: str
    error: str | None = None
    error_kind: str | None = None
    cypher_kind: str | None = None
    elapsed_s: float
    cypher_calls: list[CypherCallRecord]
    note: str | None
    output_truncated: bool
    restarted: bool
    node_indices: list[int]
    touched: list[int]
    error_message: str | None = None

    @model_serializer(mode="wrap")
    def _record_order(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        """A failure's record ends with ``error_message`` and ``error``, as records have always had them."""
        data: dict[str, object] = handler(self)
        if self.error is None:
            return data
        last: dict[str, object] = {key: data.pop(key) for key in ("error_message", "error") if key in data}
        return {**data, **last}


def code_result_of(result: object) -> CodeInterpreterResult | None:
    """A code call's result: the typed one, or the dict a trajectory file holds read into it (None: another
    tool's result, a refusal, or a dict it cannot read)."""
    if isinstance(result, CodeInterpreterResult):
        return result
    if not isinstance(result, dict):
        return None
    try:
        return CodeInterpreterResult.model_validate(result)
    except ValidationError:
        return None


SPEC = ToolSpec(
    NAME,
    "Run Python code in a stateful sandbox (variables persist between calls; no network, read-only files). Inside "
    "the code, the function cypher(query, params=None, limit=None) runs a read-only Cypher query on the graph and "
    "returns a list of dicts, one per row; it is a Python function, not a separate tool. Print the results you "
    "need.",
    CodeInterpreterArgs,
    example='{"code": "rows = cypher(\'MATCH (n) RETURN count(n) AS n\')\\nprint(rows)"}',
    result_model=CodeInterpreterResult,
)


def run(box: Toolbox, args: CodeInterpreterArgs) -> ToolResult:
    """Run the code in the trajectory's sandbox; failures are observations (``ok`` is False, ``error`` its kind)."""
    code = args.code
    if not code.strip():
        return ToolResult.failure(f"{NAME} needs non-empty 'code', e.g. {SPEC.example}.", INVALID_ARGUMENTS)
    if len(code) > MAX_CODE_CHARS:
        return ToolResult.failure(f"The code has {len(code):,} characters; send at most {MAX_CODE_CHARS:,} per call.",
                                  INVALID_ARGUMENTS)
    box.telemetry.code_calls += 1
    result = box.sandbox().run(code)
    box.telemetry.cypher_queries += len(result.cypher_calls)
    touched = box.nodes_of(result.node_indices, result.strings)
    box.touch(touched)
    box.show(touched, result.observation())
    calls = [CypherCallRecord.model_validate({k: v for k, v in call.items() if k != "strings"})
             for call in result.cypher_calls]
    run_fields = {"stdout": result.stdout, "error_kind": result.error_kind, "cypher_kind": result.cypher_kind,
                  "elapsed_s": result.elapsed_s, "cypher_calls": calls, "note": result.note,
                  "output_truncated": result.output_truncated, "restarted": result.restarted,
                  "node_indices": result.node_indices, "touched": touched}
    if result.ok:
        done = CodeInterpreterResult.model_validate({**run_fields, "error": None})
        return ToolResult(result.observation(), data=done, node_indices=touched)
    box.telemetry.failed_code_calls += 1
    if result.error_kind == "sandbox":  # no interpreter at all: the question fails, it is not answered without one
        box.failure = result.error or "the code sandbox could not start"
        box.finished = True
    kind = result.error_kind or "error"
    failure = CodeInterpreterResult.model_validate({**run_fields, "error_message": result.error, "error": kind})
    return ToolResult(result.observation(), data=failure, ok=False, error=kind, node_indices=touched)
