"""The Python API: ``ARK(graph, llm=...).retrieve("question")``."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ark.errors import ArkError
from ark.graph import KnowledgeGraph
from ark.llm.policy import ChatPolicy
from ark.runtime.loop import StepCallback
from ark.runtime.records import RankedNode, Retrieval, Trajectory
from ark.runtime.trajectory_file import pack_record
from ark.storage.jsonl import append_jsonl

from ..base import run_beside
from .fusion import fuse
from .fusion_evidence import graph_evidence
from .loop import run_agent
from .offline.evidence_rank import doubted
from .options import ArkOptions, ToolConfig
from .tools import Toolbox

if TYPE_CHECKING:
    from ark.index.graph_index import TextIndex


class AgentError(RuntimeError, ArkError):
    """An agent's policy failed for good (its client's retries exhausted): the question has no trustworthy answer."""


def open_relevance_index(graph: KnowledgeGraph, options: ArkOptions, progress: bool = False) -> TextIndex:
    """The index behind rel(q, d) (global search and neighbourhood ranking) that ``options`` name: BM25, field-aware
    (default) or plain, or dense embeddings (the ``dense`` extra)."""
    from ark.index import open_index

    if options.relevance == "dense":
        from ark.index.embedders import open_embedding_index

        return open_embedding_index(graph, options.embedder, base_url=options.embedder_base_url, progress=progress)
    return open_index(graph, kind="bm25", scoring=options.scoring, progress=progress)


_LEVELS = ("low", "medium", "high")


class StatedConfidence(Protocol):
    """What a trajectory's finish call stated (a :class:`~ark.runtime.records.Trajectory`)."""

    @property
    def confidence(self) -> str | None: ...

    @property
    def confidence_reason(self) -> str | None: ...


def overall_confidence(trajectories: Sequence[StatedConfidence], answered: bool) -> tuple[str | None, str | None]:
    """The retrieval's confidence: the level most agents stated (the lower one on a tie) with the reason of the
    first agent that stated it; ``low`` when nothing was answered; None when no agent stated one."""
    stated = [t for t in trajectories if t.confidence in _LEVELS]
    if not answered:
        reasons = [t.confidence_reason for t in stated if t.confidence_reason]
        return "low", reasons[0] if reasons else "No agent added a node to the answer."
    if not stated:
        return None, None
    counts = {level: sum(t.confidence == level for t in stated) for level in _LEVELS}
    level = max(_LEVELS, key=lambda lv: (counts[lv], -_LEVELS.index(lv)))
    reason = next((t.confidence_reason for t in stated if t.confidence == level and t.confidence_reason), None)
    return level, reason


def agent_options(config: ArkOptions | None, *, n_agents: int | None = None, max_steps: int | None = None,
                  fusion: str | None = None, tool_config: ToolConfig | None = None,
                  preset: str | None = None) -> ArkOptions:
    """The options of one :class:`ARK`: ``config`` as given, or the keywords given over ``preset``'s values
    (``paper``: :data:`~.options.PAPER_PRESET`) over ArkOptions' defaults. Keywords or a preset beside a ``config``
    would be ignored, so they are refused (``TypeError`` naming both)."""
    given: dict[str, object] = {"n_agents": n_agents, "max_steps": max_steps, "fusion": fusion}
    given = {key: value for key, value in given.items() if value is not None}
    if tool_config is not None:
        given["tools"] = tool_config.model_dump(exclude_unset=True)
    if config is None:
        from ..registry import get_method_spec

        options = get_method_spec("ark").make_options(given, preset=preset)
        assert isinstance(options, ArkOptions)
        return options
    if preset is not None:
        given["preset"] = preset
    if given:
        names = ", ".join({"tools": "tool_config"}.get(key, key) for key in given)
        raise TypeError(f"ARK() takes its options either as config=ArkOptions(...) or as keywords, not both: got "
                        f"config and {names}; put them in the config (config.model_copy(update={{...}}))")
    return config


class ARK:
    """Adaptive Retriever of Knowledge: n agents explore the graph in parallel; their answers are fused.

    ``llm`` is any :class:`~ark.llm.ChatPolicy` (e.g. ``OpenAIChatClient``); None uses the deterministic offline
    policy. ``index`` defaults to the relevance index the options name (:func:`open_relevance_index`). With
    ``trajectory_path`` every retrieval appends its record (:meth:`Retrieval.to_dict`, packed as
    :mod:`ark.runtime.trajectory_file` describes) to that JSONL file.

    When an agent's policy fails (a model endpoint that keeps failing after the client's retries) the question
    fails with :class:`AgentError` and the other agents are stopped: a fusion of fewer agents is not the method's
    answer. With ``allow_partial`` the agents that finished are fused instead and the retrieval is marked partial
    (:attr:`Retrieval.partial`); it fails only when every agent failed.

    ``on_step`` (optional) is called after every step of every agent, as it happens (a live view).

    The method's options come one way: whole as ``config`` (an :class:`ArkOptions`), or as the keywords
    ``n_agents``, ``max_steps``, ``fusion`` and ``tool_config`` over ``preset``'s values (``"paper"``: the paper's
    settings, :mod:`ark.methods.presets`) over ArkOptions' defaults; both at once is a ``TypeError`` naming them
    (see :func:`agent_options`).
    """

    def __init__(self, graph: KnowledgeGraph, llm: ChatPolicy | None = None, index: TextIndex | None = None,
                 n_agents: int | None = None, max_steps: int | None = None, fusion: str | None = None,
                 tool_config: ToolConfig | None = None, config: ArkOptions | None = None,
                 trajectory_path: str | Path | None = None, allow_partial: bool = False,
                 on_step: StepCallback | None = None, preset: str | None = None) -> None:
        self.graph = graph
        self.config = agent_options(config, n_agents=n_agents, max_steps=max_steps, fusion=fusion,
                                    tool_config=tool_config, preset=preset)
        self.index = index if index is not None else open_relevance_index(graph, self.config, progress=False)
        if llm is None:
            from .offline import OfflinePolicy

            llm = OfflinePolicy(graph)
        self.llm = llm
        self.trajectory_path = Path(trajectory_path) if trajectory_path is not None else None
        self.allow_partial = allow_partial
        self.on_step = on_step

    def toolbox(self) -> Toolbox:
        """A fresh toolbox (one per trajectory: it holds the answer list and telemetry)."""
        return Toolbox(self.graph, self.index, self.config.tools,
                       allow_unseen_answers=self.config.allow_unseen_answers)

    async def aretrieve(self, question: str) -> Retrieval:
        """Run the agents concurrently on ``question`` and fuse their answers (:class:`AgentError` when an agent
        fails, see the class doc)."""
        started = time.perf_counter()
        trajectories = await self._run_agents(question)
        fused = fuse([t.answer for t in trajectories], self.config.fusion, seed=self.config.fusion_seed,
                     evidence=await self._evidence(question, trajectories), ties=self.config.fusion_ties)
        g = self.graph
        ranked = [RankedNode(f.index, g.node_id(f.index), g.name(f.index), g.node_type(f.index), f.votes,
                             round(f.score, 6), f.first_position, f.tie_group) for f in fused]
        retrieval = Retrieval(question, ranked, list(trajectories), config=self.config.model_dump(mode="json"),
                              policy=getattr(self.llm, "name", ""), wall_s=time.perf_counter() - started,
                              graph=(g.info.name or ""))
        retrieval.confidence, retrieval.confidence_reason = overall_confidence(trajectories, bool(ranked))
        tied = sum(1 for node in ranked if node.tie_group == 1)
        if retrieval.confidence and tied > 1:  # a tie at the top is said, never passed off as a confident order
            retrieval.confidence, retrieval.confidence_reason = doubted(
                retrieval.confidence, retrieval.confidence_reason or "", tied=tied, unread=[], profile=False)
        if self.trajectory_path is not None:
            # One synchronous write of whole lines: records of concurrent questions never interleave.
            append_jsonl(self.trajectory_path, [pack_record(retrieval.to_dict())])
        return retrieval

    async def _evidence(self, question: str, trajectories: Sequence[Trajectory]) -> dict[int, tuple[int, ...]]:
        """The graph evidence breaking ties within a vote group (option ``fusion_evidence``; off: none, the paper's
        earliest-position rule alone). Where the policy states it (the offline policy does), the strongest key any
        agent found; for a model's answers, read from the graph around the nodes the question names
        (:mod:`.fusion_evidence`), only when two or more agents' lists are fused by votes."""
        if not self.config.fusion_evidence:
            return {}
        keys_of = getattr(self.llm, "evidence_keys", None)
        if keys_of is None:
            answered = [node for t in trajectories if not t.error for node in t.answer]
            if not answered or self.config.fusion != "votes" or sum(1 for t in trajectories if not t.error) < 2:
                return {}  # one agent's list is a ranking, not a fusion: its own order stands
            return graph_evidence(self.graph, self.index, question, answered)
        merged: dict[int, tuple[int, ...]] = {}
        for t in trajectories:
            if t.error:
                continue
            for node, key in keys_of(t.messages, t.tools, agent_index=t.agent_index).items():
                merged[node] = max(merged.get(node, key), key)
        return merged

    async def _run_agents(self, question: str) -> list[Trajectory]:
        """The n trajectories; without ``allow_partial`` the first failed agent stops the others and raises."""
        n = self.config.n_agents
        tasks = [asyncio.ensure_future(run_agent(question, self.toolbox, self.llm, agent_index=i, config=self.config,
                                                 on_step=self.on_step))
                 for i in range(n)]
        try:
            pending = set(tasks)
            while pending:
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                failed = sorted((t.result() for t in done if t.result().error), key=lambda t: t.agent_index)
                if failed and not self.allow_partial:
                    raise AgentError(f"agent {failed[0].agent_index} of {n} failed: {failed[0].error}")
            trajectories = [task.result() for task in tasks]
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        if all(t.error for t in trajectories):
            raise AgentError(f"all {n} agents failed; agent 0: {trajectories[0].error}")
        return trajectories

    async def aretrieve_many(self, questions: Sequence[str], concurrency: int = 4) -> list[Retrieval]:
        """Retrieve for many questions, at most ``concurrency`` questions in flight; results in input order."""
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        semaphore = asyncio.Semaphore(concurrency)

        async def one(question: str) -> Retrieval:
            async with semaphore:
                return await self.aretrieve(question)

        return list(await asyncio.gather(*(one(q) for q in questions)))

    def retrieve(self, question: str) -> Retrieval:
        """Synchronous :meth:`aretrieve` (not for use inside a running event loop)."""
        return run_beside(self._closing(self.aretrieve(question)))

    def retrieve_many(self, questions: Sequence[str], concurrency: int = 4) -> list[Retrieval]:
        """Synchronous :meth:`aretrieve_many`."""
        return run_beside(self._closing(self.aretrieve_many(questions, concurrency)))

    async def _closing(self, work):
        # The policy's HTTP connections belong to this event loop: close them before asyncio.run ends it.
        try:
            return await work
        finally:
            await self.llm.aclose()
