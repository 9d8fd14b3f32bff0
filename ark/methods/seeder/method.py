"""SeedER as a retrieval method: ``SeederMethod(graph, options, context).retrieve(query, k)``.

Per query (Algorithm 1): embed the query, take the k_0 most similar nodes as seeds, grow the K-HOP-WITH-FILTERING
subgraph, let the trained policy expand T times, and rank the selected nodes by the scoring head. The model
directory fixes everything but the device; it is checked against the graph and the embedder before use.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ark.eval.methods import MethodOutput, candidate_mask
from ark.index.embedders import open_embedder

from .embeddings import open_graph_embeddings, open_node_features
from .store import SeederModelError, load_model, read_model


class SeederOptions(BaseModel):
    """Options of the ``seeder`` method (the search and network settings come from the model directory)."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = Field(None, description="Trained model directory (written by `ark train seeder`).")
    device: str = Field("cpu", description="Torch device: 'cpu', 'cuda' or 'cuda:N'.")
    fill: bool = Field(True, description="After the |V_T| selected nodes, list the rest of the query subgraph in "
                                         "K-HOP-WITH-FILTERING order (for k larger than the selected set).")
    embedder_base_url: str | None = Field(None, description="Endpoint for a model trained with an 'openai:MODEL' "
                                                            "embedder (default: OPENAI_BASE_URL).")
    torch_threads: int | None = Field(1, ge=1, description="torch CPU threads (1 is fastest for these small "
                                                           "graphs on shared cores; None leaves torch's setting).")


class SeederMethod:
    """The trained SeedER retriever (dense seeds → filtered subgraph → learned expansion → scoring head)."""

    def __init__(self, graph: Any, options: SeederOptions | None = None, context: Any = None) -> None:
        import torch

        from .pipeline import SubgraphBuilder

        options = options or SeederOptions()
        if not options.model:
            raise SeederModelError("SeedER needs a trained model directory: set model=DIR (make one with "
                                   "`ark train seeder GRAPH --queries TRAIN --val VAL --out DIR`)")
        if options.torch_threads is not None:
            torch.set_num_threads(options.torch_threads)
        record = read_model(options.model)
        spec = record.embedder.get("spec")
        embedder = open_embedder(spec, base_url=options.embedder_base_url,
                                 dimensions=record.embedder.get("request_dimensions")) \
            if spec and spec.startswith("openai:") else open_embedder(spec)
        self.record = load_model(options.model, graph, embedder.identity, options.device)
        self.settings = self.record.settings
        self.options = options
        self.graph = graph
        progress = bool(getattr(context, "progress", False))
        self.embeddings = open_graph_embeddings(graph, embedder, progress=progress)
        self.features = open_node_features(graph, self.embeddings, self.settings.search.pca_dim, pca=self.record.pca)
        self.node_features = np.asarray(self.features.nodes)
        self.node_types = np.asarray(graph.node_type_codes)
        self.builder = SubgraphBuilder(graph, self.embeddings, self.features, self.settings.search)
        self.mask = candidate_mask(graph, getattr(context, "candidate_types", None))
        self.device = options.device

    @property
    def network(self):
        return self.record.network

    def retrieve(self, query: str, k: int) -> MethodOutput:
        import torch

        from .rollout import collate, rankings, run_policy, run_rerank

        if k <= 0 or not query.strip():
            return MethodOutput([], [])
        subgraph, _ = self.builder.build(self.embeddings.query(query))
        with torch.no_grad():
            batch = collate([subgraph], self.node_features, self.node_types, 1, self.device)
            if self.settings.policy == "rerank":
                run = run_rerank(self.network, batch)
            else:
                run = run_policy(self.network, batch, self.settings.search.sizes, self.settings.search.caps,
                                 sample=False)
            nodes, scores = rankings(batch, run, [subgraph], fill=self.options.fill)[0]
        if self.mask is not None:
            keep = self.mask[nodes]
            nodes, scores = nodes[keep], scores[keep]
        return MethodOutput([int(n) for n in nodes[:k]], [float(s) for s in scores[:k]])
