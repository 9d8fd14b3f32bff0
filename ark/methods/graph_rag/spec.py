"""Registry entry of ``graph-rag``: the question's core entities, their 2-hop subgraphs linearised into the prompt."""

from typing import ClassVar

from pydantic import Field

from ..base import DEFERRED_BUILD
from ..prompting import NodeRetrievalOptions, prompting_spec


class GraphRAGOptions(NodeRetrievalOptions):
    """Subgraph retrieval around the core entities (GraphScout Appendix A.4, GraphRAG)."""

    REQUEST_OPTIONS: ClassVar[tuple[str, ...]] = (
        *NodeRetrievalOptions.REQUEST_OPTIONS, "entities", "hops", "edges_per_node", "max_triples")

    model_config = DEFERRED_BUILD

    entities: int = Field(default=3, ge=1, le=20, description="core entities taken from the question by node "
                                                              "retrieval (ours; the paper gives none)")
    hops: int = Field(default=2, ge=1, le=3, description="neighbourhood depth (Appendix A.4: 2-hop)")
    edges_per_node: int = Field(default=20, ge=1, description="edges read per node while expanding (the budget "
                                                               "that keeps hubs from filling the prompt)")
    max_triples: int = Field(default=200, ge=1, description="triples in the prompt at most")


METHODS = [
    prompting_spec(
        "graph-rag",
        "node retrieval picks the entities a question is about; the triples within two hops of them are "
        "written into one prompt (GraphScout Table 1's GraphRAG; needs --model)",
        GraphRAGOptions,
        "ark.methods.graph_rag.method:GraphRAG",
        paper="Ye et al., Language is All a Graph Needs (EACL 2024 Findings), as GraphScout Appendix A.4's GraphRAG",
    ),
]
