"""Training SeedER's policy on precomputed query subgraphs (Algorithm 2, Section 4, Appendix D).

Per minibatch of questions: M trajectories each, sampled together as one disjoint graph; reward = Recall@Any of
the selected set; advantage = reward − group mean (or none / a greedy rollout's reward, Table 2b);
L = L_RL + λ·L_BPR with L_RL = −mean(advantage · log π(trajectory)) and a BPR (or margin) ranking loss over
(answer, non-answer) pairs among each trajectory's selected nodes. AdamW, linear warm-up then cosine decay,
gradient-norm clipping. The best epoch by validation recall is kept; a checkpoint after every epoch makes the run
resumable. This module knows nothing of text or of the full graph: it trains on :class:`QuerySubgraph` lists and a
node-feature matrix, so synthetic tasks (the relation-tracing test) use it as they are.
"""

from __future__ import annotations

import copy
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ark.errors import ArkError
from ark.metrics import mean_metrics, query_metrics
from ark.training.checkpoints import latest_checkpoint, load_checkpoint, save_checkpoint
from ark.training.losses import pairwise_ranking_loss
from ark.training.rewards import recall_any_reward
from ark.training.rollouts import group_advantages

from .config import TrainSettings
from .model import Architecture, SeederNetwork
from .rollout import Batch, collate, rankings, run_policy, run_rerank
from .subgraph import QuerySubgraph

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

ADVANTAGE_MODE = {"mean": "centred", "none": "none", "greedy": "greedy"}


class SeederTrainingError(ValueError, ArkError):
    """Training cannot start or continue (no usable questions, a checkpoint from other settings, ...)."""


@dataclass
class History:
    """Per-step mean rewards and per-epoch summaries (losses, validation metrics, seconds)."""

    step_rewards: list[float] = field(default_factory=list)
    epochs: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class StepResult:
    """One minibatch: the total loss to back-propagate and the detached figures (rl, bpr, entropy, reward)."""

    loss: torch.Tensor
    figures: dict[str, float]


@dataclass
class TrainOutcome:
    network: SeederNetwork  # with the selected (best validation) weights
    best_epoch: int
    best_metric: float | None
    history: History
    seconds: float


def predict(net: SeederNetwork, subgraphs: Sequence[QuerySubgraph], node_features: np.ndarray,
            node_type_codes: np.ndarray | None, settings: TrainSettings, device: str | torch.device = "cpu",
            batch_size: int = 64, fill: bool = True) -> list[tuple[np.ndarray, np.ndarray]]:
    """Greedy inference: per subgraph, (global node indices best first, scores)."""
    was_training = net.training
    net.eval()
    out: list[tuple[np.ndarray, np.ndarray]] = []
    with torch.no_grad():
        for start in range(0, len(subgraphs), batch_size):
            chunk = list(subgraphs[start:start + batch_size])
            batch = collate(chunk, node_features, node_type_codes, repeats=1, device=device)
            if settings.policy == "rerank":
                run = run_rerank(net, batch)
            else:
                run = run_policy(net, batch, settings.search.sizes, settings.search.caps, sample=False)
            out.extend(rankings(batch, run, chunk, fill=fill))
    net.train(was_training)
    return out


def validation_metrics(rankings_: Sequence[tuple[np.ndarray, np.ndarray]], subgraphs: Sequence[QuerySubgraph]
                       ) -> dict[str, float]:
    """STaRK metrics of the rankings against each subgraph's full gold set (answers outside the subgraph count)."""
    rows = [query_metrics([int(n) for n in nodes], [int(g) for g in sub.gold])
            for (nodes, _), sub in zip(rankings_, subgraphs, strict=True)]
    return mean_metrics(rows) if rows else {}


def architecture_for(settings: TrainSettings, node_dim: int, query_dim: int, num_relation_codes: int,
                     num_node_types: int) -> Architecture:
    """The policy network's architecture: ``settings``' GNN sizes for a graph's features, relations and node types."""
    return Architecture(node_dim=node_dim, query_dim=query_dim, hidden=settings.hidden, layers=settings.layers,
                        heads=settings.heads, dropout=settings.dropout, injection=settings.injection,
                        num_relation_codes=num_relation_codes, num_node_types=num_node_types,
                        horizon=settings.search.horizon, **settings.network_switches())


class PolicyTrainer:
    """Trains a :class:`SeederNetwork` on query subgraphs; see the module docstring."""

    def __init__(self, settings: TrainSettings, node_features: np.ndarray, train: Sequence[QuerySubgraph],
                 val: Sequence[QuerySubgraph] | None = None, *, num_relation_codes: int,
                 test: Sequence[QuerySubgraph] | None = None, node_type_codes: np.ndarray | None = None,
                 num_node_types: int = 1,
                 checkpoint_dir: str | Path | None = None, device: str = "cpu", progress: bool = True,
                 log: Callable[[str], None] | None = None) -> None:
        if not train:
            raise SeederTrainingError("no training questions: the training set is empty")
        self.settings = settings
        self.node_features = node_features
        self.node_type_codes = node_type_codes
        self.train_set = list(train)
        self.val_set = list(val or [])
        self.test_set = list(test or [])  # monitored only (SeedER Appendix G): never selects an epoch
        self.device = torch.device(device)
        self.progress = progress
        self.log = log or (lambda message: print(message, file=sys.stderr))
        self.checkpoint_dir = Path(checkpoint_dir) if checkpoint_dir is not None else None
        query_dim = int(np.asarray(self.train_set[0].query_features).shape[0])
        self.arch = architecture_for(settings, int(node_features.shape[1]), query_dim, num_relation_codes,
                                     num_node_types)

    # ------------------------------------------------------------------ one step
    def _rewards(self, batch: Batch, run_selected: torch.Tensor, subgraphs: Sequence[QuerySubgraph]) -> np.ndarray:
        selected = run_selected.cpu().numpy()
        rewards = np.zeros(batch.num_graphs)
        for g in range(batch.num_graphs):
            lo, hi = int(batch.offsets[g]), int(batch.offsets[g + 1])
            sub = subgraphs[int(batch.source[g])]
            rewards[g] = recall_any_reward(sub.nodes[selected[lo:hi]].tolist(), sub.gold.tolist())
        return rewards

    def step(self, net: SeederNetwork, questions: Sequence[QuerySubgraph]) -> StepResult:
        """One minibatch: sample, score, and return the losses (the caller steps the optimiser)."""
        s = self.settings
        if s.policy == "rerank":
            batch = collate(questions, self.node_features, self.node_type_codes, 1, self.device)
            run = run_rerank(net, batch)
            loss = pairwise_ranking_loss(run.scores, run.selected, batch.gold, batch.graph, batch.num_graphs,
                                         s.bpr_loss, s.margin)
            rewards = self._rewards(batch, run.selected, questions)
            return StepResult(loss, {"rl": 0.0, "bpr": float(loss.detach()), "entropy": 0.0,
                                     "reward": float(rewards.mean())})
        m = s.trajectories
        batch = collate(questions, self.node_features, self.node_type_codes, m, self.device)
        run = run_policy(net, batch, s.search.sizes, s.search.caps, sample=True, temperature=s.temperature)
        rewards = self._rewards(batch, run.selected, questions)
        greedy: np.ndarray | None = None
        if s.baseline == "greedy":
            net.eval()
            with torch.no_grad():
                single = collate(questions, self.node_features, self.node_type_codes, 1, self.device)
                greedy_run = run_policy(net, single, s.search.sizes, s.search.caps, sample=False)
                greedy = self._rewards(single, greedy_run.selected, questions)
            net.train()
        advantages = np.concatenate([
            group_advantages(rewards[q * m:(q + 1) * m], ADVANTAGE_MODE[s.baseline],
                             baseline=None if greedy is None else float(greedy[q]))
            for q in range(len(questions))])
        advantage = torch.as_tensor(advantages, dtype=torch.float32, device=self.device)
        loss_rl = -(advantage * run.log_prob).mean()
        loss_bpr = pairwise_ranking_loss(run.scores, run.selected, batch.gold, batch.graph, batch.num_graphs,
                                         s.bpr_loss, s.margin) if s.bpr_weight > 0 else loss_rl * 0.0
        entropy = run.entropy.mean()
        loss = loss_rl + s.bpr_weight * loss_bpr - s.entropy_weight * entropy
        return StepResult(loss, {"rl": float(loss_rl.detach()), "bpr": float(loss_bpr.detach()),
                                 "entropy": float(entropy.detach()), "reward": float(rewards.mean())})

    # ------------------------------------------------------------------ the loop
    def fit(self) -> TrainOutcome:
        s = self.settings
        torch.manual_seed(s.seed)
        net = SeederNetwork(self.arch).to(self.device)
        optimizer = torch.optim.AdamW(net.parameters(), lr=s.lr, weight_decay=s.weight_decay)
        steps_per_epoch = math.ceil(len(self.train_set) / s.batch_size)
        total_steps = s.epochs * steps_per_epoch
        warmup = int(round(s.warmup_epochs * steps_per_epoch))

        def schedule(step: int) -> float:
            if step < warmup:
                return (step + 1) / warmup
            progress = (step - warmup) / max(1, total_steps - warmup)
            return 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))

        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
        history, best_state, best_metric, best_epoch, start_epoch = History(), None, None, -1, 0
        resumed = self._resume(net, optimizer, scheduler)
        if resumed is not None:
            history, best_state, best_metric, best_epoch, start_epoch = resumed
        started = time.perf_counter()
        with _Progress(self.progress, total_steps, start_epoch * steps_per_epoch) as bar:
            for epoch in range(start_epoch, s.epochs):
                order = np.random.default_rng([s.seed, epoch]).permutation(len(self.train_set))
                sums = {"loss": 0.0, "rl": 0.0, "bpr": 0.0, "entropy": 0.0, "reward": 0.0}
                net.train()
                for b in range(steps_per_epoch):
                    questions = [self.train_set[i] for i in order[b * s.batch_size:(b + 1) * s.batch_size]]
                    result = self.step(net, questions)
                    optimizer.zero_grad(set_to_none=True)
                    result.loss.backward()
                    torch.nn.utils.clip_grad_norm_(net.parameters(), s.max_grad_norm)
                    optimizer.step()
                    scheduler.step()
                    stats = {"loss": float(result.loss.detach()), **result.figures}
                    for key in sums:
                        sums[key] += stats[key]
                    history.step_rewards.append(stats["reward"])
                    recent = history.step_rewards[-20:]
                    bar.advance(f"epoch {epoch + 1}/{s.epochs} · reward {np.mean(recent):.3f}")
                summary: dict[str, Any] = {"epoch": epoch + 1, **{k: v / steps_per_epoch for k, v in sums.items()}}
                last = epoch + 1 == s.epochs
                if self.val_set and ((epoch + 1) % s.eval_every == 0 or last):
                    metrics = validation_metrics(  # the selected set only: SeedER's own output R(q)
                        predict(net, self.val_set, self.node_features, self.node_type_codes, s, self.device,
                                fill=False), self.val_set)
                    summary["val"] = metrics
                    value = metrics[s.select_metric]
                    if best_metric is None or value > best_metric:
                        best_metric, best_epoch = value, epoch + 1
                        best_state = copy.deepcopy(net.state_dict())
                    if self.test_set:
                        summary["test"] = validation_metrics(predict(
                            net, self.test_set, self.node_features, self.node_type_codes, s, self.device,
                            fill=False), self.test_set)
                elif not self.val_set:
                    best_state, best_epoch = copy.deepcopy(net.state_dict()), epoch + 1
                history.epochs.append(summary)
                self.log(_describe(summary, s.select_metric))
                self._checkpoint(net, optimizer, scheduler, history, best_state, best_metric, best_epoch, epoch,
                                 (epoch + 1) * steps_per_epoch)
        if best_state is not None:
            net.load_state_dict(best_state)
        net.eval()
        return TrainOutcome(net, best_epoch, best_metric, history, time.perf_counter() - started)

    # ------------------------------------------------------------------ checkpoints
    def _fingerprint(self) -> dict[str, Any]:
        return {"settings": self.settings.model_dump(mode="json"), "arch": self.arch.model_dump(mode="json"),
                "train_questions": len(self.train_set), "val_questions": len(self.val_set)}

    def _checkpoint(self, net, optimizer, scheduler, history, best_state, best_metric, best_epoch, epoch, step):
        if self.checkpoint_dir is None:
            return
        states = {"model": net.state_dict(), "optimizer": optimizer.state_dict(),
                  "scheduler": scheduler.state_dict(), "best": best_state}
        meta = {"run": self._fingerprint(), "epoch": epoch + 1, "best_metric": best_metric,
                "best_epoch": best_epoch, "step_rewards": history.step_rewards, "epochs": history.epochs}
        save_checkpoint(self.checkpoint_dir, step, states, meta, keep=1)

    def _resume(self, net, optimizer, scheduler):
        if self.checkpoint_dir is None:
            return None
        path = latest_checkpoint(self.checkpoint_dir)
        if path is None:
            return None
        payload = load_checkpoint(path)
        meta = payload["meta"]
        if meta.get("run") != self._fingerprint():
            raise SeederTrainingError(
                f"the checkpoint {path} comes from a run with other settings or data; continue that run with the "
                f"same settings, or delete {self.checkpoint_dir} (or choose another output folder) to start over")
        states = payload["states"]
        net.load_state_dict(states["model"])
        optimizer.load_state_dict(states["optimizer"])
        scheduler.load_state_dict(states["scheduler"])
        self.log(f"resuming from {path.name} (epoch {meta['epoch']} of {self.settings.epochs} done)")
        history = History(list(meta["step_rewards"]), list(meta["epochs"]))
        return history, states["best"], meta["best_metric"], meta["best_epoch"], int(meta["epoch"])


def _describe(summary: dict[str, Any], metric: str) -> str:
    text = (f"epoch {summary['epoch']}: reward {summary['reward']:.3f}, loss {summary['loss']:.4f} "
            f"(RL {summary['rl']:.4f}, BPR {summary['bpr']:.4f}), policy entropy {summary['entropy']:.3f}")
    if "val" in summary:
        val = summary["val"]
        text += f"; validation {metric} {val[metric]:.4f}, hit@1 {val['hit@1']:.4f}, mrr {val['mrr']:.4f}"
    return text


class _Progress:
    """A rich progress bar over training steps whose description carries the running reward (or nothing)."""

    def __init__(self, enabled: bool, total: int, done: int) -> None:
        self.enabled, self.total, self.done = enabled, total, done
        self._progress: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> _Progress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                      TimeElapsedColumn(), console=Console(stderr=True))
            self._progress.__enter__()
            self._task = self._progress.add_task("training SeedER", total=self.total, completed=self.done)
        return self

    def advance(self, description: str) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, advance=1, description=description)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._progress is not None:
            self._progress.__exit__(kind, error, trace)
