"""``avatar``: the actor under the instructions ``ark train avatar`` chose (its model folder, checked against the
graph). Without a chat model, or without a model folder, building it fails with one line naming the fix."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..base import MethodContext, MethodOutput, Retriever
from ..model_folder import read_model_file, resolve_model_dir
from ..prompting import require_model
from ..records import DetailsRecord, ExtendedRecord
from .actor import Actor
from .spec import AvatarOptions
from .training import FORMAT, MODEL_FILE, VERSION

if TYPE_CHECKING:
    from ...graph import KnowledgeGraph


class AvatarRetriever(Retriever):
    """The optimised actor."""

    def __init__(self, graph: KnowledgeGraph, options: AvatarOptions, context: MethodContext) -> None:
        llm = require_model(context, "avatar")
        name = graph.info.label("GRAPH")
        directory = resolve_model_dir(options.model, graph, "avatar")
        self.meta = read_model_file(directory, MODEL_FILE, FORMAT, VERSION, graph, "avatar",
                                    f"ark train avatar {name} --queries TRAIN --model M")
        steps = options.max_steps or int(self.meta["settings"]["max_steps"])
        self.actor = Actor(graph, llm, self.meta["instructions"], steps, context)

    async def aretrieve(self, query: str, k: int) -> MethodOutput:
        output = await self.actor.answer(query, k)
        added = {"method": "avatar", "instructions_round": self.meta.get("chosen_round")}
        record = ExtendedRecord(output.record, added) if output.record is not None else DetailsRecord(added)
        return MethodOutput(indices=output.indices[:k], scores=output.scores[:k], trajectories=output.trajectories,
                            record=record, partial=output.partial)

    async def aclose(self) -> None:
        await self.actor.retriever.aclose()
