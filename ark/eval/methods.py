"""Retrieval methods by name: the text baselines (``bm25``, ``bm25-rel``, ``dense``) and the ARK agents (``ark``).

Each factory takes the graph and :class:`MethodOptions` and returns an object with either
``retrieve(query, k) -> MethodOutput`` (synchronous) or ``async aretrieve(query, k) -> MethodOutput`` (agent
methods, run concurrently by the runner). Node indices are the graph's internal integers; the runner turns them
into the graph's own node ids.

Add a method: write a factory and put it in :data:`METHODS`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph
    from ..llm import ChatPolicy


@dataclass
class MethodOutput:
    """One query's retrieval: node indices best first, their scores, and agent trajectories (dicts) if any."""

    indices: list[int]
    scores: list[float]
    trajectories: list[dict[str, Any]] | None = None
    record: dict[str, Any] | None = None  # agent methods: the retrieval record (question, config, fused ranking)


@dataclass
class MethodOptions:
    """Everything a method may need; each method reads the fields that concern it."""

    candidate_types: list[str] | None = None  # restrict results to these node types (None: all types)
    n_agents: int = 3
    max_steps: int = 20
    fusion: str = "votes"
    policy: ChatPolicy | None = None  # None: the offline policy
    progress: bool = False  # show progress bars while building indexes
    extra: dict[str, Any] = field(default_factory=dict)


def candidate_mask(graph: KnowledgeGraph, candidate_types: list[str] | None) -> np.ndarray | None:
    """Bool mask over nodes of the candidate types, or ``None`` for all types (names checked against the graph)."""
    if not candidate_types:
        return None
    codes = [graph.node_types.index(graph.resolve_node_type(name)) for name in candidate_types]
    return np.isin(np.asarray(graph.node_type_codes), codes)


def _resolved_types(graph: KnowledgeGraph, candidate_types: list[str] | None) -> list[str] | None:
    return [graph.resolve_node_type(t) for t in candidate_types] if candidate_types else None


class TextIndexMethod:
    """A baseline that asks a graph text index for the top k nodes: BM25 over node text (``bm25``), BM25 over
    STaRK ``add_rel``-style documents, node text plus neighbor names by relation (``bm25-rel``), or dense MiniLM.

    Indexes are cached with the graph by :func:`ark.index.open_index`."""

    def __init__(self, graph: KnowledgeGraph, options: MethodOptions, kind: str) -> None:
        from ..index import open_index

        self.node_types = _resolved_types(graph, options.candidate_types)
        self.index = open_index(graph, kind=kind, progress=options.progress)

    def retrieve(self, query: str, k: int) -> MethodOutput:
        hits = self.index.search(query, k, node_types=self.node_types)
        return MethodOutput([int(i) for i, _ in hits], [float(s) for _, s in hits])


class ARKMethod:
    """The ARK agents (an LLM policy, or the offline policy when ``options.policy`` is None) with vote fusion."""

    is_agent = True

    def __init__(self, graph: KnowledgeGraph, options: MethodOptions) -> None:
        from ..agent import ARK
        from ..index import open_index

        self.mask = candidate_mask(graph, options.candidate_types)
        self.ark = ARK(
            graph,
            options.policy,
            index=open_index(graph, kind="bm25", progress=options.progress),
            n_agents=options.n_agents,
            max_steps=options.max_steps,
            fusion=options.fusion,
        )

    async def aretrieve(self, query: str, k: int) -> MethodOutput:
        retrieval = await self.ark.aretrieve(query)
        ranked = [node for node in retrieval.ranked if self.mask is None or self.mask[node.index]]
        return MethodOutput(
            indices=[int(node.index) for node in ranked],
            scores=[float(node.score) for node in ranked],
            trajectories=[t.to_dict() for t in retrieval.trajectories],
            record={key: value for key, value in retrieval.to_dict().items() if key != "agents"},
        )

    async def aclose(self) -> None:
        """Close the policy's connections (they belong to the event loop the runner is about to end)."""
        close = getattr(self.ark.llm, "aclose", None)
        if close is not None:
            await close()


MethodFactory = Callable[["KnowledgeGraph", MethodOptions], Any]

METHODS: dict[str, MethodFactory] = {
    "bm25": lambda graph, options: TextIndexMethod(graph, options, kind="bm25"),
    "bm25-rel": lambda graph, options: TextIndexMethod(graph, options, kind="bm25-rel"),
    "dense": lambda graph, options: TextIndexMethod(graph, options, kind="dense"),
    "ark": ARKMethod,
}
AGENT_METHODS = frozenset({"ark"})


def make_method(name: str, graph: KnowledgeGraph, options: MethodOptions | None = None):
    """Build the retrieval method ``name`` for ``graph``; ``ValueError`` lists the valid names."""
    if name not in METHODS:
        raise ValueError(f"unknown retrieval method {name!r}; valid: {', '.join(METHODS)}")
    return METHODS[name](graph, options or MethodOptions())


def is_async(method: Any) -> bool:
    """Whether the method is run through ``aretrieve`` (concurrently) rather than ``retrieve``."""
    return asyncio.iscoroutinefunction(getattr(method, "aretrieve", None))
