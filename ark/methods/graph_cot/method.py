"""``graph-cot``: Graph-CoT's iterations (Jin et al. 2024, §3). Each round the model writes a thought and one action
(a graph function or ``Finish[answer]``); the function runs on the graph and its result comes back as the next
message (``Observation: ...``). The run stops at ``Finish`` or after ``max_steps`` rounds (then no answer, recorded).
An action that is missing or malformed is answered with an observation saying what is valid, and costs a round."""

from __future__ import annotations

from ark.graph import KnowledgeGraph
from ark.llm.messages import AssistantMessage, Message, SystemMessage, UserMessage

from ..base import MethodContext, MethodOutput, Retriever
from ..graph_text import ACTIONS_HELP, schema_lines
from ..prompting import PromptSession, answer_output, open_graph_functions, require_model
from .spec import GraphCoTOptions

SYSTEM = """You answer a question by exploring a knowledge graph step by step. In every reply write
Thought: what you know so far and what you need next
Action: exactly one of
{actions}
Then stop and wait: the result of the action comes back as an Observation. Node ids come from RetrieveNode or from
neighbour lists. When the observations settle the question, reply with Action: Finish[answer] (names separated by
commas for several, a number for a count, yes or no for a yes/no question).

{schema}"""


class GraphCoT(Retriever):
    """One Graph-CoT run per question."""

    def __init__(self, graph: KnowledgeGraph, options: GraphCoTOptions, context: MethodContext) -> None:
        self.llm = require_model(context, "graph-cot")
        self.graph, self.options, self.context = graph, options, context
        self.functions = open_graph_functions(graph, options, context)
        self.system = SYSTEM.format(actions=ACTIONS_HELP, schema=schema_lines(graph))

    async def aretrieve(self, query: str, k: int) -> MethodOutput:
        session = PromptSession(self.llm, "graph-cot")
        messages: list[Message] = [SystemMessage(self.system), UserMessage(f"Question: {query}")]
        used: list[int] = []
        steps: list[dict] = []
        answer = None
        for step in range(1, self.options.max_steps + 1):
            reply = await session.ask(f"step {step}", list(messages))
            result = self.functions.run(reply)
            steps.append({"step": step, "valid": result.valid, "observation": result.observation,
                          "finished": result.answer is not None})
            if result.answer is not None:
                answer = result.answer
                break
            used += result.nodes
            messages += [AssistantMessage(reply), UserMessage(f"Observation: {result.observation}")]
        else:
            session.fail(f"no Finish action within max_steps={self.options.max_steps}")
        if answer is not None and not answer.strip():
            session.fail("Finish[] with an empty answer")
        return answer_output(self.graph, session, query, answer if answer is not None else "", used, self.context,
                             k, {"steps": steps})

    async def aclose(self) -> None:
        await self.llm.aclose()
