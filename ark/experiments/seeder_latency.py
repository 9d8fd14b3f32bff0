"""SeedER's Figure 4 (STaRK-PRIME): Recall@20 against per-query latency and trainable parameters, for dense
retrieval, K-HOP-WITH-FILTERING and SeedER (``ark experiment seeder-latency GRAPH -q FILE``).

SeedER is a policy trained here (``train_seeder`` on the queries' training part, the preset's settings) unless a
model folder is given; every method then answers the held-out test part, one question at a time, after one warm-up
question (the embedder's loading is not a query's latency). Latency is wall-clock per question on this machine's
CPU; the parameter count is the trained network's (dense retrieval and K-HOP-WITH-FILTERING train none). The
paper's R@20 for each retriever is its Table 1 PRIME column (GraphFlow's: Table 3); its latencies are plotted only.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .paper_secondary import SEEDER_FIGURE_4_PARAMETERS, SEEDER_FIGURE_4_SAYS
from .paper_tables import SEEDER_TABLE_1, SEEDER_TABLE_3
from .report import Figure, Report, Table

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph
    from ..loaders.queries import Query

ROWS = (("Dense Retriever", "dense"), ("K-HOP-W-FILTER", "khop-filter"), ("SEEDER", "seeder"))


def paper_recall_at_20(label: str) -> float:
    """The paper's PRIME R@20 of a Table 1 row (or Table 3's GraphFlow)."""
    table = SEEDER_TABLE_3 if label == "GraphFlow" else SEEDER_TABLE_1
    row = next(r for r in table.rows if r.label == label)
    return row.reported["PRIME"][table.metrics.index("recall@20")]


@dataclass(frozen=True)
class LatencyPoint:
    """One retriever on the test questions."""

    label: str
    method: str
    recall_at_20: float
    ms_per_query: float
    parameters: int


def measure(graph: KnowledgeGraph, label: str, method: str, options: dict[str, Any], queries: Sequence[Query],
            preset: str | None = None) -> LatencyPoint:
    """Build ``method`` (under ``preset`` where it has one), answer one warm-up question, then time every question
    and score its top 20."""
    from ..methods import MethodContext
    from ..methods.presets import preset_if_any, with_preset
    from ..methods.registry import build_method, get_method_spec
    from ..metrics.ranking import query_metrics

    spec = get_method_spec(method)
    values = with_preset(spec, preset_if_any(spec, preset), options)
    retriever = build_method(method, graph, values, MethodContext(progress=False))
    retriever.retrieve(queries[0].query, 20)
    recalls, seconds = [], []
    for query in queries:
        started = time.perf_counter()
        output = retriever.retrieve(query.query, 20)
        seconds.append(time.perf_counter() - started)
        gold = [graph.index_of(a) for a in query.answer_ids]
        recalls.append(query_metrics(output.indices, gold)["recall@20"])
    network = getattr(retriever, "network", None)
    parameters = sum(p.numel() for p in network.parameters() if p.requires_grad) if network is not None else 0
    return LatencyPoint(label, method, float(np.mean(recalls)), 1000 * float(np.mean(seconds)), parameters)


def latency_report(graph: KnowledgeGraph, points: Sequence[LatencyPoint], *, questions: int, setting: Sequence[str],
                   out: Path | None = None, charts: bool = False) -> Report:
    """Ours beside the paper's R@20 and stated parameter counts; with ``charts`` Figure 4's two panels."""
    name = graph.info.label()
    rows = [[p.label, f"{p.recall_at_20:.3f}", f"{p.ms_per_query:.1f}", f"{p.parameters:,}",
             f"{paper_recall_at_20(p.label):.3f}", SEEDER_FIGURE_4_PARAMETERS.get(p.label, "none (not trained)")]
            for p in points]
    rows.append(["GraphFlow", "not run: needs LLM fine-tuning (LoRA on LLaMA3-8B)", "—", "—",
                 f"{paper_recall_at_20('GraphFlow'):.3f}", SEEDER_FIGURE_4_PARAMETERS["GraphFlow"]])
    table = Table("seeder_latency", f"Recall@20, latency and parameters: {name}, {questions} test questions (tiny "
                  "SeedER trained here, offline, CPU) beside SeedER Figure 4 / Table 1 (STaRK-PRIME)",
                  ["retriever", "R@20", "ms / query", "trained parameters", "paper R@20 (PRIME)",
                   "paper parameters"], rows)
    report = Report("seeder-latency", "SeedER Figure 4: accuracy against latency and model size",
                    setting=list(setting), tables=[table], notes=[SEEDER_FIGURE_4_SAYS])
    if charts and out is not None:
        report.figures.append(_plot(points, name, out))
    return report


def _plot(points: Sequence[LatencyPoint], name: str, out: Path) -> Figure:
    from ..plots import pyplot, save_png

    plt = pyplot()
    figure, (left, right) = plt.subplots(1, 2, figsize=(8, 3.2))
    for p in points:
        left.scatter(p.ms_per_query, p.recall_at_20, s=40)
        left.annotate(p.label, (p.ms_per_query, p.recall_at_20), fontsize=8)
        right.scatter(max(p.parameters, 1), p.recall_at_20, s=40)
        right.annotate(p.label, (max(p.parameters, 1), p.recall_at_20), fontsize=8)
    left.set(xscale="log", xlabel="ms per query (CPU)", ylabel="R@20", title=f"latency ({name}, offline)")
    right.set(xscale="log", xlabel="trained parameters (none plotted at 1)", ylabel="R@20",
              title=f"model size ({name}, tiny)")
    path = save_png(figure, out / "seeder_latency.png", dpi=110)
    return Figure(path, f"R@20 against latency and parameters ({name}; tiny SeedER trained here, offline). "
                        "Paper: Figure 4.")
