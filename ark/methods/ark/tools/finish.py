"""``finish()``: end the trajectory; the answer list is final."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from ark.runtime.tools import ToolResult, ToolSpec

from .observations import count_of

if TYPE_CHECKING:
    from .toolbox import Toolbox

NAME = "finish"


class FinishArgs(BaseModel):
    model_config = ConfigDict(extra="ignore")

    comment: str | None = Field(default=None, description="Optional short remark on the final answer.")
    confidence: Literal["high", "medium", "low"] | None = Field(
        default=None, description="Optional: how sure the answer is (high, medium or low).")
    reason: str | None = Field(default=None, description="Optional: one line saying why (e.g. what the graph lacks).")


class FinishResult(BaseModel):
    """The answer's ``size`` and the confidence the call stated."""

    size: int
    confidence: Literal["high", "medium", "low"] | None
    reason: str | None


SPEC = ToolSpec(NAME, "Finish the search when the answer list is complete.", FinishArgs, example="{}",
                result_model=FinishResult)


def run(box: Toolbox, args: FinishArgs) -> ToolResult:
    """Mark the trajectory finished; ``data`` holds the answer's ``size``."""
    box.telemetry.finish_calls += 1
    box.finished = True
    box.confidence, box.confidence_reason = args.confidence, (args.reason or "").strip()[:300] or None
    count = len(box.answer)
    data = FinishResult(size=count, confidence=args.confidence, reason=box.confidence_reason)
    return ToolResult(f"Finished. The answer has {count_of(count, 'node')}.", data=data, finished=True)
