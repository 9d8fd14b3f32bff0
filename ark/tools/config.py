"""Settings of the tool layer: budgets, observation caps and the ablation switches of the paper's Table 2."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ABLATIONS = ("full", "no_neighbors", "neighbors_no_query", "neighbors_no_filters")


class ToolConfig(BaseModel):
    """How the tools behave. Defaults follow the paper (global k=5 up to 30, neighborhood budget 20)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    default_global_size: int = Field(default=5, ge=1)
    max_global_size: int = Field(default=30, ge=1)
    neighborhood_budget: int = Field(default=20, ge=1)
    # Ablations (Table 2): drop the neighborhood tool, its query ranking, or its type filters.
    neighborhood_tool: bool = True
    neighborhood_query: bool = True
    neighborhood_filters: bool = True
    # "bm25": the paper's Neighbors(v, q, F); "keyword": the reference code's name/keyword matching.
    neighborhood_ranking: Literal["bm25", "keyword"] = "bm25"
    max_observation_chars: int = Field(default=6000, ge=200)
    snippet_chars: int = Field(default=160, ge=20)
    max_name_chars: int = Field(default=120, ge=10)
    # Optional per-trajectory budgets (None: unlimited).
    max_global_calls: int | None = Field(default=None, ge=0)
    max_neighborhood_calls: int | None = Field(default=None, ge=0)
    max_answer_nodes: int | None = Field(default=None, ge=1)

    @classmethod
    def for_ablation(cls, name: str, **overrides: object) -> ToolConfig:
        """A config for one of :data:`ABLATIONS` (``full`` is the default toolset)."""
        switches = {
            "full": {},
            "no_neighbors": {"neighborhood_tool": False},
            "neighbors_no_query": {"neighborhood_query": False},
            "neighbors_no_filters": {"neighborhood_filters": False},
        }
        if name not in switches:
            raise ValueError(f"unknown ablation {name!r}; valid: {', '.join(ABLATIONS)}")
        return cls(**{**switches[name], **overrides})
