"""``ark train mor``: plan and traverse every training and validation question with the offline planner, train the
reranker on the training pools (selecting the epoch by validation MRR) and write the model folder.

    MODEL_DIR/
      mor.json      format, version, the graph's identity, settings, feature names and their standardisation, the
                    parameter count, the best epoch and its validation MRR, seconds, library versions (written last)
      weights.pt    the reranker's state dict (loaded with ``weights_only=True``)
      training/     pools.npz (the planned pools, computed once) and checkpoint.pt (after every epoch): a rerun of
                    the same command resumes; removed when training finishes
"""

from __future__ import annotations

import functools
import io
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ark.errors import ArkError

from ..model_folder import write_model_file
from .planner import OfflinePlanner
from .reasoning import FEATURES, Pool, Reasoner
from .reranker import MAX_HOPS_CODE, Example, bucket, fit, network, parameter_count, scores, standardiser
from .spec import MoRSettings

if TYPE_CHECKING:
    from ...graph import KnowledgeGraph

FORMAT = "ark-mor-model"
VERSION = 1
MODEL_FILE = "mor.json"
WEIGHTS_FILE = "weights.pt"


class MoRTrainingError(ValueError, ArkError):
    """Training that cannot start (no usable questions, a checkpoint of other settings)."""


@dataclass
class Labelled:
    """A question's pool as arrays, with the node ids of its answers."""

    nodes: np.ndarray
    example: Example
    answers: list[str]


def pool_arrays(pool: Pool, buckets: int) -> tuple[np.ndarray, np.ndarray]:
    """Route buckets and hop codes of a pool's candidates."""
    hops = np.minimum(np.rint(pool.features[:, FEATURES.index("hops")] * 3), MAX_HOPS_CODE).astype(np.int64) \
        if len(pool.nodes) else np.zeros(0, dtype=np.int64)
    return np.array([bucket(s, buckets) for s in pool.signatures], dtype=np.int64), hops


class Pipeline:
    """The planner and reasoner of one graph under one setting (shared by training and the method)."""

    def __init__(self, graph: KnowledgeGraph, settings: MoRSettings, progress: bool = False) -> None:
        from ark.index.embedders import open_node_index

        self.graph, self.settings = graph, settings
        self.names = open_node_index(graph, "bm25", names_only=True, progress=progress)
        self.documents = open_node_index(graph, "bm25", names_only=False, progress=progress)
        self.planner = OfflinePlanner(graph, self.names, settings.anchors)
        self.reasoner = Reasoner(graph, self.documents, settings.pool, settings.text_k, settings.max_frontier)

    def pool(self, question: str, candidate_types: list[str] | None = None, plan: Any = None) -> Pool:
        plan = plan or self.planner.plan(question, candidate_types)
        mask = self.graph.type_mask(candidate_types) if candidate_types else None
        return self.reasoner.candidates(plan, question, mask)

    def labelled(self, questions: list[Any], progress: Callable[[int, int], None]) -> list[Labelled]:
        found = []
        for number, question in enumerate(questions, 1):
            pool = self.pool(question.query)
            routes, hops = pool_arrays(pool, self.settings.buckets)
            gold = {self.graph.index_of(a) for a in question.answer_ids if self.graph.has_node(a)}
            answers = np.array([n in gold for n in pool.nodes], dtype=bool)
            found.append(Labelled(np.asarray(pool.nodes, dtype=np.int64),
                                  Example(pool.features, routes, hops, answers), list(question.answer_ids)))
            progress(number, len(questions))
        return found


def save_pools(path: Path, groups: dict[str, list[Labelled]]) -> None:
    from ark.storage.atomic import atomic_write_bytes

    arrays: dict[str, Any] = {}
    for name, items in groups.items():
        arrays[f"{name}_offsets"] = np.cumsum([0] + [len(i.nodes) for i in items])
        for key in ("features", "buckets", "hops", "answers"):
            parts = [getattr(i.example, key) for i in items]
            arrays[f"{name}_{key}"] = np.concatenate(parts) if parts else np.zeros(0)
        arrays[f"{name}_nodes"] = np.concatenate([i.nodes for i in items]) if items else np.zeros(0, np.int64)
        arrays[f"{name}_gold"] = np.array(["\t".join(i.answers) for i in items], dtype=object)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    atomic_write_bytes(path, buffer.getvalue())


def load_pools(path: Path, names: tuple[str, ...]) -> dict[str, list[Labelled]]:
    with np.load(path, allow_pickle=True) as saved:
        arrays = {key: saved[key] for key in saved.files}  # each read of an npz key decompresses it again: once
    groups = {}
    for name in names:
        offsets, items = arrays[f"{name}_offsets"], []
        for i, gold in enumerate(arrays[f"{name}_gold"]):
            a, b = int(offsets[i]), int(offsets[i + 1])
            example = Example(*(arrays[f"{name}_{key}"][a:b] for key in ("features", "buckets", "hops", "answers")))
            items.append(Labelled(arrays[f"{name}_nodes"][a:b], example, str(gold).split("\t") if gold else []))
        groups[name] = items
    return groups


def validation_mrr(model: Any, items: list[Labelled], mean: np.ndarray, spread: np.ndarray) -> float:
    """Mean MRR of the reranked pools (an answer outside its pool ranks nowhere): one forward pass over them all."""
    if not items:
        return 0.0
    examples = [i.example for i in items]
    joined = {key: np.concatenate([getattr(e, key) for e in examples]) for key in ("features", "buckets", "hops")}
    scored = scores(model, joined["features"], joined["buckets"], joined["hops"], mean, spread)
    total, start = 0.0, 0
    for e in examples:
        part = scored[start:start + len(e.answers)]
        start += len(e.answers)
        ranked = e.answers[np.argsort(-part, kind="stable")]
        total += 1.0 / (int(np.argmax(ranked)) + 1) if ranked.any() else 0.0
    return total / len(items)


def train_mor(graph: KnowledgeGraph, train: list[Any], validation: list[Any], out: Path, settings: MoRSettings,
              log: Callable[[str], None], progress: Callable[[str, int, int], None]) -> dict[str, Any]:
    """Plan, traverse and train; write the model folder (see the module docstring); returns ``mor.json``'s body."""
    import torch

    started = time.perf_counter()
    work = out / "training"
    work.mkdir(parents=True, exist_ok=True)
    pools_path = work / "pools.npz"
    pipeline = Pipeline(graph, settings)
    if pools_path.is_file():
        groups = load_pools(pools_path, ("train", "val"))
        log(f"resuming: planned pools read from {pools_path}")
    else:
        groups = {name: pipeline.labelled(questions, functools.partial(progress, f"planning {name}"))
                  for name, questions in (("train", train), ("val", validation))}
        save_pools(pools_path, groups)
    planned_s = time.perf_counter() - started
    examples = [i.example for i in groups["train"] if i.example.answers.any() and (~i.example.answers).any()]
    if not examples:
        raise MoRTrainingError("no training question has an answer among its candidates: nothing to train on")
    mean, spread = standardiser(examples)
    torch.manual_seed(settings.seed)
    model = network(settings.buckets, settings.width)
    optimiser = torch.optim.Adam(model.parameters(), lr=settings.learning_rate)
    checkpoint_path, start = work / "checkpoint.pt", {}
    if checkpoint_path.is_file():
        saved = torch.load(checkpoint_path, map_location="cpu", weights_only=False)
        if saved.get("settings") != settings.model_dump():
            raise MoRTrainingError(f"{checkpoint_path} was made with other settings ({saved.get('settings')}); "
                                   "use the same ones to resume, or another --out")
        model.load_state_dict(saved["weights"])
        optimiser.load_state_dict(saved["optimiser"])
        start = {k: saved[k] for k in ("epoch", "best_epoch", "best_mrr", "best_weights", "history")}
        log(f"resuming after epoch {start['epoch']} ({checkpoint_path})")

    def save(state: dict[str, Any]) -> None:
        buffer = io.BytesIO()
        torch.save({**state, "settings": settings.model_dump()}, buffer)
        from ark.storage.atomic import atomic_write_bytes

        atomic_write_bytes(checkpoint_path, buffer.getvalue())

    state = fit(model, optimiser, examples, lambda m: validation_mrr(m, groups["val"], mean, spread),
                settings.epochs, start, save, lambda e, loss, mrr: progress(f"epoch loss {loss:.3f}, val MRR "
                                                                            f"{mrr:.3f}", e, settings.epochs),
                settings.batch_size, settings.negatives, settings.seed, mean, spread)
    model.load_state_dict(state["best_weights"] or model.state_dict())
    return save_model(out, model, graph, settings, mean, spread, state, {
        "train_questions": len(train), "trained_on": len(examples), "val_questions": len(validation),
        "seconds_planning": round(planned_s, 1), "seconds_total": round(time.perf_counter() - started, 1)})


def save_model(out: Path, model: Any, graph: KnowledgeGraph, settings: MoRSettings, mean: np.ndarray,
               spread: np.ndarray,
               state: dict[str, Any], facts: dict[str, Any]) -> dict[str, Any]:
    import torch

    from ark.storage.atomic import atomic_write_bytes

    buffer = io.BytesIO()
    torch.save({k: v.detach().cpu() for k, v in model.state_dict().items()}, buffer)
    atomic_write_bytes(out / WEIGHTS_FILE, buffer.getvalue())
    body = {"settings": settings.model_dump(), "features": list(FEATURES), "mean": mean.tolist(),
            "spread": spread.tolist(), "parameters": parameter_count(model), "best_epoch": state["best_epoch"],
            "val_mrr": state["best_mrr"], "epochs": state["epoch"], "history": state["history"], **facts}
    write_model_file(out, MODEL_FILE, FORMAT, VERSION, graph, body)
    shutil.rmtree(out / "training", ignore_errors=True)
    return body


def load_reranker(directory: Path, meta: dict[str, Any]) -> Any:
    """The reranker network of a checked model folder."""
    import torch

    settings = MoRSettings(**meta["settings"])
    model = network(settings.buckets, settings.width)
    model.load_state_dict(torch.load(directory / WEIGHTS_FILE, map_location="cpu", weights_only=True))
    return model.eval()
