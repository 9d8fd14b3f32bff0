"""Registry entry of ``graph-cot``: Graph-CoT's loop of reasoning, one graph function and its observation."""

from typing import ClassVar

from pydantic import Field

from ..base import DEFERRED_BUILD
from ..prompting import GraphFunctionOptions, prompting_spec


class GraphCoTOptions(GraphFunctionOptions):
    """Graph-CoT's iteration budget and what its graph functions show (Jin et al. 2024, §3)."""

    REQUEST_OPTIONS: ClassVar[tuple[str, ...]] = (*GraphFunctionOptions.REQUEST_OPTIONS, "max_steps")

    model_config = DEFERRED_BUILD

    max_steps: int = Field(default=10, ge=1, le=50, description="reasoning-interaction-execution rounds before the "
                                                                "run stops without an answer (Graph-CoT's step cap)")


METHODS = [
    prompting_spec(
        "graph-cot",
        "Graph-CoT: the model reasons, calls one graph function (RetrieveNode, NodeFeature, NeighbourCheck, "
        "NodeDegree) and reads its observation, until Finish[answer] (GraphScout Table 1's GraphCoT; needs "
        "--model)",
        GraphCoTOptions,
        "ark.methods.graph_cot.method:GraphCoT",
        paper="Jin et al., Graph Chain-of-Thought: Augmenting Large Language Models by Reasoning on Graphs (ACL "
              "2024 Findings; GRBench)",
    ),
]
