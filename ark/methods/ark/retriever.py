"""The ``ark`` method as a registry retriever: the :class:`~ark.methods.ark.api.ARK` agents behind the method
contract, restricted to the run's candidate node types."""

from __future__ import annotations

from ark.graph import KnowledgeGraph

from ..base import MethodContext, MethodOutput, Retriever, type_mask
from .api import ARK, open_relevance_index
from .options import ArkOptions


class ArkRetriever(Retriever):
    """n agents (the context's LLM, or the offline policy when none is configured), fused by votes."""

    def __init__(self, graph: KnowledgeGraph, options: ArkOptions, context: MethodContext) -> None:
        self.mask = type_mask(graph, context.candidate_types)
        self.ark = ARK(graph, context.llm, index=open_relevance_index(graph, options, progress=context.progress),
                       config=options, allow_partial=context.allow_partial,
                       on_step=context.on_step)

    async def aretrieve(self, query: str, k: int) -> MethodOutput:
        retrieval = await self.ark.aretrieve(query)
        ranked = [node for node in retrieval.ranked if self.mask is None or self.mask[node.index]]
        return MethodOutput(
            indices=[int(node.index) for node in ranked],
            scores=[float(node.score) for node in ranked],
            trajectories=retrieval.trajectories,
            record=retrieval,
            partial=retrieval.partial_note(),
        )

    async def aclose(self) -> None:
        """Close the policy's connections (they belong to the event loop the runner is about to end)."""
        await self.ark.llm.aclose()
