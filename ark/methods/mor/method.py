"""``mor``: plan (the chat model's planning graph, or the offline planner), traverse and match, rerank with the model
``ark train mor`` wrote (checked against the graph). A chat model's unusable plan is a recorded failure and the
offline plan is used; nothing a model writes raises."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..base import MethodContext, MethodOutput, Retriever
from ..graph_text import schema_lines
from ..model_folder import read_model_file, resolve_model_dir
from ..prompting import PromptSession
from ..records import DetailsRecord
from ..registry import MethodError
from .planner import PLANNER_SYSTEM, read_llm_plan
from .spec import MoROptions, MoRSettings
from .training import FORMAT, MODEL_FILE, VERSION, Pipeline, load_reranker, pool_arrays

if TYPE_CHECKING:
    from ...graph import KnowledgeGraph


class MoRRetriever(Retriever):
    """The three stages over one graph."""

    def __init__(self, graph: KnowledgeGraph, options: MoROptions, context: MethodContext) -> None:
        name = graph.info.label("GRAPH")
        directory = resolve_model_dir(options.model, graph, "mor")
        self.meta = read_model_file(directory, MODEL_FILE, FORMAT, VERSION, graph, "mor",
                                    f"ark train mor {name} --queries TRAIN --val VAL")
        if options.planner == "llm" and context.llm is None:
            raise MethodError("mor with planner=llm needs a chat model: pass --model NAME with --base-url URL, or "
                              "--set planner=offline")
        self.llm = None if options.planner == "offline" else context.llm
        self.graph, self.context = graph, context
        self.settings = MoRSettings(**self.meta["settings"])
        self.pipeline = Pipeline(graph, self.settings, context.progress)
        self.model = load_reranker(directory, self.meta)
        self.mean = np.asarray(self.meta["mean"], dtype=np.float32)
        self.spread = np.asarray(self.meta["spread"], dtype=np.float32)

    async def aretrieve(self, query: str, k: int) -> MethodOutput:
        from .reranker import scores

        plan: Any = None
        failures: list[str] = []
        calls: list[dict[str, Any]] = []
        targets = self.pipeline.planner.plan(query, self.context.candidate_types).targets
        if self.llm is not None:
            session = PromptSession(self.llm, "mor")
            system = PLANNER_SYSTEM.format(types=", ".join(self.graph.node_types), schema=schema_lines(self.graph),
                                           targets=" or ".join(targets))
            reply = await session.ask_once("planner", system, f"Question: {query}")
            plan, failures = read_llm_plan(reply, self.graph, self.pipeline.names, targets, self.settings.anchors)
            failures, calls = session.failures + failures, session.calls
        pool = self.pipeline.pool(query, self.context.candidate_types, plan)
        routes, hops = pool_arrays(pool, self.settings.buckets)
        scored = scores(self.model, pool.features, routes, hops, self.mean, self.spread) if pool.nodes \
            else np.zeros(0)
        order = np.argsort(-scored, kind="stable")[:k]
        graph = self.graph
        record = {"question": query, "method": "mor", "planner": pool.plan.source,
                  "anchors": [graph.node_id(a) for a in pool.plan.anchors], "routes": pool.routes[:20],
                  "restriction": pool.plan.restriction, "reached": pool.reached, "calls": calls,
                  "failures": failures}
        return MethodOutput(indices=[pool.nodes[i] for i in order], scores=[float(scored[i]) for i in order],
                            trajectories=[], record=DetailsRecord(record))

    async def aclose(self) -> None:
        if self.llm is not None:
            await self.llm.aclose()
