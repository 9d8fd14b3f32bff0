"""``add_to_answer(answer_nodes)``: append nodes, each with a one-sentence reasoning, to the trajectory's answer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ark.runtime.node_args import NodeIndex
from ark.runtime.tools import (
    BUDGET,
    INVALID_ARGUMENTS,
    UNKNOWN_NODE,
    UNSEEN_NODE,
    ToolResult,
    ToolSpec,
    decode_json_string,
)
from ark.text import clean_inline

from .observations import Detail, count_of, fit_observation

if TYPE_CHECKING:
    from .toolbox import Toolbox

NAME = "add_to_answer"
REASONING_CHARS = 300  # a reasoning is echoed up to this length (shortened further to fit the observation cap)


class AnswerNode(BaseModel):
    model_config = ConfigDict(extra="ignore")

    node_index: NodeIndex = Field(description="Index of a node to add to the answer.")
    reasoning: str = Field(default="", description="Why this node answers the question (one sentence).")

    @field_validator("reasoning", mode="before")
    @classmethod
    def _null_is_empty(cls, value: object) -> object:
        return "" if value is None else value  # models often send "reasoning": null


class AddToAnswerArgs(BaseModel):
    model_config = ConfigDict(extra="ignore")

    answer_nodes: list[AnswerNode] = Field(description="Nodes to add to the answer, most relevant first.")

    @field_validator("answer_nodes", mode="before")
    @classmethod
    def _accept_encoded(cls, value: object) -> object:
        value = decode_json_string(value)
        return [value] if isinstance(value, dict) else value


class AnswerShortened(BaseModel):
    reasoning_chars: int
    name_chars: int


class AddToAnswerResult(BaseModel):
    """The node indices ``added``, ``repeated``, ``missing`` (no such index) and ``refused`` (answer full), and the
    answer's ``size`` afterwards."""

    added: list[int]
    repeated: list[int]
    missing: list[int]
    refused: list[int]
    size: int
    unseen: list[int] | None = None  # set only when some were never shown (answers come from what was seen)
    shortened: AnswerShortened | None = None  # set only when the observation was shortened
    error: str | None = None  # set only when nothing was added or already there


SPEC = ToolSpec(
    NAME,
    "Add nodes that answer the question to the answer list, in order of relevance. Nodes already added are kept "
    "where they are.",
    AddToAnswerArgs,
    example='{"answer_nodes": [{"node_index": 123, "reasoning": "why it answers"}]}',
    result_model=AddToAnswerResult,
)


def run(box: Toolbox, args: AddToAnswerArgs) -> ToolResult:
    """Append nodes to the answer list (the first addition wins the position).

    ``data``: ``added``, ``repeated``, ``missing`` (no such index), ``unseen`` (no observation of this trajectory
    showed it; only when the toolbox checks, see ``allow_unseen_answers``) and ``refused`` (answer full) node indices
    and the answer's ``size`` afterwards.
    """
    cfg, g = box.config, box.graph
    box.telemetry.add_calls += 1
    if not args.answer_nodes:
        return ToolResult.failure("answer_nodes is empty: pass at least one {node_index, reasoning}.",
                                  INVALID_ARGUMENTS)
    added, repeated, missing, unseen, refused = [], [], [], [], []
    for item in args.answer_nodes:
        node = item.node_index
        if not g.is_valid_index(node):
            missing.append(node)
        elif not box.allow_unseen_answers and node not in box.seen:
            unseen.append(node)
        elif node in box.reasoning:
            repeated.append(node)
        elif cfg.max_answer_nodes is not None and len(box.answer) >= cfg.max_answer_nodes:
            refused.append(node)
        else:
            box.answer.append(node)
            box.reasoning[node] = item.reasoning
            added.append(node)
    header = ["Added the following nodes to the answer:"] if added else []

    def render(detail: Detail) -> list[str]:
        lines = []
        for node in added:
            lines.append(f"- {box.label(node, detail.name_chars)}")
            if box.reasoning[node] and detail.snippet_chars:
                lines.append(f"  Reasoning: {clean_inline(box.reasoning[node], detail.snippet_chars)}")
        return lines

    footer = []
    if repeated:
        footer.append("Already in the answer: " + ", ".join(f"[{n}]" for n in repeated))
    if missing:
        footer.append("Not found (no such node index): " + ", ".join(str(n) for n in missing)
                      + f". Valid indices are 0 to {g.num_nodes - 1}; use indices shown by the search tools.")
    if unseen:
        footer.append("Not added, no search of yours has shown " + ", ".join(f"[{n}]" for n in unseen)
                      + ": answer only with nodes the search tools showed you (their [index]); search for them first.")
    if refused:
        footer.append(f"Not added, the answer is full ({cfg.max_answer_nodes} nodes): "
                      + ", ".join(f"[{n}]" for n in refused))
        box.telemetry.budget_refusals += 1
    footer.append(f"The answer now has {count_of(len(box.answer), 'node')}.")
    text, detail = fit_observation(header, render, footer, cfg.max_observation_chars, REASONING_CHARS,
                                   cfg.max_name_chars)
    error = None if added or repeated else (UNKNOWN_NODE if missing else UNSEEN_NODE if unseen else BUDGET)
    data = AddToAnswerResult(added=added, repeated=repeated, missing=missing, refused=refused, size=len(box.answer))
    if unseen:  # only when present: the records of calls that name seen nodes stay as they were
        data.unseen = unseen
    if detail != Detail(REASONING_CHARS, cfg.max_name_chars):
        data.shortened = AnswerShortened(reasoning_chars=detail.snippet_chars, name_chars=detail.name_chars)
    if error is not None:
        data.error = error
    return ToolResult(text, data=data, ok=error is None, node_indices=added, error=error)
