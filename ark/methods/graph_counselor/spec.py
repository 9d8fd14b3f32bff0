"""Registry entry of ``graph-counselor``: planning, execution and reflection agents over Graph-CoT's graph
functions."""

from typing import ClassVar

from pydantic import Field

from ..base import DEFERRED_BUILD
from ..prompting import GraphFunctionOptions, prompting_spec


class GraphCounselorOptions(GraphFunctionOptions):
    """GraphCounselor's budgets (Gao et al. 2025)."""

    REQUEST_OPTIONS: ClassVar[tuple[str, ...]] = (
        *GraphFunctionOptions.REQUEST_OPTIONS, "max_steps", "actions_per_step", "max_reflections")

    model_config = DEFERRED_BUILD

    max_steps: int = Field(default=8, ge=1, le=30, description="plan-execute steps per round before the round "
                                                               "stops without a draft answer")
    actions_per_step: int = Field(default=3, ge=1, le=10, description="graph functions the executor may call in "
                                                                      "one step")
    max_reflections: int = Field(default=2, ge=0, le=5, description="times the reflection agent may send a draft "
                                                                    "answer back with feedback")


METHODS = [
    prompting_spec(
        "graph-counselor",
        "GraphCounselor: a planning agent states the next information need, an execution agent calls "
        "Graph-CoT's graph functions for it, a reflection agent checks the draft answer and can send it back "
        "(GraphScout Table 1's GraphCounselor; needs --model)",
        GraphCounselorOptions,
        "ark.methods.graph_counselor.method:GraphCounselor",
        paper="Gao et al., Graph Counselor: Adaptive Graph Exploration via Multi-Agent Synergy to Enhance LLM "
              "Reasoning (ACL 2025)",
    ),
]
