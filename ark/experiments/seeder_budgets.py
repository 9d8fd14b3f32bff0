"""SeedER's Figure 6 (Appendix F.2): pure dense retrieval against the same dense seeds followed by budgeted
K-HOP-WITH-FILTERING, swept over the final retrieval budget B (``ark experiment seeder-budgets GRAPH -q FILE``).

Per question and budget B, dense retrieval returns the top B nodes by cosine; K-HOP-WITH-FILTERING starts from the
top ``seeds`` of those and expands hop by hop (per-hop budgets ``hop_share`` × B, ours: the paper gives none) until
B nodes are collected, ranked seeds first, then by filter score. Each returned set is scored with Hit@Any (any
answer inside), Recall@Any (the share of answers inside) and MRR, averaged over the questions with answers. No model
runs and nothing is trained: the figure is a graph statistic of the embedder's similarities.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .paper_secondary import SEEDER_FIGURE_6_SAYS
from .report import Figure, Report, Table

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph
    from ..loaders.queries import Query

METRICS = ("hit@any", "recall@any", "mrr")
TITLES = {"hit@any": "Hit@Any", "recall@any": "Recall@Any", "mrr": "MRR"}
METHODS = ("dense", "khop-filter")


@dataclass(frozen=True)
class BudgetPoint:
    """The mean metrics of one method at one budget over the questions."""

    method: str
    budget: int
    hit_any: float
    recall_any: float
    mrr: float

    def value(self, metric: str) -> float:
        return {"hit@any": self.hit_any, "recall@any": self.recall_any, "mrr": self.mrr}[metric]


def set_metrics(ranked: Sequence[int], gold: set[int]) -> tuple[float, float, float]:
    """Hit@Any, Recall@Any and MRR of one returned list against the answers ``gold``."""
    found = [i for i, node in enumerate(ranked) if node in gold]
    inside = len(gold.intersection(ranked))
    return float(bool(found)), inside / len(gold), 1.0 / (found[0] + 1) if found else 0.0


def hop_budgets(budget: int, seeds: int, shares: Sequence[float]) -> list[int]:
    """Per-hop budgets for a final budget: ``shares`` of what the seeds leave (at least one node a hop)."""
    room = max(budget - seeds, 0)
    return [max(1, int(round(share * room))) for share in shares]


def budget_sweep(graph: KnowledgeGraph, queries: Sequence[Query], budgets: Sequence[int], *, seeds: int = 3,
                 hop_share: Sequence[float] = (0.4, 0.6), embedder: str | None = None,
                 progress: bool = False) -> list[BudgetPoint]:
    """Dense and K-HOP-WITH-FILTERING at every budget (``ValueError`` for a bad setting or no answered question)."""
    from ..methods.seeder.embeddings import open_graph_embeddings
    from ..methods.seeder.expansion import khop_with_filter

    if not budgets or min(budgets) < seeds or seeds < 1:
        raise ValueError(f"budgets must be at least the seed count ({seeds}); got {list(budgets)}")
    answered = [(q, {graph.index_of(a) for a in q.answer_ids}) for q in queries if q.answer_ids]
    if not answered:
        raise ValueError("no question has answers to score (answer_ids)")
    embeddings = open_graph_embeddings(graph, embedder, progress=progress)
    sums = {(m, b): np.zeros(3) for m in METHODS for b in budgets}
    for query, gold in answered:
        vector = embeddings.query(query.query)
        sims = embeddings.node_similarities(vector)
        relation_sims = embeddings.relation_similarities(vector)
        dense = np.argsort(-sims, kind="stable")[:max(budgets)].tolist()
        start = dense[:seeds]
        for b in budgets:
            sums[("dense", b)] += set_metrics(dense[:b], gold)
            nodes, _ = khop_with_filter(graph, sims, relation_sims, start, hop_budgets(b, seeds, hop_share),
                                        b).ranking()
            sums[("khop-filter", b)] += set_metrics([int(n) for n in nodes[:b]], gold)
    n = len(answered)
    return [BudgetPoint(m, b, *(sums[(m, b)] / n).tolist()) for m in METHODS for b in budgets]


def budgets_report(graph: KnowledgeGraph, points: Sequence[BudgetPoint], *, questions: int, seeds: int,
                   hop_share: Sequence[float], setting: Sequence[str] = (), out: Path | None = None,
                   charts: bool = False) -> Report:
    """The report: one row per budget with both methods' metrics; with ``charts`` Figure 6's panels as a PNG."""
    name = graph.info.label()
    by = {(p.method, p.budget): p for p in points}
    budgets = sorted({p.budget for p in points})
    columns = ["budget B"] + [f"{TITLES[m]} {method}" for m in METRICS for method in ("dense", "k-hop")]
    rows = [[str(b)] + [f"{by[(method, b)].value(m):.3f}" for m in METRICS for method in METHODS]
            for b in budgets]
    table = Table("seeder_budgets", f"Dense retrieval vs budgeted K-HOP-WITH-FILTERING: {name}, {questions} "
                  f"questions (offline, no model; MiniLM similarities, {seeds} dense seeds; paper: plotted, "
                  "no number)", columns, rows)
    report = Report("seeder-budgets", "SeedER Figure 6: dense retrieval vs budgeted K-HOP-WITH-FILTERING",
                    setting=[f"graph: {name} ({graph.num_nodes:,} nodes)",
                             f"seeds: top {seeds} by cosine; per-hop budgets {list(hop_share)} × (B − seeds) "
                             "(ours: the paper states none)", "offline: no model, no training", *setting],
                    tables=[table], notes=[SEEDER_FIGURE_6_SAYS])
    if charts and out is not None:
        report.figures.append(_plot(points, name, out))
    return report


def _plot(points: Sequence[BudgetPoint], name: str, out: Path) -> Figure:
    """One panel per metric: dense (dashed squares) and K-HOP-WITH-FILTERING (solid circles) against the budget,
    as one row of Figure 6."""
    from ..plots import pyplot, save_png

    plt = pyplot()
    figure, panels = plt.subplots(1, len(METRICS), figsize=(10, 3.0))
    for axes, metric in zip(panels, METRICS, strict=True):
        for method, style, label in (("dense", "s--", "dense"), ("khop-filter", "o-", "K-HOP-W-FILTER")):
            mine = sorted((p for p in points if p.method == method), key=lambda p: p.budget)
            axes.plot([p.budget for p in mine], [p.value(metric) for p in mine], style, label=label)
        axes.set(xlabel="budget B", ylabel=TITLES[metric], title=f"{TITLES[metric]} ({name}, offline)")
    panels[0].legend()
    path = save_png(figure, out / "seeder_budgets.png", dpi=110)
    return Figure(path, f"Dense vs budgeted K-HOP-WITH-FILTERING over the budget ({name}; offline, no model). "
                        "Paper: Figure 6.")
