"""Registry entry of the ARK method."""

from ..registry import MethodSpec
from .options import PAPER_PRESET, ArkOptions

METHODS = [
    MethodSpec(
        name="ark",
        summary="ARK agents: global BM25 search + typed neighbourhood exploration, n agents fused by votes "
                "(an LLM, or the offline policy); scored on its top 20",
        options=ArkOptions,
        factory="ark.methods.ark.retriever:ArkRetriever",
        family="ark",
        uses_llm=True,
        analysis="ark.methods.ark.tooluse",
        docs="docs/methods/ark.md",
        paper="Polonuer et al., Autonomous Knowledge Graph Exploration with Adaptive Breadth-Depth Retrieval",
        default_truncate=20,  # Appendix A.2: the fused ranking is cut to the top 20 before all metrics
        presets=(PAPER_PRESET,),
    ),
]
