"""Registry entry of ``cypher``: node retrieval, one Cypher query written by the model, its rows back for the
answer."""

from typing import ClassVar

from pydantic import Field

from ..base import DEFERRED_BUILD
from ..prompting import NodeRetrievalOptions, prompting_spec


class CypherQAOptions(NodeRetrievalOptions):
    """The Cypher baseline's budgets (GraphScout Appendix A.4, Cypher, with its added node retrieval step)."""

    # not timeout_s
    REQUEST_OPTIONS: ClassVar[tuple[str, ...]] = (
        *NodeRetrievalOptions.REQUEST_OPTIONS, "candidates", "max_rows", "rows_chars")

    model_config = DEFERRED_BUILD

    candidates: int = Field(default=5, ge=0, le=50, description="nodes retrieved for the question and shown with "
                                                                "their ids before the query is written (Appendix A.4)")
    max_rows: int = Field(default=50, ge=1, description="rows of the query's result given back to the model")
    rows_chars: int = Field(default=6000, ge=200, description="characters of the rows given back")
    timeout_s: float = Field(default=10.0, gt=0, description="time limit of the query, seconds")


METHODS = [
    prompting_spec(
        "cypher",
        "node retrieval, then the model writes one read-only Cypher query; its rows go back to the model "
        "for the answer (GraphScout Table 1's Cypher; needs --model)",
        CypherQAOptions,
        "ark.methods.cypher_qa.method:CypherQA",
        paper="Text-to-Cypher question answering as the Cypher baseline of Liu et al., PolyG: Effective and "
              "Efficient GraphRAG with Adaptive Graph Traversal (2025); GraphScout Appendix A.4",
        requires=("graphdb",),
    ),
]
