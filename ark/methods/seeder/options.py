"""Options of SeedER and of the graph baselines of its Table 1 (pydantic only: ``ark methods`` reads these without
importing torch, numpy-heavy code or any extra). Each field names where its value comes from: the paper (Section,
Appendix E, Table 7) or "ours" where the paper gives none."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from ..base import DEFAULT_EMBEDDER, DEFERRED_BUILD, MethodOptions
from ..presets import Preset, PresetSetting


class BaselineOptions(MethodOptions):
    """Options every Table 1 baseline shares."""

    REQUEST_OPTIONS: ClassVar[tuple[str, ...]] = ("seeds", "max_neighborhood")  # not the embedder

    model_config = DEFERRED_BUILD

    embedder: str = Field(DEFAULT_EMBEDDER, description="Text embedder: the packaged MiniLM (Table 1), a "
                                                        "sentence-transformers directory, or 'openai:MODEL'.")
    seeds: int = Field(3, ge=1, description="Dense seeds (Appendix E: the top 3 nodes by cosine).")
    max_neighborhood: int = Field(2000, ge=1, description="Cap on the 2-hop ego graph (Appendix E: 'bounded'); "
                                                          "each hop keeps its most query-similar nodes.")


class KHopFilterOptions(BaselineOptions):
    """K-HOP-WITH-FILTERING (Section 3) as a retriever of its own."""

    REQUEST_OPTIONS: ClassVar[tuple[str, ...]] = (*BaselineOptions.REQUEST_OPTIONS, "hop_budgets", "budget")

    hop_budgets: list[int] = Field(default_factory=lambda: [60, 90],
                                   description="b_h per hop (ours; the paper gives none, see config.py).")
    budget: int = Field(150, ge=1, description="Node budget B (Section 4: 100–200).")


class PPROptions(BaselineOptions):
    """Personalised PageRank from the seeds (Appendix E)."""

    REQUEST_OPTIONS: ClassVar[tuple[str, ...]] = (
        *BaselineOptions.REQUEST_OPTIONS, "restart", "iterations", "ppr_weight")

    restart: float = Field(0.15, gt=0, lt=1, description="Restart probability (Appendix E: 0.15).")
    iterations: int = Field(20, ge=1, description="Power iterations (Appendix E: up to 20).")
    ppr_weight: float = Field(0.5, ge=0, le=1, description="Weight of normalised PPR against dense similarity in "
                                                           "the final relevance (ours).")


class PPRMMROptions(PPROptions):
    """PPR reranked by maximal marginal relevance (Appendix E)."""

    REQUEST_OPTIONS: ClassVar[tuple[str, ...]] = (*PPROptions.REQUEST_OPTIONS, "pool", "keep", "mmr_lambda")

    pool: int = Field(250, ge=1, description="PPR candidates reranked (Appendix E: 250).")
    keep: int = Field(20, ge=1, description="Nodes chosen by MMR (Appendix E: 20).")
    mmr_lambda: float = Field(0.78, ge=0, le=1, description="MMR trade-off λ (Appendix E: 0.78).")


class TraversalOptions(BaselineOptions):
    """Shared by the path searches (beam, A*)."""

    REQUEST_OPTIONS: ClassVar[tuple[str, ...]] = (
        *BaselineOptions.REQUEST_OPTIONS, "node_weight", "relation_weight", "path_decay", "hop_penalty", "hops")

    node_weight: float = Field(0.7, ge=0, description="Weight of destination-node similarity in a transition (ours).")
    relation_weight: float = Field(0.3, ge=0, description="Weight of relation-type similarity (ours).")
    path_decay: float = Field(0.5, ge=0, le=1, description="Share of the previous path score carried over (ours).")
    hop_penalty: float = Field(0.05, ge=0, description="Subtracted per hop (Appendix E: 'a small hop penalty').")
    hops: int = Field(2, ge=1, description="Depth (Appendix E: 2 hops).")


class BeamOptions(TraversalOptions):
    """2-hop beam search (Appendix E)."""

    REQUEST_OPTIONS: ClassVar[tuple[str, ...]] = (*TraversalOptions.REQUEST_OPTIONS, "beam_width")

    beam_width: int = Field(20, ge=1, description="Frontier nodes kept per hop (ours).")


class AStarOptions(TraversalOptions):
    """A*-style best-first search (Appendix E)."""

    REQUEST_OPTIONS: ClassVar[tuple[str, ...]] = (
        *TraversalOptions.REQUEST_OPTIONS, "max_expansions", "heuristic_weight", "branching")

    max_expansions: int = Field(60, ge=1, description="States expanded before stopping (ours).")
    heuristic_weight: float = Field(1.0, ge=0, description="Weight of sim(q, v) in the priority (ours).")
    branching: int = Field(100, ge=1, description="Best transitions pushed per expansion (ours; bounds hubs).")


class PCSTOptions(BaselineOptions):
    """G-Retriever's prize-collecting Steiner tree (Appendix E)."""

    REQUEST_OPTIONS: ClassVar[tuple[str, ...]] = (
        *BaselineOptions.REQUEST_OPTIONS, "prized_nodes", "prized_edges", "edge_cost", "prize_bonus")

    prized_nodes: int = Field(20, ge=0, description="Nodes given prizes k, k−1, ..., 1 by similarity rank (ours; "
                                                    "G-Retriever's top-k prize scheme).")
    prized_edges: int = Field(20, ge=0, description="Edges given prizes by head/relation/tail similarity rank (ours).")
    edge_cost: float = Field(0.5, gt=0, description="Cost of an edge before its prize is taken off (ours).")
    prize_bonus: float = Field(1.0, ge=0, description="Added to sim(q, v) for nodes in the tree, per unit of "
                                                      "normalised prize, plus once for membership (ours).")


class SubgraphRAGOptions(BaselineOptions):
    """SubgraphRAG-style triple scoring (Appendix E)."""

    REQUEST_OPTIONS: ClassVar[tuple[str, ...]] = (
        *BaselineOptions.REQUEST_OPTIONS, "head_weight", "relation_weight", "tail_weight", "triples")

    head_weight: float = Field(1 / 3, ge=0, description="Weight of head-node similarity in a triple's score (ours).")
    relation_weight: float = Field(1 / 3, ge=0, description="Weight of relation similarity (ours).")
    tail_weight: float = Field(1 / 3, ge=0, description="Weight of tail-node similarity (ours).")
    triples: int = Field(100, ge=1, description="Top-scoring triples whose endpoints are returned (ours).")


class SeederOptions(MethodOptions):
    """Options of the ``seeder`` method; the search and network settings come from the model directory."""

    REQUEST_OPTIONS: ClassVar[tuple[str, ...]] = ("fill",)  # not the model folder, device, threads nor endpoint

    model_config = DEFERRED_BUILD

    model: str | None = Field(None, description="Trained model directory (written by `ark train seeder`); "
                                                "'hpo' on the built-in HPO graph: the model `ark train seeder hpo "
                                                "--builtin` made under ARK_HOME.")
    device: str = Field("cpu", description="Torch device: 'cpu', 'cuda' or 'cuda:N'.")
    fill: bool = Field(True, description="After the |V_T| selected nodes, list the rest of the query subgraph in "
                                         "K-HOP-WITH-FILTERING order (for k larger than the selected set).")
    embedder_base_url: str | None = Field(None, description="Endpoint for a model trained with an 'openai:MODEL' "
                                                            "embedder (default: OPENAI_BASE_URL).")
    torch_threads: int | None = Field(1, ge=1, description="torch CPU threads (1 is fastest for these small "
                                                           "graphs on shared cores; None leaves torch's setting).")


# ``--preset paper`` for retrieval: the ranking is Top_k of V_T alone (Algorithm 1, line 19), not V_T followed by the
# rest of the subgraph. Training under the paper's settings is ``ark train seeder --preset paper`` (config.py).
PAPER_PRESET = Preset("paper", "SeedER (Shirzad et al.)", (
    PresetSetting("fill", False, "Algorithm 1, line 19", "**return** $R_k(q) \\leftarrow \\text{Top}_k(V_T; s_v)$"),
))
