"""``graph-counselor``: GraphCounselor's agents (Gao et al. 2025) over one shared memory of observations.

Each step the *planning* agent reads the question, the memory and any feedback, and either states the next piece
of information needed or gives a draft ``Answer:``; the *execution* agent turns that need into up to
``actions_per_step`` calls of Graph-CoT's graph functions, whose observations join the memory. A draft answer goes to
the *reflection* agent, which checks it against the question and the evidence and replies ``Verdict: accept`` or
``Verdict: revise`` with feedback; a revision starts a new round with the feedback and the memory kept, at most
``max_reflections`` times (then the last draft stands). Malformed replies become observations or recorded failures.
"""

from __future__ import annotations

import re

from ark.graph import KnowledgeGraph

from ..base import MethodContext, MethodOutput, Retriever
from ..graph_text import ACTION, ACTIONS_HELP, schema_lines
from ..prompting import (
    ANSWER_INSTRUCTIONS,
    PromptSession,
    answer_output,
    final_answer,
    open_graph_functions,
    require_model,
)
from .spec import GraphCounselorOptions

PLANNER = """You plan how to answer a question from a knowledge graph. Another agent explores the graph for you
and reports observations. Given the question and the observations so far, either write
Need: the one piece of information to look up next
or, when the observations are enough, a short justification and then the answer. """ + ANSWER_INSTRUCTIONS + """

{schema}"""
EXECUTOR = """You explore a knowledge graph to find one piece of information. Write one action a line, at most {n},
from these graph functions (node ids come from RetrieveNode or from neighbour lists):
{actions}"""
REFLECTOR = """You check a draft answer to a question against the evidence gathered from a knowledge graph. Consider
whether it answers what was asked, whether the evidence supports every part of it, and whether it has the right
form (one name, several names, a number, yes or no). Reply with
Verdict: accept
or
Verdict: revise
Feedback: what is wrong and what to look up"""
_VERDICT = re.compile(r"verdict\s*[:：]\s*\**\s*(accept|revise)", re.IGNORECASE)


class GraphCounselor(Retriever):
    """Plan, execute, reflect."""

    def __init__(self, graph: KnowledgeGraph, options: GraphCounselorOptions, context: MethodContext) -> None:
        self.llm = require_model(context, "graph-counselor")
        self.graph, self.options, self.context = graph, options, context
        self.functions = open_graph_functions(graph, options, context)
        self.planner = PLANNER.format(schema=schema_lines(graph))
        self.executor = EXECUTOR.format(n=options.actions_per_step, actions=ACTIONS_HELP)

    async def execute(self, session: PromptSession, need: str, memory: list[str], used: list[int], label: str) -> None:
        """One execution step: the executor's actions run and their observations join ``memory``."""
        reply = await session.ask_once(label, self.executor, f"Information needed: {need}\n\nObservations so far:\n"
                                                             + ("\n".join(memory) or "none"))
        lines = [line for line in reply.splitlines() if ACTION.search(line)][:self.options.actions_per_step]
        if not lines:
            memory.append(f"[{need}] no graph function was called")
            return
        for line in lines:
            result = self.functions.run(line)
            used += result.nodes
            action = ACTION.search(line)
            name = action.group(0) if action else line
            memory.append(f"[{name}] {result.observation or 'Finish is not a graph function'}")

    async def reflect(self, session: PromptSession, query: str, draft: str, memory: list[str],
                      label: str) -> str | None:
        """The reflection agent's feedback, or None when it accepts (or its verdict cannot be read)."""
        reply = await session.ask_once(label, REFLECTOR, f"Question: {query}\n\nEvidence:\n"
                                                         + ("\n".join(memory) or "none") + f"\n\nDraft answer: {draft}")
        verdict = _VERDICT.search(reply)
        if verdict is None:
            session.fail(f"{label}: no readable verdict; the draft answer stands")
            return None
        if verdict.group(1).lower() == "accept":
            return None
        return reply[verdict.end():].replace("Feedback:", "").strip() or "the draft was judged wrong"

    async def aretrieve(self, query: str, k: int) -> MethodOutput:
        session = PromptSession(self.llm, "graph-counselor")
        memory: list[str] = []
        used: list[int] = []
        draft, feedback, rounds = None, None, []
        for round_ in range(self.options.max_reflections + 1):
            draft = None
            for step in range(1, self.options.max_steps + 1):
                note = f"\n\nFeedback on your previous answer: {feedback}" if feedback else ""
                plan = await session.ask_once(f"plan {round_}.{step}", self.planner,
                                              f"Question: {query}\n\nObservations:\n" + ("\n".join(memory) or "none")
                                              + note)
                draft = final_answer(plan)
                if draft is not None:
                    break
                need = re.sub(r"^\s*need\s*[:：]\s*", "", plan.strip(), flags=re.IGNORECASE) or query
                await self.execute(session, need, memory, used, f"execute {round_}.{step}")
            if draft is None:
                session.fail(f"round {round_}: no draft answer within max_steps={self.options.max_steps}")
                break
            feedback = None if round_ == self.options.max_reflections else \
                await self.reflect(session, query, draft, memory, f"reflect {round_}")
            rounds.append({"round": round_, "draft": draft, "feedback": feedback})
            if feedback is None:
                break
        return answer_output(self.graph, session, query, draft if draft is not None else "", used, self.context, k,
                             {"rounds": rounds, "memory": memory})

    async def aclose(self) -> None:
        await self.llm.aclose()
