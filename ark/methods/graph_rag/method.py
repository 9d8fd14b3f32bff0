"""``graph-rag``: node retrieval finds the question's core entities; their ``hops``-hop subgraph (breadth first,
``edges_per_node`` per node, ``max_triples`` in all) is written as entity lines and (subject, relation, object)
triples into one prompt; the model answers from it."""

from __future__ import annotations

from ark.graph import KnowledgeGraph

from ..base import MethodContext, MethodOutput, Retriever
from ..graph_text import k_hop_triples, node_line, triple_line, triple_nodes
from ..prompting import ANSWER_INSTRUCTIONS, PromptSession, answer_output, final_answer, open_names, require_model
from .spec import GraphRAGOptions

SYSTEM = ("You answer a question from a subgraph of a knowledge graph: the entities the question is about, then "
          "the facts around them as (subject, relation, object) triples. Follow the triples hop by hop. "
          + ANSWER_INSTRUCTIONS)


class GraphRAG(Retriever):
    """Core entities, their subgraph, one call."""

    def __init__(self, graph: KnowledgeGraph, options: GraphRAGOptions, context: MethodContext) -> None:
        self.llm = require_model(context, "graph-rag")
        self.graph, self.options, self.context = graph, options, context
        self.names = open_names(graph, options, context)

    async def aretrieve(self, query: str, k: int) -> MethodOutput:
        options = self.options
        core = [int(i) for i, _ in self.names.search(query, options.entities)]
        triples = k_hop_triples(self.graph, core, options.hops, options.edges_per_node, options.max_triples)
        entities = "\n".join(node_line(self.graph, node, 300) for node in core) or "none found"
        facts = "\n".join(triple_line(self.graph, t) for t in triples) or "none"
        session = PromptSession(self.llm, "graph-rag")
        reply = await session.ask_once("answer", SYSTEM, f"Core entities:\n{entities}\n\nFacts:\n{facts}\n\n"
                                                         f"Question: {query}")
        return answer_output(self.graph, session, query, final_answer(reply), core + triple_nodes(triples),
                             self.context, k, {"core_entities": [self.graph.node_id(i) for i in core],
                                               "triples": len(triples)})

    async def aclose(self) -> None:
        await self.llm.aclose()
