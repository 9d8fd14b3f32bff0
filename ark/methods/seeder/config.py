"""SeedER's settings: the search space, the policy, the optimisation, and the paper's presets (Table 7).

``prime``, ``mag`` and ``amazon`` are Table 7's columns. The paper gives no hop count or per-hop budget b_h for the
K-HOP-WITH-FILTERING subgraph ("typically containing 100–200 nodes"); ours are ``hop_budgets = [60, 90]`` with
``budget = 150``: two hops, because Appendix E's baselines and STaRK's and our quiz's questions go at most two hops
from the seeds, and the split that kept the most gold answers inside the subgraph on the HPO quiz's training
questions (Recall@Any of the subgraph: [20, 130] 0.569, [40, 110] 0.621, [60, 90] 0.654; [100, 100] with B = 200
0.684 at a third more nodes). ``hpo`` is our preset for the built-in HPO graph (see :data:`PRESETS`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator


class SearchSettings(BaseModel):
    """Seeds and the query subgraph (Algorithm 1, lines 2–3) and the expansion schedule (lines 4–13)."""

    model_config = ConfigDict(extra="forbid")

    seeds: int = Field(3, ge=1, description="Seed size k_0: top nodes by cosine (Table 7: 3 PRIME/MAG, 10 Amazon).")
    hop_budgets: list[int] = Field(default_factory=lambda: [60, 90],
                                   description="b_h: nodes kept per K-HOP-WITH-FILTERING hop (ours; not in the paper).")
    budget: int = Field(150, ge=1, description="Subgraph node budget B (Section 4: typically 100–200).")
    sizes: list[int] = Field(default_factory=lambda: [7, 10],
                             description="Expansion sizes c_t; the horizon T is their count (Table 7: [7, 10] PRIME).")
    caps: list[int] = Field(default_factory=lambda: [20, 50],
                            description="Frontier candidate caps per step (Table 7: [20, 50] PRIME).")
    pca_dim: int = Field(256, ge=1, description="PCA dimension of the input features (Table 7: 256).")

    @model_validator(mode="after")
    def _check(self) -> SearchSettings:
        if len(self.sizes) != len(self.caps):
            raise ValueError(f"sizes {self.sizes} and caps {self.caps} must have the same length (the horizon T)")
        if any(c < 1 for c in self.sizes) or any(c < 1 for c in self.caps):
            raise ValueError(f"sizes and caps must be positive, got sizes {self.sizes}, caps {self.caps}")
        bad = [(c, cap) for c, cap in zip(self.sizes, self.caps, strict=True) if c > cap]
        if bad:
            raise ValueError(f"an expansion size cannot exceed its candidate cap: {bad}")
        if self.budget < self.seeds:
            raise ValueError(f"budget B ({self.budget}) must be at least the seed size k_0 ({self.seeds})")
        if any(b < 0 for b in self.hop_budgets):
            raise ValueError(f"hop budgets must be non-negative, got {self.hop_budgets}")
        return self

    @property
    def horizon(self) -> int:
        return len(self.sizes)


NETWORK_SWITCHES = ("role_embeddings", "type_embeddings", "query_edges", "similarity_bias", "self_loops",
                    "extra_residual")


class TrainSettings(BaseModel):
    """Everything ``ark train seeder`` reads (defaults: Table 7's STaRK-PRIME column)."""

    model_config = ConfigDict(extra="forbid")

    search: SearchSettings = Field(default_factory=SearchSettings)
    hidden: int = Field(16, gt=0, description="GNN hidden dimension (Table 7).")
    layers: int = Field(3, ge=1, description="GNN layers (Table 7).")
    heads: int = Field(1, ge=1, description="Attention heads (ours; the paper does not say).")
    dropout: float = Field(0.1, ge=0.0, lt=1.0, description="Dropout (Table 7).")
    injection: Literal["concat", "add"] = Field("concat", description="Query injection (Appendix D.1).")
    architecture: Literal["ours", "paper"] = Field(
        "ours", description="'paper': Appendix D.2's network exactly (every switch below off unless set); 'ours': "
                            "with our additions (every switch on unless set).")
    role_embeddings: bool | None = Field(None, description="Role embedding (seed/selected/candidate; ours).")
    type_embeddings: bool | None = Field(None, description="Node-type embedding (ours).")
    query_edges: bool | None = Field(None, description="Query-conditioned edge network (ours).")
    similarity_bias: bool | None = Field(None, description="Query-relation similarity bias on attention (ours).")
    self_loops: bool | None = Field(None, description="Self-loop messages (ours).")
    extra_residual: bool | None = Field(None, description="Residual around the FFN (ours).")
    batch_size: int = Field(16, ge=1, description="Questions per minibatch (Table 7: 16).")
    lr: float = Field(1e-3, gt=0, description="AdamW learning rate (Table 7).")
    weight_decay: float = Field(1e-5, ge=0, description="AdamW weight decay (Table 7).")
    epochs: int = Field(15, ge=1, description="Epochs (Table 7: 15 PRIME/MAG, 10 Amazon).")
    warmup_epochs: float = Field(3, ge=0, description="Linear warm-up before the cosine decay (Table 7: 3).")
    max_grad_norm: float = Field(1.0, gt=0, description="Gradient-norm clip (Table 7: 1.0).")
    trajectories: int = Field(8, ge=1, description="M trajectories sampled per question (Section 4: 8).")
    baseline: Literal["mean", "none", "greedy"] = Field(
        "mean", description="Advantage baseline: group mean (SeedER), none, or a greedy rollout (Table 2b).")
    bpr_weight: float = Field(1.0, ge=0, description="λ of L = L_RL + λ·L_BPR (Appendix D.4: 1.0; 0 = no BPR).")
    bpr_loss: Literal["bpr", "margin"] = Field(
        "bpr", description="−log σ(Δ) (BPR) or softplus(γ − Δ) (margin variant, Appendix D.4).")
    margin: float = Field(0.5, description="γ of the margin variant (Appendix D.4: 0.5).")
    temperature: float = Field(1.0, gt=0, description="Gumbel-top-k sampling temperature τ (Appendix D.3).")
    entropy_weight: float = Field(0.0, ge=0, description="Weight of an entropy bonus on the expansion policy (ours; "
                                                         "0 = the paper's objective).")
    policy: Literal["expand", "rerank"] = Field(
        "expand", description="'rerank': the GNN+K-HOP-W-FILTER ablation (score the whole subgraph, no RL).")
    select_metric: str = Field("recall@20", description="Validation metric for model selection (Appendix G).")
    eval_every: int = Field(1, ge=1, description="Validate every this many epochs.")
    seed: int = Field(0, description="Random seed (parameters, shuffling, sampling).")

    @model_validator(mode="after")
    def _check(self) -> TrainSettings:
        if self.trajectories == 1 and self.baseline == "mean" and self.policy == "expand":
            raise ValueError("with one trajectory the group mean is the trajectory's own reward, so the policy "
                             "gradient vanishes; use baseline='none' or 'greedy' for the single-trajectory ablation")
        if self.hidden % self.heads:
            raise ValueError(f"hidden ({self.hidden}) must be divisible by heads ({self.heads})")
        from ark.metrics import METRIC_NAMES

        if self.select_metric not in METRIC_NAMES:
            raise ValueError(f"unknown select_metric {self.select_metric!r}; valid: {', '.join(METRIC_NAMES)}")
        return self

    def network_switches(self) -> dict[str, bool]:
        """Each of our network additions on or off: as set, else as ``architecture`` says (on for 'ours')."""
        default = self.architecture == "ours"
        return {name: default if getattr(self, name) is None else bool(getattr(self, name))
                for name in NETWORK_SWITCHES}


PRESETS: dict[str, dict[str, Any]] = {
    # Table 7, STaRK-PRIME (the defaults above).
    "prime": {},
    # Table 7, STaRK-MAG.
    "mag": {"search": {"seeds": 3, "sizes": [7, 7, 8], "caps": [20, 30, 50]}, "hidden": 32, "layers": 4},
    # Table 7, STaRK-Amazon.
    "amazon": {"search": {"seeds": 10, "sizes": [4, 4, 4], "caps": [20, 30, 50]}, "hidden": 64, "layers": 3,
               "lr": 3e-4, "epochs": 10},
    # Ours, for the built-in HPO graph and its quiz (1,444 training questions): PRIME's shape (HPO is a biomedical
    # graph like PrimeKG, with answers one or two hops from a named anchor), hidden 32 (ours, not swept), and 8
    # epochs so that training, subgraphs included, stays within 30 minutes on 2 CPU cores.
    "hpo": {"hidden": 32, "epochs": 8, "warmup_epochs": 1},
}

# Table 2b's ablations, as overrides on top of a preset.
ABLATIONS: dict[str, dict[str, Any]] = {
    "no-bpr": {"bpr_weight": 0.0},
    "single-trajectory": {"trajectories": 1, "baseline": "none"},
    "no-baseline": {"baseline": "none"},
    "greedy-baseline": {"baseline": "greedy"},
    "rerank": {"policy": "rerank"},
}


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


# ``--preset paper``: Table 7's column for the graph's dataset and Appendix D.2's network (architecture=paper).
PAPER_COLUMNS = ("prime", "mag", "amazon")
PAPER_ARCHITECTURE = {"architecture": "paper"}


# Table 7's rows as TrainSettings keys (what ``ark methods --show-preset paper`` lists and a test checks).
TABLE7_ROWS = {
    "Initial seed size k_0": "search.seeds", "PCA enabled / dimension": "search.pca_dim",
    "Hidden dimension": "hidden", "Number of GNN layers": "layers", "Dropout": "dropout",
    "Expansion sizes $\\{c_t\\}$": "search.sizes", "Frontier candidate caps": "search.caps",
    "Batch size": "batch_size", "Learning rate": "lr", "Weight decay": "weight_decay", "Epochs": "epochs",
    "Warmup epochs": "warmup_epochs", "Max gradient norm": "max_grad_norm", "Supervised weight": "bpr_weight",
}


def paper_training_values(column: str) -> dict[str, Any]:
    """Each of :data:`TABLE7_ROWS`' keys as ``--preset paper`` trains it for Table 7's ``column``."""
    dumped = train_settings("paper", graph=column).model_dump()
    values = {}
    for key in TABLE7_ROWS.values():
        value: Any = dumped
        for part in key.split("."):
            value = value[part]
        values[key] = value
    return values


def paper_column(graph: str) -> str:
    """Table 7's column for ``graph``: the STaRK dataset its name names (``stark-mag`` → ``mag``), else PRIME's
    (the defaults; a biomedical graph such as HPO is shaped like PrimeKG)."""
    lowered = graph.lower()
    return next((column for column in PAPER_COLUMNS if column in lowered), "prime")


def train_settings(preset: str = "prime", ablation: str | None = None, overrides: dict[str, Any] | None = None,
                   graph: str = "") -> TrainSettings:
    """Settings from a preset, an optional Table 2b ablation, and explicit overrides (nested dicts, e.g.
    ``{"search": {"budget": 200}, "lr": 3e-4}``); a bad name or value raises ``ValueError`` listing the choices.
    ``paper``: Table 7's column for ``graph`` (:func:`paper_column`) with ``architecture=paper``."""
    if preset == "paper":
        values = _merge(PRESETS[paper_column(graph)], PAPER_ARCHITECTURE)
    elif preset not in PRESETS:
        raise ValueError(f"unknown SeedER preset {preset!r}; valid: {', '.join(PRESETS)}, paper")
    else:
        values = PRESETS[preset]
    if ablation is not None:
        if ablation not in ABLATIONS:
            raise ValueError(f"unknown SeedER ablation {ablation!r}; valid: {', '.join(ABLATIONS)}")
        values = _merge(values, ABLATIONS[ablation])
    values = _merge(values, overrides or {})
    try:
        return TrainSettings(**values)
    except ValidationError as exc:
        raise ValueError(f"invalid SeedER settings: {exc}") from None
