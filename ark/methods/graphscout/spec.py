"""Registry entry of the GraphScout solver."""

from ..registry import MethodSpec
from .options import PAPER_PRESET, GraphScoutOptions

METHODS = [
    MethodSpec(
        name="graphscout",
        summary="GraphScout solver: the model writes Python running read-only Cypher in a sandbox, plus a node "
                "id retriever; answers entity/set/number/yes-no, ranks the nodes it touched (an LLM, or the "
                "scripted offline solver)",
        options=GraphScoutOptions,
        factory="ark.methods.graphscout.retriever:GraphScoutRetriever",
        family="graphscout",
        uses_llm=True,
        requires=("graphdb",),
        docs="docs/methods/graphscout.md",
        paper="Ying et al., GraphScout: Empowering Large Language Models with Intrinsic Exploration Ability for "
              "Agentic Graph Reasoning",
        presets=(PAPER_PRESET,),
    ),
]
