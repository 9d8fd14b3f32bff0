"""``code_interpreter(code)``: run Python in the trajectory's sandboxed interpreter, where ``cypher(query,
params=None, limit=None)`` queries the graph read-only (GraphScout §3.2.1).

Observation: what the code printed, then a restart note or the error, if any
(:meth:`ark.sandbox.RunResult.observation`)::

    [{'n': 3}]
    [error: cypher] CypherSyntaxError: ... near 'RETRUN'

``data`` is the run's structured result (:meth:`ark.sandbox.RunResult.to_dict`: ``stdout``, ``error``,
``error_kind``, ``cypher_calls`` with each query's rows count and time) plus ``touched``: the graph nodes the code's
queries were given or returned (node values, and ids or unique names among parameters and row values).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from ark.runtime.tools import INVALID_ARGUMENTS, ToolResult, ToolSpec

if TYPE_CHECKING:
    from .toolbox import Toolbox

NAME = "code_interpreter"
MAX_CODE_CHARS = 20_000


class CodeInterpreterArgs(BaseModel):
    model_config = ConfigDict(extra="ignore")

    code: str = Field(description="Python code. Call cypher(query, params=None, limit=None) inside it to query the "
                                  "graph; print what you need to see.")


SPEC = ToolSpec(
    NAME,
    "Run Python code in a stateful sandbox (variables persist between calls; no network, read-only files). Inside "
    "the code, the function cypher(query, params=None, limit=None) runs a read-only Cypher query on the graph and "
    "returns a list of dicts, one per row; it is a Python function, not a separate tool. Print the results you "
    "need.",
    CodeInterpreterArgs,
    example='{"code": "rows = cypher(\'MATCH (n) RETURN count(n) AS n\')\\nprint(rows)"}',
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
    data = result.to_dict()
    data["cypher_calls"] = [{k: v for k, v in call.items() if k != "strings"} for call in result.cypher_calls]
    data["touched"] = touched
    if result.ok:
        return ToolResult(result.observation(), data=data, node_indices=touched)
    box.telemetry.failed_code_calls += 1
    if result.error_kind == "sandbox":  # no interpreter at all: the question fails, it is not answered without one
        box.failure = result.error or "the code sandbox could not start"
        box.finished = True
    data["error_message"] = data.pop("error")
    data["error"] = result.error_kind or "error"
    return ToolResult(result.observation(), data=data, ok=False, error=result.error_kind or "error",
                      node_indices=touched)
