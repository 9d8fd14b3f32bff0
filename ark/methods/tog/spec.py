"""Registry entry of ``tog``: Think-on-Graph's beam search over relations and entities, from dense seeds, inside
their 2-hop neighbourhood, returning the node documents each search step reached."""

from typing import ClassVar, Literal

from pydantic import Field

from ..base import DEFERRED_BUILD, EmbedderChoice
from ..prompting import prompting_spec


class ToGOptions(EmbedderChoice):
    """Think-on-Graph's budgets (Sun et al. 2024: width 3, depth 3) and the retrieval adaptation's (Yu et al. 2025:
    dense seeds, a 2-hop search space, documents at each step, optional reranking)."""

    REQUEST_OPTIONS: ClassVar[tuple[str, ...]] = (
        "seed_index", "seeds", "hops", "width", "depth", "candidates", "text_chars", "rerank")

    model_config = DEFERRED_BUILD

    seed_index: Literal["bm25", "dense"] = Field(
        default="dense", description="index of node documents the seeds come from: dense by `embedder` (Yu et al.) "
                                     "or bm25")
    seeds: int = Field(default=3, ge=1, le=20, description="seed nodes: the topic entities the search starts from")
    hops: int = Field(default=2, ge=1, le=3, description="the search space: this many hops around the seeds")
    width: int = Field(default=3, ge=1, le=10, description="beam width N: relations kept per entity and entities "
                                                            "kept per step (ToG: 3)")
    depth: int = Field(default=3, ge=1, le=5, description="search depth D_max (ToG: 3)")
    candidates: int = Field(default=20, ge=1, le=100, description="neighbours shown to entity pruning per "
                                                                  "(entity, relation) (the rest dropped, counted)")
    text_chars: int = Field(default=200, ge=0, description="characters of a node's document shown in prompts")
    rerank: bool = Field(default=False, description="after the search, the model reorders the retrieved nodes "
                                                    "(SeedER Table 3's reranked ToG)")


METHODS = [
    prompting_spec(
        "tog",
        "Think-on-Graph for retrieval: from dense seeds, the model prunes relations then entities in a beam "
        "(width 3, depth 3) inside the seeds' 2-hop neighbourhood, until it judges the paths sufficient; the "
        "nodes each step reached are the ranking, optionally reranked by the model (SeedER Table 3's ToG; needs "
        "--model)",
        ToGOptions,
        "ark.methods.tog.method:ThinkOnGraph",
        paper="Sun et al., Think-on-Graph: Deep and Responsible Reasoning of Large Language Model on Knowledge "
              "Graph (ICLR 2024), adapted for retrieval as in Yu et al. (2025, GraphFlow) and SeedER Appendix E",
    ),
]
