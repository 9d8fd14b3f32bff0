"""Registry entry of ``mfar``: per-field lexical and dense scores mixed by query-conditioned trained weights."""

from ..registry import MethodSpec
from .options import MfarOptions

METHODS = [
    MethodSpec(
        name="mfar",
        family="mfar",
        summary="mFAR: BM25 and dense scores per field (node text, names, neighbour names per relation) mixed by "
                "weights conditioned on the query, trained with `ark train mfar` on a quiz's train split (frozen "
                "MiniLM embedder; no LLM)",
        options=MfarOptions,
        factory="ark.methods.mfar.method:MfarRetriever",
        requires=("dense",),
        docs="docs/methods/mfar.md",
        paper="Li et al., Multi-Field Adaptive Retrieval (ICLR 2025)",
    ),
]
