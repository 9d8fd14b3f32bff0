"""``base-llm``: one chat call with the question and no graph evidence; the answer is the reply's ``Answer:`` line.
It uses no node, so its ranking is empty: it is scored by the answer metrics (EM, F1, the judge)."""

from __future__ import annotations

from ark.graph import KnowledgeGraph

from ..base import MethodContext, MethodOutput, Retriever
from ..prompting import ANSWER_INSTRUCTIONS, PromptSession, answer_output, final_answer, require_model
from .spec import BaseLLMOptions

SYSTEM = ("You answer questions about a specialised domain from what you know. No documents or database are "
          "available. Think briefly if it helps. " + ANSWER_INSTRUCTIONS)


class BaseLLM(Retriever):
    """The question alone, one call."""

    def __init__(self, graph: KnowledgeGraph, options: BaseLLMOptions, context: MethodContext) -> None:
        self.graph = graph
        self.context = context
        self.llm = require_model(context, "base-llm")

    async def aretrieve(self, query: str, k: int) -> MethodOutput:
        session = PromptSession(self.llm, "base-llm")
        reply = await session.ask_once("answer", SYSTEM, f"Question: {query}")
        return answer_output(self.graph, session, query, final_answer(reply), [], self.context, k)

    async def aclose(self) -> None:
        await self.llm.aclose()
