"""Registry entry of ``kar``: the question's entities, their neighbourhoods, an expanded query written by the model,
and retrieval over it with the relation-type constraints the model named."""

from typing import ClassVar, Literal

from pydantic import Field

from ..base import DEFERRED_BUILD, EmbedderChoice
from ..prompting import prompting_spec


class KAROptions(EmbedderChoice):
    """KAR's knowledge budget and retriever (Xia et al. 2024)."""

    REQUEST_OPTIONS: ClassVar[tuple[str, ...]] = (
        "index", "entities", "triples", "neighbours", "pool", "constraints", "text_chars")

    model_config = DEFERRED_BUILD

    index: Literal["bm25", "dense"] = Field(
        default="bm25", description="retriever over node documents the expanded query is run on: bm25 or dense by "
                                    "`embedder` (KAR expands for either)")
    entities: int = Field(default=5, ge=1, le=20, description="question entities linked to the graph at most")
    triples: int = Field(default=10, ge=1, le=100, description="neighbourhood triples per linked entity in the "
                                                               "expansion prompt, the most relevant to the question")
    neighbours: int = Field(default=200, ge=1, description="edges read per linked entity before relevance picks "
                                                           "`triples` of them")
    pool: int = Field(default=100, ge=1, description="retrieved candidates the relation-type constraints reorder")
    constraints: bool = Field(default=True, description="rank candidates meeting the model's relation-type "
                                                        "constraints first (false: the expanded query alone)")
    text_chars: int = Field(default=200, ge=0, description="characters of a node's document in the prompt")


METHODS = [
    prompting_spec(
        "kar",
        "KAR: the model names the question's entities; linked to the graph, their documents and most relevant "
        "relations go into a prompt where the model writes an expanded query and relation-type constraints; "
        "BM25 or dense retrieval runs the expanded query, constrained candidates first (ARK Table 1's KAR; needs "
        "--model)",
        KAROptions,
        "ark.methods.kar.method:KnowledgeAwareRetrieval",
        paper="Xia et al., Knowledge-Aware Query Expansion with Large Language Models for Textual and Relational "
              "Retrieval (2024; KAR)",
    ),
]
