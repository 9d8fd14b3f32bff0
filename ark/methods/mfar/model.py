"""mFAR's query-conditioned field weights (Li et al. 2025, Section 3.2) and their training.

score(q, d) = Σ_k w_k(q) · s_k(q, d) over the 2F field scores of :mod:`.fields`, with w(q) = W z_q + b from the
frozen query embedding z_q. Trained with the listwise loss −log Σ_{d ∈ gold} softmax_d(score) over each training
question's candidate pool (AdamW, seeded shuffling), one checkpoint per epoch so an interrupted run resumes. The
model folder holds ``weights.npz`` (W, b) and ``model.json`` (the fields, the graph it was trained on, the settings
and the training report); a model made for another graph is refused by fingerprint.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ark.errors import ArkError
from ark.storage.jsonl import write_json_atomic

if TYPE_CHECKING:
    from ...graph import KnowledgeGraph

MODEL_FILE, WEIGHTS_FILE, CHECKPOINTS = "model.json", "weights.npz", "checkpoints"


class MfarModelError(ValueError, ArkError):
    """A model folder that cannot be used (missing, or made for another graph or other fields)."""


class MfarSettings(BaseModel):
    """What ``ark train mfar`` reads (``--set key=value``)."""

    model_config = ConfigDict(extra="forbid")

    epochs: int = Field(20, ge=1, description="passes over the training questions")
    batch_size: int = Field(32, ge=1, description="questions per step")
    lr: float = Field(1e-2, gt=0, description="AdamW learning rate")
    weight_decay: float = Field(1e-4, ge=0, description="AdamW weight decay")
    candidates: int = Field(100, ge=1, description="top nodes per field scorer in each question's pool")
    seed: int = Field(0, description="seed of the initialisation and the shuffling")


@dataclass
class Example:
    """One training question: its pool's features (n, 2F), which pool entries are gold, and its query vector."""

    features: np.ndarray
    gold: np.ndarray  # bool (n,)
    query: np.ndarray  # (dim,)


def graph_identity(graph: KnowledgeGraph) -> dict[str, Any]:
    return {"name": graph.info.name, "fingerprint": graph.info.fingerprint,
            "num_nodes": int(graph.num_nodes), "relation_types": list(graph.relation_types)}


def mix(weights: np.ndarray, bias: np.ndarray, query: np.ndarray, features: np.ndarray) -> np.ndarray:
    """The scores of a pool: (W z_q + b) · features."""
    return features @ (weights @ query + bias)


def train_weights(examples: Sequence[Example], settings: MfarSettings, folder: Path,
                  progress: Callable[[int, int, float], None] | None = None) -> tuple[np.ndarray, np.ndarray, list]:
    """W (2F, dim) and b (2F,) trained on ``examples``; resumes from ``folder/checkpoints``."""
    import torch

    from ark.training.checkpoints import latest_checkpoint, load_checkpoint, save_checkpoint

    torch.manual_seed(settings.seed)
    width, dim = examples[0].features.shape[1], examples[0].query.shape[0]
    weights = torch.nn.Parameter(torch.zeros(width, dim))
    bias = torch.nn.Parameter(torch.full((width,), 1.0 / width))
    optimizer = torch.optim.AdamW([weights, bias], lr=settings.lr, weight_decay=settings.weight_decay)
    losses: list[float] = []
    start = 0
    found = latest_checkpoint(folder / CHECKPOINTS)
    if found is not None:
        saved = load_checkpoint(found)
        if saved["meta"].get("settings") != settings.model_dump(mode="json"):
            raise MfarModelError(f"{folder / CHECKPOINTS} holds a run with other settings; remove it or use the "
                                 "same settings to resume")
        weights.data.copy_(saved["states"]["weights"]["W"])
        bias.data.copy_(saved["states"]["weights"]["b"])
        optimizer.load_state_dict(saved["states"]["optimizer"])
        start, losses = int(saved["step"]), list(saved["meta"]["losses"])
    tensors = [(torch.from_numpy(e.features), torch.from_numpy(e.gold), torch.from_numpy(e.query)) for e in examples]
    for epoch in range(start, settings.epochs):
        order = np.random.default_rng([settings.seed, epoch]).permutation(len(tensors))
        total = 0.0
        for b in range(0, len(order), settings.batch_size):
            loss = torch.stack([_listwise_loss(weights, bias, *tensors[i])
                                for i in order[b:b + settings.batch_size]]).mean()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            total += float(loss.detach()) * len(order[b:b + settings.batch_size])
        losses.append(total / len(order))
        save_checkpoint(folder / CHECKPOINTS, epoch + 1, {
            "weights": {"W": weights.detach().clone(), "b": bias.detach().clone()},
            "optimizer": optimizer.state_dict()}, {"settings": settings.model_dump(mode="json"), "losses": losses})
        if progress is not None:
            progress(epoch + 1, settings.epochs, losses[-1])
    return weights.detach().numpy().copy(), bias.detach().numpy().copy(), losses


def _listwise_loss(weights: Any, bias: Any, features: Any, gold: Any, query: Any) -> Any:
    import torch

    scores = features @ (weights @ query + bias)
    return torch.logsumexp(scores, 0) - torch.logsumexp(scores[gold], 0)


def save_model(folder: Path, weights: np.ndarray, bias: np.ndarray, fields: list[str], graph: KnowledgeGraph,
               settings: MfarSettings, report: dict[str, Any]) -> None:
    """Write the weights, then ``model.json`` (last, so a folder with it is complete)."""
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / (WEIGHTS_FILE + ".partial.npz")
    np.savez(partial, W=weights, b=bias)
    partial.replace(folder / WEIGHTS_FILE)
    write_json_atomic(folder / MODEL_FILE, {"method": "mfar", "fields": fields, "graph": graph_identity(graph),
                                            "settings": settings.model_dump(mode="json"), "report": report,
                                            "saved": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})


def _version_note(folder: Path, meta: dict[str, Any], fields: list[str], earlier: int, graph: KnowledgeGraph) -> str:
    """The note for a model trained on an earlier version whose fields all still exist; :class:`MfarModelError`
    naming the fields (relations) gone or new otherwise: the weights are per field, not per node."""
    versions = (f"trained on version {earlier} of graph {meta.get('graph', {}).get('name')!r}, this is version "
                f"{graph.info.version}")
    trained = list(meta.get("fields") or [])
    gone, new = [f for f in trained if f not in fields], [f for f in fields if f not in trained]
    if gone or new:
        problems = [f"{what} {', '.join(map(repr, names))}" for what, names in
                    (("fields no longer in the graph:", gone), ("new fields it never saw:", new)) if names]
        raise MfarModelError(f"the mFAR model in {folder} was {versions}: {'; '.join(problems)}; retrain it on "
                             "this version")
    return f"note: the mFAR model in {folder} was {versions} (its fields all still exist)"


def load_model(folder: Path, graph: KnowledgeGraph, fields: list[str]) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """The weights of the model in ``folder``, checked against ``graph`` and its ``fields``."""
    if not (folder / MODEL_FILE).is_file() or not (folder / WEIGHTS_FILE).is_file():
        raise MfarModelError(f"{folder} holds no trained mFAR model ({MODEL_FILE} and {WEIGHTS_FILE}); make one "
                             f"with `ark train mfar GRAPH --queries TRAIN --out {folder}`")
    from ark.graph.versioning import version_trained_on

    meta = json.loads((folder / MODEL_FILE).read_text(encoding="utf-8"))
    trained, here = meta.get("graph", {}), graph_identity(graph)
    same_graph = trained.get("fingerprint") == here["fingerprint"]
    earlier = None if same_graph else version_trained_on(graph, trained.get("fingerprint"))
    if (same_graph and meta.get("fields") != fields) or (not same_graph and earlier is None):
        raise MfarModelError(f"the mFAR model in {folder} was trained on graph {trained.get('name')!r} "
                             f"(fingerprint {trained.get('fingerprint')}), not on this graph {here['name']!r} "
                             f"(fingerprint {here['fingerprint']}); train a model for this graph")
    if earlier is not None:  # an earlier version of this graph: usable while its fields all still exist
        meta = {**meta, "note": _version_note(folder, meta, fields, earlier, graph)}
        print(meta["note"], file=sys.stderr)
    with np.load(folder / WEIGHTS_FILE) as saved:
        return np.asarray(saved["W"]), np.asarray(saved["b"]), meta
