"""SeedER's training stability (Appendix G): Figure 7's learning curves over random seeds and Table 6's
validation–test correlation (``ark experiment seeder-stability|seeder-val-test GRAPH -q FILE``).

As the paper: the queries' training part loses 20% to a validation set, and a held-out test part (the paper's
original validation split; here a seeded 20% of ``--queries``) is scored after every epoch beside it, never used
for selection. Each seed trains a fresh policy on the same query subgraphs; every epoch records the total, BPR and
RL losses, the training reward and the validation and test metrics. The runs are cached in the runs folder by their
settings, so the two commands share them. Table 6 pairs validation and test at every (seed, epoch) checkpoint.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..storage.atomic import atomic_write_text
from .paper_secondary import SEEDER_STABILITY_SETUP, SEEDER_TABLE_6, SEEDER_TABLE_6_COLUMNS, SEEDER_TABLE_6_LABELS
from .report import Figure, Report, Table

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph
    from ..loaders.queries import Query
    from ..methods.seeder.config import TrainSettings

CURVES = (("loss", "training loss"), ("bpr", "BPR loss"), ("rl", "RL loss"), ("reward", "training reward"),
          ("test", "test R@20"), ("val", "validation R@20"))


@dataclass(frozen=True)
class Split:
    """The three question sets of Appendix G."""

    train: list[Query]
    val: list[Query]
    test: list[Query]


def split_questions(queries: Sequence[Query], seed: int, val_share: float = 0.2, test_share: float = 0.2) -> Split:
    """A seeded test part (``test_share``), then ``val_share`` of the rest as validation; the rest trains."""
    order = np.random.default_rng(seed).permutation(len(queries))
    n_test = max(1, int(round(test_share * len(queries))))
    rest = order[n_test:]
    n_val = max(1, int(round(val_share * len(rest))))
    if len(rest) - n_val < 1:
        raise ValueError(f"{len(queries)} questions are too few to split into train, validation and test")
    pick = [queries[i] for i in order]
    return Split(pick[n_test + n_val:], pick[n_test:n_test + n_val], pick[:n_test])


def train_runs(graph: KnowledgeGraph, split: Split, settings: TrainSettings, runs: int, first_seed: int, cache: Path,
               progress: bool = False, log: Any = None) -> list[list[dict[str, Any]]]:
    """Per seed, the per-epoch summaries (read from ``cache`` when these settings ran before)."""
    if cache.is_file():
        return list(json.loads(cache.read_text(encoding="utf-8"))["runs"])
    from ..methods.seeder.embeddings import open_graph_embeddings, open_node_features
    from ..methods.seeder.pipeline import Question, SubgraphBuilder
    from ..methods.seeder.trainer import PolicyTrainer, SeederTrainingError

    embeddings = open_graph_embeddings(graph, None, progress=progress)
    features = open_node_features(graph, embeddings, settings.search.pca_dim)
    builder = SubgraphBuilder(graph, embeddings, features, settings.search)

    def subgraphs(part: Sequence[Query]) -> list[Any]:
        return builder.for_questions([Question(q.id, q.query, tuple(graph.index_of(a) for a in q.answer_ids))
                                      for q in part])

    train = [s for s in subgraphs(split.train) if len(s.answers)]
    if not train:
        raise SeederTrainingError("no training question has an answer inside its query subgraph")
    val, test = subgraphs(split.val), subgraphs(split.test)
    histories = []
    for run in range(runs):
        trainer = PolicyTrainer(settings.model_copy(update={"seed": first_seed + run, "eval_every": 1}),
                                np.asarray(features.nodes), train, val, test=test,
                                num_relation_codes=2 * len(graph.relation_types),
                                node_type_codes=np.asarray(graph.node_type_codes),
                                num_node_types=max(1, len(graph.node_types)), progress=progress,
                                log=log or (lambda _: None))
        histories.append(trainer.fit().history.epochs)
    cache.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(cache, json.dumps({"runs": histories}) + "\n")
    return histories


def cache_path(root: Path, graph: KnowledgeGraph, source: str, settings: TrainSettings, runs: int, seed: int) -> Path:
    """The cache file of one set of training runs (graph, queries, settings, seeds)."""
    key = json.dumps([graph.info.name or "", graph.num_nodes, graph.num_edges, source,
                      settings.model_dump(mode="json"), runs, seed], sort_keys=True)
    return root / f"seeder-training-{hashlib.sha256(key.encode()).hexdigest()[:12]}.json"


def curve(epochs: Sequence[dict[str, Any]], key: str) -> list[float]:
    """One run's curve: a loss or the reward, or the R@20 of the validation or test set."""
    return [float(e[key]["recall@20"] if key in ("val", "test") else e[key]) for e in epochs]


def stability_report(histories: Sequence[Sequence[dict[str, Any]]], *, name: str, setting: Sequence[str],
                     out: Path | None = None, charts: bool = False) -> Report:
    """Figure 7 as a table (mean ± std over the seeds, per epoch) and, with ``charts``, its six panels."""
    epochs = min(len(h) for h in histories)
    rows = []
    for e in range(epochs):
        row = [str(e + 1)]
        for key, _ in CURVES:
            values = np.array([curve(h, key)[e] for h in histories])
            row.append(f"{values.mean():.4f} ± {values.std():.4f}")
        rows.append(row)
    table = Table("seeder_stability", f"SeedER training over {len(histories)} seeds: {name} (tiny policy trained "
                  "here, offline; paper: plotted, no number)", ["epoch", *[title for _, title in CURVES]], rows)
    report = Report("seeder-stability", "SeedER Figure 7: RL training stability across random seeds",
                    setting=list(setting), tables=[table], notes=[SEEDER_STABILITY_SETUP])
    if charts and out is not None:
        report.figures.append(_plot(histories, name, out))
    return report


def correlations(histories: Sequence[Sequence[dict[str, Any]]]) -> dict[str, tuple[float, float, float, int]]:
    """Per Table 6 metric: Pearson, Spearman and Kendall between validation and test over every checkpoint."""
    from scipy import stats

    out = {}
    for metric in SEEDER_TABLE_6:
        val = np.array([e["val"][metric] for h in histories for e in h])
        test = np.array([e["test"][metric] for h in histories for e in h])
        if np.ptp(val) == 0 or np.ptp(test) == 0:
            out[metric] = (float("nan"), float("nan"), float("nan"), len(val))
            continue
        out[metric] = (float(stats.pearsonr(val, test)[0]), float(stats.spearmanr(val, test)[0]),
                       float(stats.kendalltau(val, test)[0]), len(val))
    return out


def val_test_report(histories: Sequence[Sequence[dict[str, Any]]], *, name: str, setting: Sequence[str]) -> Report:
    """Table 6: ours beside the paper's, per metric (a constant series has no correlation: 'n/a')."""
    found = correlations(histories)
    rows = []
    for metric, paper in SEEDER_TABLE_6.items():
        *ours, n = found[metric]
        rows.append([SEEDER_TABLE_6_LABELS[metric], *("n/a" if np.isnan(v) else f"{v:.3f}" for v in ours), str(n),
                     *(f"{v:.3f}" for v in paper)])
    columns = ["metric", *SEEDER_TABLE_6_COLUMNS, "n", *(f"paper {c}" for c in SEEDER_TABLE_6_COLUMNS)]
    table = Table("seeder_val_test", f"Validation–test correlation over {len(histories)} seeds × "
                  f"{min(len(h) for h in histories)} epochs: {name} (tiny policy trained here, offline) beside "
                  "SeedER Table 6 (STaRK-PRIME, n = 100)", columns, rows)
    return Report("seeder-val-test", "SeedER Table 6: validation–test correlation across training checkpoints",
                  setting=list(setting), tables=[table], notes=[SEEDER_STABILITY_SETUP])


def _plot(histories: Sequence[Sequence[dict[str, Any]]], name: str, out: Path) -> Figure:
    from ..plots import pyplot, save_png

    plt = pyplot()
    figure, panels = plt.subplots(2, 3, figsize=(10, 5.2))
    for axes, (key, title) in zip(panels.ravel(), CURVES, strict=True):
        for seed, history in enumerate(histories):
            axes.plot(range(1, len(history) + 1), curve(history, key), lw=1, alpha=0.8, label=f"seed {seed}")
        axes.set(xlabel="epoch", title=title)
    figure.suptitle(f"SeedER training across seeds ({name}; tiny policy, offline)", fontsize=10)
    path = save_png(figure, out / "seeder_stability.png", dpi=110)
    return Figure(path, f"Losses, reward and R@20 per epoch, one line per seed ({name}; offline). Paper: Figure 7.")


def split_summary(split: Split) -> str:
    return f"questions: {len(split.train)} train, {len(split.val)} validation, {len(split.test)} test"

