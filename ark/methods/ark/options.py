"""The options of the ``ark`` method (:class:`ArkOptions`) and of its tools (:class:`ToolConfig`), with the paper's
defaults: 3 agents, 20 steps, vote fusion, BM25 relevance; global search k = 5 up to 30, neighbourhood budget 20.

This module is what ``ark methods`` and option validation import: it holds no implementation.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, SerializerFunctionWrapHandler, field_validator, model_serializer

from ..base import MethodOptions, embedder_base_url_field, embedder_field, omit_recorded_defaults
from ..presets import Preset, PresetSetting

FUSIONS = ("votes", "ordering", "random")
# Readings of the vote fusion's tie-break "earliest position at which the node appears in any agent's list"
# (fusion.py): the concatenated lists' order (ours, the default) or the smallest rank within any one list.
FUSION_TIES = ("concatenated", "any_list")
ABLATIONS = ("full", "no_neighbors", "neighbors_no_query", "neighbors_no_filters")
RELEVANCES = ("bm25", "dense")
SCORINGS = ("fielded", "plain")
# The ablations of the paper's Table 2 as tool options (``--set tools.KEY=VALUE``).
ABLATION_SWITCHES: dict[str, dict[str, bool]] = {
    "full": {},
    "no_neighbors": {"neighborhood_tool": False},
    "neighbors_no_query": {"neighborhood_query": False},
    "neighbors_no_filters": {"neighborhood_filters": False},
}


class ToolConfig(MethodOptions):
    """How the tools behave: budgets, observation caps and the ablation switches of the paper's Table 2."""

    REQUEST_OPTIONS: ClassVar[tuple[str, ...]] = (
        "default_global_size", "max_global_size", "neighborhood_budget", "neighborhood_tool", "neighborhood_query",
        "neighborhood_filters", "neighborhood_paging", "neighborhood_ranking", "max_observation_chars", "snippet_chars",
        "max_name_chars", "max_global_calls", "max_neighborhood_calls", "max_answer_nodes")

    default_global_size: int = Field(default=5, ge=1, description="global search k when the model gives no size "
                                     "(Appendix A.2: k = 5)")
    max_global_size: int = Field(default=30, ge=1, description="largest global search size a call may ask for")
    neighborhood_budget: int = Field(default=20, ge=1, description="neighbours shown per neighbourhood call "
                                     "(Appendix A.2: 20)")
    neighborhood_tool: bool = Field(default=True, description="offer the neighbourhood tool (Table 2 ablation)")
    neighborhood_query: bool = Field(default=True, description="rank neighbours by a query (Table 2 ablation)")
    neighborhood_filters: bool = Field(default=True, description="node/edge type filters (Table 2 ablation)")
    neighborhood_paging: bool = Field(default=False, description="show the neighbourhood tool's offset parameter (next "
                                      "page of neighbours) in its schema; not in the paper, which shows the best "
                                      "20 only. The offset is always accepted (the offline policy pages through "
                                      "the neighbours of several anchors to intersect them)")
    neighborhood_ranking: Literal["bm25", "keyword"] = Field(
        default="bm25", description="bm25: the paper's Neighbors(v, q, F); keyword: the reference code's matching")
    max_observation_chars: int = Field(default=6000, ge=200, description="observation length target: snippets, then "
                                       "names are shortened to stay under it; results are never dropped")
    snippet_chars: int = Field(default=160, ge=20, description="characters of context shown around a match")
    max_name_chars: int = Field(default=120, ge=10, description="node names are cut to this length")
    max_global_calls: int | None = Field(default=None, ge=0, description="per-trajectory global search budget")
    max_neighborhood_calls: int | None = Field(default=None, ge=0,
                                               description="per-trajectory neighbourhood call budget")
    max_answer_nodes: int | None = Field(default=None, ge=1, description="largest answer list per trajectory")

    @classmethod
    def for_ablation(cls, name: str, **overrides: object) -> ToolConfig:
        """A config for one of :data:`ABLATIONS` (``full`` is the default toolset)."""
        if name not in ABLATION_SWITCHES:
            raise ValueError(f"unknown ablation {name!r}; valid: {', '.join(ABLATIONS)}")
        return cls.model_validate({**ABLATION_SWITCHES[name], **overrides})


class ArkOptions(MethodOptions):
    """How ARK explores (Section 3, Appendix A.2)."""

    # per request: not the embedder, its endpoint nor the system prompt
    REQUEST_OPTIONS: ClassVar[tuple[str, ...]] = (
        "n_agents", "max_steps", "fusion", "fusion_seed", "fusion_ties", "fusion_evidence", "relevance", "scoring",
        "tool_choice", "tools", "allow_unseen_answers")

    n_agents: int = Field(default=3, ge=1, description="parallel agents whose answers are fused (n = 3)")
    max_steps: int = Field(default=20, ge=1, description="steps per agent (T_max = 20)")
    fusion: str = Field(default="votes", description=f"fusion of the agents' lists: {', '.join(FUSIONS)} (Table 3)")
    fusion_seed: int = Field(default=0, description="seed of the random fusion")
    fusion_ties: Literal["concatenated", "any_list"] = Field(
        default="concatenated", description="votes' tie-break: concatenated = earliest position in the agents' "
        "lists concatenated in agent order (ours); any_list = smallest rank within any one agent's list")
    fusion_evidence: bool = Field(
        default=True, description="votes' tie-break consults the graph first: among nodes with equal votes, one "
        "linked to more of the nodes the question names comes first (ours); false = the paper's earliest-position "
        "rule alone (Section 3.2; --preset paper)")
    relevance: Literal["bm25", "dense"] = Field(
        default="bm25", description="the relevance function rel(q, d) ranking global search and neighbourhoods: "
        "bm25 (Section 3.1) or dense embeddings by `embedder` (Table 4: MiniLM; needs the dense extra)")
    embedder: str = embedder_field()
    embedder_base_url: str | None = embedder_base_url_field()
    scoring: Literal["fielded", "plain"] = Field(
        default="fielded", description="bm25 relevance: fielded = BM25F with a node's names (name, synonyms, "
        "identifiers) weighted above its text and exact names first; plain = BM25 over node text as in the paper")
    tool_choice: str = Field(default="required", description="the chat API's tool_choice")
    system_prompt: str | None = Field(default=None, description="a custom system prompt (default: rendered from "
                                      "the graph's schema)")
    tools: ToolConfig = Field(default_factory=ToolConfig)
    allow_unseen_answers: bool = Field(
        default=False, description="accept add_to_answer with nodes no observation of the trajectory showed (the "
        "paper's unchecked SELECT, for exact reproductions); by default such a call is refused with an observation "
        "and counted as an invalid call")

    @model_serializer(mode="wrap")
    def _recorded(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        """The options as recorded in run configs and trajectories: ``fusion_ties`` and ``fusion_evidence`` only
        when they are not the default, and ``allow_unseen_answers`` only when set, so that run folders made before
        the options existed resume and compare equal."""
        return omit_recorded_defaults(handler(self), {"fusion_ties": "concatenated", "fusion_evidence": True,
                                                      "allow_unseen_answers": False})

    @field_validator("fusion")
    @classmethod
    def _known_fusion(cls, value: str) -> str:
        if value not in FUSIONS:
            raise ValueError(f"unknown fusion {value!r}; valid: {', '.join(FUSIONS)}")
        return value


# ``--preset paper``: ARK as Polonuer et al. state it (ark.methods.presets; checked against the paper's text by
# tests/methods/test_paper_preset.py).
PAPER_PRESET = Preset("paper", "ARK (Polonuer et al.)", (
    PresetSetting("n_agents", 3, "Appendix A.2", "is run with $n=3$ parallel agents"),
    PresetSetting("max_steps", 20, "Appendix A.2", "a maximum trajectory length of $T_{\\max}=20$"),
    PresetSetting("tools.default_global_size", 5, "Appendix A.2", "By default $k=5$"),
    PresetSetting("tools.neighborhood_budget", 20, "Appendix A.2",
                  "a fixed budget of $k=20$ neighbors per expansion"),
    PresetSetting("relevance", "bm25", "Section 3.1", "We implement $\\text{rel}$ with BM25"),
    PresetSetting("scoring", "plain", "Section 3.1",
                  "with BM25 (Robertson and Zaragoza, 2009) over an inverted index of node textual attributes"),
    PresetSetting("fusion", "votes", "Section 3.2, Appendix A.2",
                  "ranking nodes first by the number of agents that selected them (vote count)"),
    PresetSetting("fusion_evidence", False, "Section 3.2, Appendix A.2",
                  "breaking ties by the earliest position at which the node appears in any agent's list"),
))
