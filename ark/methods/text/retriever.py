"""The text-index baselines: ask a graph text index for the top k nodes (indexes are cached with the graph by
:func:`ark.index.open_index`)."""

from __future__ import annotations

from ark.graph import KnowledgeGraph

from ..base import MethodContext, MethodOptions, MethodOutput, Retriever
from .spec import BM25Options, DenseOptions


class TextIndexRetriever(Retriever):
    """BM25 over node text, over relational documents (``bm25-rel``), or dense embeddings, by the options' type."""

    def __init__(self, graph: KnowledgeGraph, options: MethodOptions, context: MethodContext,
                 kind: str | None = None) -> None:
        from ark.index import open_index

        self.node_types = [graph.resolve_node_type(t) for t in context.candidate_types or []] or None
        if isinstance(options, DenseOptions):
            from ark.index.embedders import open_embedding_index

            self.index = open_embedding_index(graph, options.model or options.embedder,
                                              base_url=options.embedder_base_url, progress=context.progress)
        elif isinstance(options, BM25Options):
            self.index = open_index(graph, kind=kind or "bm25", k1=options.k1, b=options.b, scoring=options.scoring,
                                    progress=context.progress)
        else:
            raise TypeError(f"no text index for options {type(options).__name__}")

    def retrieve(self, query: str, k: int) -> MethodOutput:
        hits = self.index.search(query, k, node_types=self.node_types)
        return MethodOutput([int(i) for i, _ in hits], [float(s) for _, s in hits])


def relational(graph: KnowledgeGraph, options: MethodOptions, context: MethodContext) -> TextIndexRetriever:
    """``bm25-rel``: BM25 over each node's text plus its neighbours' names by relation."""
    return TextIndexRetriever(graph, options, context, kind="bm25-rel")
