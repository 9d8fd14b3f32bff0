"""Registry entry of ``polyg``: node retrieval, the question's triple pattern, the traversal for that pattern."""

from typing import ClassVar

from pydantic import Field

from ..base import DEFERRED_BUILD
from ..prompting import NodeRetrievalOptions, prompting_spec


class PolyGOptions(NodeRetrievalOptions):
    """PolyG's traversal budgets (Liu et al. 2025; GraphScout Appendix A.4 adds node retrieval)."""

    REQUEST_OPTIONS: ClassVar[tuple[str, ...]] = (
        *NodeRetrievalOptions.REQUEST_OPTIONS, "edges_per_node", "max_triples", "max_path_hops", "max_paths")

    model_config = DEFERRED_BUILD

    edges_per_node: int = Field(default=30, ge=1, description="edges read per node by a traversal")
    max_triples: int = Field(default=150, ge=1, description="facts given to the answer call at most")
    max_path_hops: int = Field(default=3, ge=1, le=5, description="longest path ⟨h,*,t⟩ looks for")
    max_paths: int = Field(default=10, ge=1, description="paths ⟨h,*,t⟩ reports at most")


METHODS = [
    prompting_spec(
        "polyg",
        "PolyG: the model sorts the question into a triple pattern (one entity, entity and relation, a "
        "path between two entities, a fact to check, a relation chain); that pattern's traversal gathers the "
        "facts, widened when it finds nothing (GraphScout Table 1's PolyG; needs --model)",
        PolyGOptions,
        "ark.methods.polyg.method:PolyG",
        paper="Liu et al., PolyG: Effective and Efficient GraphRAG with Adaptive Graph Traversal (2025)",
    ),
]
