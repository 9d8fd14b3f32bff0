r"""The GraphScout solver (GraphScout §3.4.1, Appendix B.4): one trajectory per question through the shared tool
loop, with ``node_id_retriever`` and ``code_interpreter`` (unless ablated), until the model replies without a tool
call and ends with ``\answer{...}`` on its last line, or the turn budget runs out.

``GraphScout(graph, llm=None).solve("How many genes are associated with Marfan syndrome?")`` gives a
:class:`Solution`: the answer (text and type), the nodes the run touched (those named in the answer first, then
the others, each group in the order the tools returned them) and the trajectory in ARK's record format. With
``llm=None`` the scripted solver (:class:`~ark.methods.graphscout.offline.ScriptedSolver`) plays the model.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ark.graph import KnowledgeGraph
from ark.llm.messages import AssistantMessage, Message, SystemMessage, UserMessage
from ark.llm.policy import ChatPolicy
from ark.metrics.answers import normalize_text
from ark.runtime.loop import StepCallback, run_tool_loop
from ark.runtime.records import Trajectory
from ark.storage.jsonl import append_jsonl

from ..base import Answer, AnswerType
from .answer import WRAPPER, answer_type, extract_answer
from .options import GraphScoutOptions
from .prompt import engine_schema, solver_system_prompt
from .tools import NodeResolver, Toolbox

if TYPE_CHECKING:
    from ark.index.graph_index import TextIndex
    from ark.question import QuestionReader

FIRST_USER_MESSAGE = "Question: {question}"
NO_ANSWER_MESSAGE = (f"Your reply has no final answer. Call a tool to continue, or end your reply with the answer "
                     f"alone on the last line as {WRAPPER}.")


@dataclass
class TouchedNode:
    index: int
    node_id: str
    name: str
    type: str
    in_answer: bool


@dataclass
class Solution:
    """One question's outcome: the answer (None when the solver gave none), the touched nodes ranked, the
    trajectory."""

    question: str
    answer: Answer | None
    ranked: list[TouchedNode]
    trajectory: Trajectory
    config: dict[str, Any] = field(default_factory=dict)
    policy: str = ""
    graph: str = ""
    wall_s: float = 0.0
    unseen: list[int] = field(default_factory=list)  # touched nodes the answer names that no observation showed

    @property
    def indices(self) -> list[int]:
        return [node.index for node in self.ranked]

    @property
    def confidence(self) -> str | None:
        return None  # the solver states none

    @property
    def confidence_reason(self) -> str | None:
        return None

    def votes(self) -> dict[int, int]:
        return {}  # one solver: no votes

    def tie_groups(self) -> dict[int, int]:
        return {}

    def total_tokens(self) -> int:
        return self.trajectory.usage.total_tokens

    def to_record(self) -> dict[str, Any]:
        """The per-question record as JSON (trajectories are kept apart, as for ARK)."""
        return {"question": self.question, "graph": self.graph, "policy": self.policy, "config": self.config,
                "wall_s": self.wall_s, "usage": self.trajectory.usage.to_dict(),
                "answer": self.answer.to_dict() if self.answer is not None else None,
                "stop_reason": self.trajectory.stop_reason,
                "ranked": [vars(node) for node in self.ranked],
                **({"unseen": self.unseen} if self.unseen else {})}  # only when some were: older records stay

    def to_dict(self) -> dict[str, Any]:
        return {**self.to_record(), "agents": [self.trajectory.to_dict()]}


class GraphScout:
    """The GraphScout solver over one graph: its Cypher engine, node index and sandboxes are opened once.

    ``llm`` is any :class:`~ark.llm.ChatPolicy`; None uses the scripted solver. ``engine`` defaults to
    :func:`ark.graphdb.open_cypher` (ladybug, or Neo4j when configured), ``index`` to the node index named by the
    options. With ``trajectory_path`` every solution appends its record to that JSONL file. Call :meth:`close`
    (or ``aclose``) to stop the sandbox workers.
    """

    def __init__(self, graph: KnowledgeGraph, llm: ChatPolicy | None = None, options: GraphScoutOptions | None = None,
                 *, engine: Any = None, index: TextIndex | None = None, progress: bool = False,
                 trajectory_path: str | Path | None = None, on_step: StepCallback | None = None) -> None:
        from ark.graphdb import open_cypher

        self.graph = graph
        self.options = options or GraphScoutOptions()
        if self.options.code_interpreter:  # no bubblewrap: fail now, naming the fix, not at the first code call
            from ark.sandbox import isolation_mode

            isolation_mode(self.options.sandbox.isolation)
        self.engine = engine if engine is not None else open_cypher(graph, progress=progress)
        self.schema = engine_schema(self.engine)
        self.index = index if index is not None else open_node_index(graph, self.options, progress=progress)
        if llm is None:
            from .offline import ScriptedSolver

            llm = ScriptedSolver(graph, self.schema, topk=self.options.retriever.default_topk)
        self.llm: ChatPolicy = llm
        self.resolver = NodeResolver(graph)
        from .sandbox_pool import pool_for

        self.pool = pool_for(self.engine, self.options)
        self.system_prompt = solver_system_prompt(graph, self.schema, self.options, self.engine, self.pool)
        self._reader: QuestionReader | None = None
        self.trajectory_path = Path(trajectory_path) if trajectory_path is not None else None
        self.on_step = on_step  # called after every step (a live view)

    # ------------------------------------------------------------------ solving
    async def asolve(self, question: str, agent_index: int = 0) -> Solution:
        """Run one trajectory on ``question``; never raises for model misbehaviour (see the trajectory)."""
        started = time.perf_counter()
        pool = self.pool
        sandbox = pool.acquire() if pool is not None else None
        toolbox = Toolbox(self.graph, self.schema, self.index, self.options,
                          sandbox_factory=(lambda: sandbox) if sandbox is not None else None, resolver=self.resolver)
        messages: list[Message] = [SystemMessage(self.system_prompt),
                                   UserMessage(FIRST_USER_MESSAGE.format(question=question),
                                               context={"question": question})]
        trajectory = Trajectory(question=question, agent_index=agent_index, policy=getattr(self.llm, "name", ""),
                                messages=messages, tools=toolbox.openai_tools())
        try:
            await run_tool_loop(trajectory, self.llm, toolbox, max_steps=self.options.max_turns,
                                tool_choice=self.options.tool_choice, on_no_tool_call=_needs_answer,
                                on_step=self.on_step)
        finally:
            if pool is not None and sandbox is not None:
                await asyncio.to_thread(pool.release, sandbox)
        if toolbox.failure is not None:
            trajectory.error, trajectory.stop_reason, trajectory.finished = toolbox.failure, "error", False
        text = None
        if trajectory.stop_reason == "answer":
            text = extract_answer(trajectory.messages[-1].content)
        answer = Answer(text, self.answer_type(question)) if text else None
        shown = None if self.options.allow_unseen_answers else toolbox.shown
        ranked, unseen = self._rank(list(toolbox.touched), answer, shown)
        trajectory.answer = [node.index for node in ranked]
        trajectory.answer_ids = [node.node_id for node in ranked]
        trajectory.telemetry = toolbox.telemetry.to_dict()
        solution = Solution(question, answer, ranked, trajectory, config=self.options.model_dump(mode="json"),
                            policy=trajectory.policy, graph=(self.graph.info.name or ""),
                            wall_s=time.perf_counter() - started, unseen=unseen)
        if self.trajectory_path is not None:
            append_jsonl(self.trajectory_path, [solution.to_dict()])
        return solution

    def solve(self, question: str) -> Solution:
        """Synchronous :meth:`asolve` (not inside a running event loop); closes the policy's connections after."""
        async def once() -> Solution:
            try:
                return await self.asolve(question)
            finally:
                await self.llm.aclose()

        return asyncio.run(once())

    def answer_type(self, question: str) -> AnswerType:
        """The answer type the question asks for (entity, set, number, boolean)."""
        if self._reader is None:
            from ark.question import QuestionReader

            self._reader = QuestionReader(self.graph)
        return answer_type(question, self._reader.read(question).target_types)

    def _rank(self, touched: list[int], answer: Answer | None,
              shown: Mapping[int, None] | None) -> tuple[list[TouchedNode], list[int]]:
        """Touched nodes named in the answer first, then the others, each group in the order first touched; and the
        named nodes left out of the first group because no observation showed them (``shown``; None: no check).
        Answers come from what was seen: a node only given to a query ranks with the others."""
        g = self.graph
        named = [i for i in touched if answer is not None and names_in(g.name(i), answer.text)]
        unseen = [i for i in named if shown is not None and i not in shown]
        chosen = set(named) - set(unseen)
        return [TouchedNode(i, g.node_id(i), g.name(i), g.node_type(i), i in chosen)
                for i in [i for i in named if i in chosen] + [i for i in touched if i not in chosen]], unseen

    async def aclose(self) -> None:
        """Stop the sandbox workers and close the policy's connections."""
        if self.pool is not None:
            await asyncio.to_thread(self.pool.close)
        await self.llm.aclose()

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()


def names_in(name: str, answer: str) -> bool:
    """Whether ``name`` is the answer or one of its comma-separated items (names with commas kept whole)."""
    parts = [normalize_text(part) for part in str(answer).split(",")]
    wanted = [normalize_text(part) for part in str(name).split(",")]
    if not any(wanted):
        return False
    size = len(wanted)
    return any(parts[k:k + size] == wanted for k in range(len(parts) - size + 1))


def _needs_answer(message: AssistantMessage) -> str | None:
    """End the trajectory at a reply carrying the answer wrapper; otherwise ask for it."""
    return None if extract_answer(message.content) is not None else NO_ANSWER_MESSAGE


def open_node_index(graph: KnowledgeGraph, options: GraphScoutOptions, progress: bool = False) -> TextIndex:
    """The retriever's node index: ``retriever.index`` (dense by ``retriever.embedder``, or BM25) over names or whole
    node texts."""
    from ark.index.embedders import open_node_index as open_index_of_nodes

    config = options.retriever
    return open_index_of_nodes(graph, config.index, names_only=config.fields == "name", embedder=config.embedder,
                               embedder_base_url=config.embedder_base_url, progress=progress)
