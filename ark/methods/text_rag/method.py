"""``text-rag``: every node is a text chunk (its name, type, text and its edges as triples); the ``top_k`` chunks
whose node documents are most similar to the question go into one prompt; the model answers from them."""

from __future__ import annotations

from ark.graph import KnowledgeGraph

from ..base import MethodContext, MethodOutput, Retriever
from ..graph_text import k_hop_triples, node_line, triple_line
from ..prompting import ANSWER_INSTRUCTIONS, PromptSession, answer_output, final_answer, require_model
from .spec import TextRAGOptions

SYSTEM = ("You answer a question using passages taken from a knowledge graph. Each passage describes one entity "
          "and some of its links as (subject, relation, object). Rely on the passages; when they do not settle "
          "the question, give your best answer. " + ANSWER_INSTRUCTIONS)


class TextRAG(Retriever):
    """One retrieval over node chunks, one call."""

    def __init__(self, graph: KnowledgeGraph, options: TextRAGOptions, context: MethodContext) -> None:
        from ark.index.embedders import open_node_index

        self.llm = require_model(context, "text-rag")
        self.graph, self.options, self.context = graph, options, context
        self.index = open_node_index(graph, options.index, names_only=False, embedder=options.embedder,
                                     embedder_base_url=options.embedder_base_url, progress=context.progress)

    def chunk(self, node: int) -> str:
        """The node as a passage: its line, then its edges."""
        triples = k_hop_triples(self.graph, [node], hops=1, per_node=self.options.edges_per_chunk)
        lines = [node_line(self.graph, node, self.options.chunk_chars)] + [triple_line(self.graph, t) for t in triples]
        return "\n".join(lines)[:self.options.chunk_chars]

    async def aretrieve(self, query: str, k: int) -> MethodOutput:
        hits = [int(i) for i, _ in self.index.search(query, self.options.top_k)]
        passages = "\n\n".join(f"Passage {rank}:\n{self.chunk(node)}" for rank, node in enumerate(hits, 1))
        session = PromptSession(self.llm, "text-rag")
        reply = await session.ask_once("answer", SYSTEM, f"{passages or 'No passages were found.'}\n\n"
                                                         f"Question: {query}")
        return answer_output(self.graph, session, query, final_answer(reply), hits, self.context, k,
                             {"retrieved": [self.graph.node_id(i) for i in hits]})

    async def aclose(self) -> None:
        await self.llm.aclose()
