"""The ``graphscout`` method as a registry retriever: the :class:`~ark.methods.graphscout.solver.GraphScout` solver
behind the method contract. The ranking is the nodes the run touched (answer nodes first), restricted to the run's
candidate node types; ``MethodOutput.answer`` is the solver's answer."""

from __future__ import annotations

from ark.errors import ArkError
from ark.graph import KnowledgeGraph

from ..base import MethodContext, MethodOutput, Retriever, type_mask
from .options import GraphScoutOptions
from .solver import GraphScout


class TrajectoryFailed(RuntimeError, ArkError):
    """The solver's trajectory ended in an error (the model endpoint failed, the sandbox could not start)."""


class GraphScoutRetriever(Retriever):
    """One solver trajectory per question (the context's LLM, or the scripted solver when none is configured)."""

    def __init__(self, graph: KnowledgeGraph, options: GraphScoutOptions, context: MethodContext) -> None:
        self.mask = type_mask(graph, context.candidate_types)
        self.solver = GraphScout(graph, context.llm, options, progress=context.progress, on_step=context.on_step)

    async def aretrieve(self, query: str, k: int) -> MethodOutput:
        solution = await self.solver.asolve(query)
        if solution.trajectory.error:  # a failed question, never an empty answer
            raise TrajectoryFailed(solution.trajectory.error)
        ranked = [node for node in solution.ranked if self.mask is None or self.mask[node.index]][:k]
        return MethodOutput(
            indices=[node.index for node in ranked],
            scores=[1.0 if node.in_answer else 0.5 for node in ranked],
            trajectories=[solution.trajectory],
            record=solution,
            answer=solution.answer,
        )

    async def aclose(self) -> None:
        """Stop the sandbox workers and close the policy's connections (they belong to the ending event loop)."""
        await self.solver.aclose()
