r"""The scripted solver: a deterministic stand-in for the model that drives GraphScout's tools like the paper's
solver does (Appendix B.2): ground the entities, query the graph with code, answer.

1. *ground* — ``node_id_retriever`` with the node names the question contains (found by
   :class:`~ark.methods.graphscout.cypher_writer.CypherWriter`, longest names first), or the whole question when it
   names none;
2. *query* — ``code_interpreter`` with the Cypher the writer derives from the question's anchors, wanted node type
   and answer type, each anchor's id taken from the retriever's results where a retrieved node carries the same
   name and type; the code computes the answer from the rows and prints it;
3. *answer* — a final message ending in ``\answer{...}`` with what the code printed; ``\answer{}`` (no answer) when
   the question has no plan or the code failed.

Without the code interpreter (the retriever-only ablation) step 3 follows step 1 and answers from the retrieved
nodes alone: the best hit of the wanted type that the question does not name (entity), all of them (set), their
number (number), or whether the named nodes were all found (yes/no) — a baseline of what retrieval alone gives.

It reads only the tools' structured results (the retriever's hits, the code's printed output) and the question. It
is a pure function of the conversation: replaying the same messages gives the same next turn. A baseline and a
test driver, not a language model.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ....graph import KnowledgeGraph, normalize_name
from ....llm.messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from ....llm.policy import PolicyReply, Usage
from ..cypher_writer import CypherPlan, CypherWriter
from ..tools import CODE_INTERPRETER, NODE_ID_RETRIEVER
from ..tools.code_interpreter import code_result_of
from ..tools.node_id_retriever import NodeIdRetrieverResult, RetrievedNode


class ScriptedSolver:
    """A :class:`~ark.llm.ChatPolicy` that needs no model: ``ScriptedSolver(graph, schema)``."""

    name = "offline"

    def __init__(self, graph: KnowledgeGraph, schema: Any, topk: int = 2) -> None:
        self.graph = graph
        self.writer = CypherWriter(graph, schema)
        self.topk = topk
        self._plan = functools.lru_cache(maxsize=4096)(self._plan_uncached)

    async def aclose(self) -> None:
        return None

    def _plan_uncached(self, question: str) -> tuple[list[tuple[int, int, int]], CypherPlan | None]:
        return self.writer.link(question), self.writer.plan(question)

    async def next_message(self, messages: Sequence[Message], tools: list[dict], *, agent_index: int = 0,
                           tool_choice: str = "required") -> PolicyReply:
        return PolicyReply(message=self.turn(messages, {t["function"]["name"] for t in tools}), usage=Usage())

    # ------------------------------------------------------------------ one turn
    def turn(self, messages: Sequence[Message], tool_names: set[str]) -> AssistantMessage:
        question = _question(messages)
        spans, plan = self._plan(question)
        calls = _calls_by_tool(messages)
        turn = sum(1 for m in messages if isinstance(m, AssistantMessage))
        if NODE_ID_RETRIEVER not in calls and NODE_ID_RETRIEVER in tool_names:
            queries = [question[begin:end] for begin, end, _ in sorted(spans)] or [question]
            note = ("Find the ids of the entities the question names." if spans else
                    "The question names no node I can recognise; search with the whole question.")
            return _call(turn, note, NODE_ID_RETRIEVER, {"queries": queries, "topk": self.topk})
        retrieved = _retrieved(calls.get(NODE_ID_RETRIEVER))
        if CODE_INTERPRETER not in tool_names:
            return _final(self._answer_from_retrieval(question, spans, plan, retrieved))
        if CODE_INTERPRETER not in calls:
            if plan is None:
                return _final("", "I have no rule to turn this question into a query.")
            params = self._grounded_params(plan, spans, retrieved)
            return _call(turn, f"Query the graph: {plan.answer_type} answer over {' -> '.join(plan.path) or 'nodes'}.",
                         CODE_INTERPRETER, {"code": plan.python_code(params)})
        result = code_result_of(calls[CODE_INTERPRETER])
        if result is None or result.error_kind or result.output_truncated:
            why = (result.error_message if result is not None else None) or (
                "the output was cut" if result is not None else "its result could not be read")
            return _final("", f"The query did not give a usable answer ({why}).")
        printed = " ".join(result.stdout.split())
        return _final(printed, "The code computed the answer from the query's rows.")

    # ------------------------------------------------------------------ reading tool results
    def _grounded_params(self, plan: CypherPlan, spans: list[tuple[int, int, int]],
                         retrieved: list[RetrievedNode]) -> dict[str, Any]:
        """The plan's parameters, each anchor id replaced by a retrieved node of the same name and type (the
        writer's own node when the retriever returned it or no such node)."""
        g = self.graph
        question = plan.question
        by_query: dict[str, list[RetrievedNode]] = {}
        for hit in retrieved:
            by_query.setdefault(hit.query, []).append(hit)
        grounded: dict[str, str] = {}
        for begin, end, node in spans:
            hits = by_query.get(question[begin:end], [])
            ids = [h.node_id for h in hits]
            if g.node_id(node) in ids:
                continue
            same = [h for h in hits if normalize_name(h.name) == normalize_name(g.name(node))
                    and h.type == g.node_type(node)]
            if same:
                grounded[g.node_id(node)] = same[0].node_id
        return {key: grounded.get(value, value) if isinstance(value, str) else value
                for key, value in plan.params.items()}

    def _answer_from_retrieval(self, question: str, spans: list[tuple[int, int, int]], plan: CypherPlan | None,
                               retrieved: list[RetrievedNode]) -> tuple[str, str]:
        g = self.graph
        answer_type = plan.answer_type if plan is not None else self.writer.answer_type(
            question, self.writer.reader.read(question).target_types)
        named = {node for _, _, node in spans}
        if answer_type == "boolean":
            found = {h.index for h in retrieved}
            yes = bool(named) and named <= found
            return ("yes" if yes else "no"), "Without code I can only check that the named nodes exist."
        wanted = plan.target_type if plan is not None else None
        hits = [h.index for h in sorted(retrieved, key=lambda h: -h.score)
                if h.index not in named and (wanted is None or g.node_type(h.index) == wanted)]
        hits = list(dict.fromkeys(hits))
        why = "Without code I answer from the retrieved nodes alone."
        if answer_type == "number":
            return str(len(hits)), why
        if answer_type == "entity":
            return (g.name(hits[0]) if hits else ""), why
        return ", ".join(g.name(i) for i in hits), why


def _question(messages: Sequence[Message]) -> str:
    for message in messages:
        if isinstance(message, UserMessage):
            return str(message.context.get("question") or message.content or "")
    return ""


def _retrieved(result: Any) -> list[RetrievedNode]:
    """The retriever's shown entries: its typed result, or a dict read back from a file (entries it cannot read
    are left out)."""
    if isinstance(result, NodeIdRetrieverResult):
        return list(result.results)
    try:
        entries = _Listed.model_validate(result).results if isinstance(result, dict) else []
    except ValidationError:  # "results" is not a list: nothing to read
        return []
    kept = []
    for entry in entries:
        try:
            kept.append(RetrievedNode.model_validate(entry))
        except ValidationError:
            continue
    return kept


class _Listed(BaseModel):
    """A retriever result as a file holds it, read leniently: only its entries, one by one."""

    model_config = ConfigDict(extra="ignore")

    results: list[Any] = []


def _calls_by_tool(messages: Sequence[Message]) -> dict[str, Any]:
    """The structured result of the latest call of each tool (the result each tool message holds)."""
    names = {call.id: call.name for m in messages if isinstance(m, AssistantMessage) for call in m.tool_calls}
    found: dict[str, Any] = {}
    for message in messages:
        if isinstance(message, ToolMessage) and message.tool_call_id in names:
            found[names[message.tool_call_id]] = message.result or {}
    return found


def _call(turn: int, note: str, name: str, arguments: dict[str, Any]) -> AssistantMessage:
    call = ToolCall(f"call_{turn}_0", name, json.dumps(arguments, ensure_ascii=False))
    return AssistantMessage(note, [call])


def _final(answer: str | tuple[str, str], note: str = "") -> AssistantMessage:
    if isinstance(answer, tuple):
        answer, note = answer
    text = f"{note}\n\\answer{{{answer}}}" if note else f"\\answer{{{answer}}}"
    return AssistantMessage(text)
