"""Registry entry of ``mor``: a planning graph (a chat model's, or ARK's question analysis offline), structural
traversal mixed with per-type text retrieval, and a reranker trained by ``ark train mor`` on a quiz's train split.
Light: options and training settings only (no torch)."""

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..base import DEFERRED_BUILD, MethodOptions
from ..model_folder import model_folder_field
from ..registry import MethodSpec


class MoROptions(MethodOptions):
    """Which planner runs and where the trained reranker is."""

    REQUEST_OPTIONS: ClassVar[tuple[str, ...]] = ("planner",)  # not the model folder

    model_config = DEFERRED_BUILD

    model: str | None = model_folder_field("mor")
    planner: Literal["auto", "offline", "llm"] = Field(
        default="auto", description="planning graph from: llm (the chat model), offline (ARK's question analysis) "
                                    "or auto (the chat model when one is configured, else offline)")


class MoRSettings(BaseModel):
    """``ark train mor``'s settings (the paper's where its code states them; ``ours`` marks the rest)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    epochs: int = Field(default=30, ge=1, description="training epochs (ours: the HPO quiz's validation MRR "
                                                        "levels off by 20; Yoega/MoR trains 100)")
    batch_size: int = Field(default=256, ge=1, description="answers per batch (Yoega/MoR: 256)")
    learning_rate: float = Field(default=1e-3, gt=0, description="Adam's learning rate (ours; Yoega/MoR: 3e-5 "
                                                                 "over STaRK's larger train sets)")
    negatives: int = Field(default=100, ge=1, description="negatives drawn per answer (Yoega/MoR: 100)")
    width: int = Field(default=256, ge=8, description="width of each encoding (Yoega/MoR: emb_dim 256)")
    buckets: int = Field(default=64, ge=1, description="route-signature embedding rows (ours)")
    pool: int = Field(default=100, ge=10, description="candidates per question (Yoega/MoR: topk 100)")
    text_k: int = Field(default=10, ge=0, description="text matches added where the wanted type's text is "
                                                      "restricted (Yoega/MoR: mor_k 10)")
    anchors: int = Field(default=5, ge=1, description="anchor nodes per question (Yoega/MoR: ini_k 5)")
    max_frontier: int = Field(default=1000, ge=10, description="nodes kept per traversal hop (ours)")
    seed: int = Field(default=0, ge=0, description="seed of initialisation and negative sampling")


METHODS = [
    MethodSpec(
        name="mor",
        summary="MoR: a planning graph (metapaths with text restrictions, from the chat model or, offline, ARK's "
                "question analysis), traversal along it mixed with per-type text retrieval, and a structure-aware "
                "reranker trained on a quiz's train split (`ark train mor`; ARK Table 1's MoR)",
        options=MoROptions,
        factory="ark.methods.mor.method:MoRRetriever",
        family="mor",
        uses_llm=True,
        offline=True,
        requires=("mor",),
        docs="docs/methods/mor.md",
        paper="Lei et al., Mixture of Structural-and-Textual Retrieval over Text-rich Graph Knowledge Bases "
              "(Findings of ACL 2025; MoR)",
    ),
]
