"""SeedER as a retrieval method: ``SeederMethod(graph, options, context).retrieve(query, k)``.

Per query (Algorithm 1): embed the query, take the k_0 most similar nodes as seeds, grow the K-HOP-WITH-FILTERING
subgraph, let the trained policy expand T times, and rank the selected nodes by the scoring head. The model
directory fixes everything but the device; it is checked against the graph and the embedder before use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ark.index.embedders import open_embedder

from ..base import MethodContext, MethodOutput, Retriever, type_mask
from .embeddings import open_graph_embeddings, open_node_features
from .options import SeederOptions
from .store import code_maps, load_model, read_model, resolve_model_dir

if TYPE_CHECKING:
    from ...graph import KnowledgeGraph


class SeederMethod(Retriever):
    """The trained SeedER retriever (dense seeds → filtered subgraph → learned expansion → scoring head)."""

    def __init__(self, graph: KnowledgeGraph, options: SeederOptions | None = None, context: MethodContext | None = None
                 ) -> None:
        import torch

        from .pipeline import SubgraphBuilder

        options = options or SeederOptions()
        context = context or MethodContext()
        model_dir = resolve_model_dir(options.model, graph)
        if options.torch_threads is not None:
            torch.set_num_threads(options.torch_threads)
        record = read_model(model_dir)
        spec = record.embedder.get("spec")
        embedder = open_embedder(spec, base_url=options.embedder_base_url,
                                 dimensions=record.embedder.get("request_dimensions")) \
            if spec and spec.startswith("openai:") else open_embedder(spec)
        self.record = load_model(model_dir, graph, embedder.identity, options.device)
        self.settings = self.record.settings
        self.options = options
        self.graph = graph
        self.embeddings = open_graph_embeddings(graph, embedder, progress=context.progress)
        self.features = open_node_features(graph, self.embeddings, self.settings.search.pca_dim, pca=self.record.pca)
        self.node_features = np.asarray(self.features.nodes)
        self.node_types = np.asarray(graph.node_type_codes)
        self.codes = code_maps(self.record, graph)  # a graph updated since training numbers types otherwise
        if self.codes is not None:
            self.node_types = self.codes[0][self.node_types]
        self.builder = SubgraphBuilder(graph, self.embeddings, self.features, self.settings.search)
        self.mask = type_mask(graph, context.candidate_types)
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
        if self.codes is not None:  # relation codes as the model numbers them (direction kept in the low bit)
            code = subgraph.edge_code
            subgraph.edge_code = 2 * self.codes[1][code >> 1] + (code & 1)
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
