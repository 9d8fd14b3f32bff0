"""``add_to_answer`` and ``finish`` for an outside model (the answer tools ARK's prompt names, :mod:`..mcp_prompts`):
the agent's own argument models, answered without state (an MCP request may arrive without a session).
``add_to_answer`` checks the nodes and echoes them with their labels (the answer is every node the conversation
recorded, first recording first); ``finish`` says the answer is complete."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from ark.methods.ark.tools import add_to_answer, finish
from ark.runtime.tools import INVALID_ARGUMENTS, UNKNOWN_NODE, ToolResult, ToolSpec
from ark.text import clean_inline

if TYPE_CHECKING:
    from ..mcp_prompts import AnswerTools

REASONING_CHARS = 300
STATELESS_NOTE = (" This server keeps no answer list: the answer is every node your add_to_answer calls recorded in "
                  "this conversation, first recording first.")


class RecordedNode(BaseModel):
    """One node recorded: index, id, name, type and the reasoning given (cut to 300 characters)."""

    index: int
    id: str
    name: str
    type: str
    reasoning: str


class RecordedAnswer(BaseModel):
    """The nodes recorded, in order, and the indices no node has (``error`` ``unknown_node`` when none was)."""

    added: list[RecordedNode]
    missing: list[int]
    error: str | None = None


class FinishedAnswer(BaseModel):
    """The confidence, reason and comment the call stated (each cut to 300 characters)."""

    confidence: Literal["high", "medium", "low"] | None
    reason: str | None
    comment: str | None


ADD_SPEC = ToolSpec(add_to_answer.NAME, add_to_answer.SPEC.description + STATELESS_NOTE, add_to_answer.AddToAnswerArgs,
                    add_to_answer.SPEC.example, result_model=RecordedAnswer)
FINISH_SPEC = ToolSpec(finish.NAME, finish.SPEC.description, finish.FinishArgs, finish.SPEC.example,
                       result_model=FinishedAnswer)


def add(box: AnswerTools, args: add_to_answer.AddToAnswerArgs) -> ToolResult:
    """Check and echo the nodes."""
    from ..fit import fit_entries

    g = box.graph
    if not args.answer_nodes:
        return ToolResult.failure("answer_nodes is empty: pass at least one {node_index, reasoning}.",
                                  INVALID_ARGUMENTS)
    added: list[RecordedNode] = []
    missing: list[int] = []
    seen: set[int] = set()
    for item in args.answer_nodes:
        if not g.is_valid_index(item.node_index):
            missing.append(item.node_index)
        elif item.node_index not in seen:
            seen.add(item.node_index)
            added.append(RecordedNode(index=item.node_index, id=g.node_id(item.node_index),
                                      name=g.name(item.node_index), type=g.node_type(item.node_index),
                                      reasoning=item.reasoning[:REASONING_CHARS]))
    from ark.methods.ark.tools.observations import node_label

    entries = [[f"- {node_label(row.index, row.name, row.type, 120)} · id {row.id}"]
               + ([f"  Reasoning: {clean_inline(row.reasoning, REASONING_CHARS)}"] if row.reasoning else [])
               for row in added]
    footer = []
    if missing:
        footer.append("Not found (no such node index): " + ", ".join(str(n) for n in missing)
                      + f". Valid indices are 0 to {g.num_nodes - 1}; use indices shown by the search tools.")
    footer.append("Recorded. The answer is every node recorded so far in this conversation, first recording "
                  "first; call finish when it is complete.")
    header = ["Added the following nodes to the answer:"] if added else []
    text, _ = fit_entries(header, entries, footer, box.max_chars)
    if added:
        return ToolResult(text, data=RecordedAnswer(added=added, missing=missing),
                          node_indices=[row.index for row in added])
    return ToolResult(text, data=RecordedAnswer(added=added, missing=missing, error=UNKNOWN_NODE), ok=False,
                      error=UNKNOWN_NODE)


def done(_box: AnswerTools, args: finish.FinishArgs) -> ToolResult:
    """Say the answer is complete."""
    data = FinishedAnswer(confidence=args.confidence, reason=(args.reason or "").strip()[:300] or None,
                          comment=(args.comment or "").strip()[:300] or None)
    return ToolResult("Finished. The answer is the nodes recorded with add_to_answer, in the order they were "
                      "first recorded: give them to the user with their reasoning.", data=data, finished=True)
