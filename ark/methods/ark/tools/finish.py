"""``finish()``: end the trajectory; the answer list is final."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from ark.runtime.tools import ToolResult, ToolSpec

from .observations import count_of

if TYPE_CHECKING:
    from .toolbox import Toolbox

NAME = "finish"


class FinishArgs(BaseModel):
    model_config = ConfigDict(extra="ignore")

    comment: str | None = Field(default=None, description="Optional short remark on the final answer.")


SPEC = ToolSpec(NAME, "Finish the search when the answer list is complete.", FinishArgs, example="{}")


def run(box: Toolbox, args: FinishArgs) -> ToolResult:
    """Mark the trajectory finished; ``data`` holds the answer's ``size``."""
    box.telemetry.finish_calls += 1
    box.finished = True
    count = len(box.answer)
    return ToolResult(f"Finished. The answer has {count_of(count, 'node')}.", data={"size": count}, finished=True)
