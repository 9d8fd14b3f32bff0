"""SeedER's k-hop growth (its Figure 3(a) and Figure 5): how many nodes the naive k-hop neighbourhood of a question's
seed nodes holds, hop by hop (``ark experiment khop-growth GRAPH --queries FILE``).

Per question the seeds are its top ``seeds`` nodes by the ``seeds_by`` index (``dense``: cosine over MiniLM
embeddings, the paper's setting, Figure 3's caption: "the top three nodes by cosine similarity"; ``bm25``: ours, no
extra, labelled as such); the neighbourhood at hop h is every node within h undirected hops of a seed. The report
gives the mean and the largest size over the questions at each hop, and their share of the graph. The paper plots
these on a log scale (three STaRK graphs) and states no numbers for them; its words are quoted beside ours.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .report import Figure, Report, Table

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph
    from ..loaders.queries import Query

SEEDS_BY = ("dense", "bm25")
PAPER_SAYS = ("SeedER, Section 3 (Figure 3(a), STaRK-PRIME): \"even a 2–3 hop neighborhood can cover a large "
              "fraction of the graph\"; Appendix F.1 (Figure 5, PRIME, Amazon, MAG): \"uniform neighborhood expansion "
              "grows rapidly and approaches a large fraction of the graph within a small number of hops\". The "
              "figures are plots: the paper states no sizes, so none are printed beside ours.")


@dataclass(frozen=True)
class HopSizes:
    """One hop's neighbourhood sizes over the questions."""

    hop: int
    mean: float
    largest: int
    share_of_graph: float


def neighbourhood_sizes(graph: KnowledgeGraph, seeds: Sequence[int], hops: int) -> list[int]:
    """The size of the undirected ``h``-hop neighbourhood of ``seeds`` (seeds included) for h = 1..``hops``."""
    reached = set(int(s) for s in seeds)
    frontier = set(reached)
    sizes = []
    for _ in range(hops):
        grown: set[int] = set()
        for node in frontier:
            grown.update(int(j) for j in graph.neighbors(node).nodes.tolist())
        frontier = grown - reached
        reached |= frontier
        sizes.append(len(reached))
    return sizes


def khop_growth(graph: KnowledgeGraph, queries: Sequence[Query], hops: int = 3, seeds: int = 3,
                seeds_by: str = "dense", progress: bool = False) -> list[HopSizes]:
    """Mean and largest neighbourhood size per hop over ``queries`` (``ValueError`` for a bad setting)."""
    if seeds_by not in SEEDS_BY:
        raise ValueError(f"unknown seeds_by {seeds_by!r}; valid: {', '.join(SEEDS_BY)}")
    if hops < 1 or seeds < 1 or not queries:
        raise ValueError(f"khop-growth needs hops >= 1, seeds >= 1 and a question (got hops={hops}, seeds={seeds}, "
                         f"{len(queries)} questions)")
    from ..index import open_index

    index = open_index(graph, kind=seeds_by, progress=progress)
    per_query = [neighbourhood_sizes(graph, [n for n, _ in index.search(q.query, seeds)], hops) for q in queries]
    total = max(graph.num_nodes, 1)
    return [HopSizes(h + 1, sum(s[h] for s in per_query) / len(per_query), max(s[h] for s in per_query),
                     max(s[h] for s in per_query) / total) for h in range(hops)]


def khop_report(graph: KnowledgeGraph, sizes: Sequence[HopSizes], *, questions: int, seeds: int, seeds_by: str,
                source: str, out: Path | None = None, charts: bool = False, command: str | None = None) -> Report:
    """The report (tables; with ``charts`` the PNG plot in ``out``, as Figure 5 draws it)."""
    name = graph.info.label()
    seeding = ("dense cosine (MiniLM; the paper's setting)" if seeds_by == "dense"
               else "BM25 (ours, not the paper's dense seeds)")
    table = Table("khop_growth", f"k-hop neighbourhood of the top {seeds} seeds per question: {name}, "
                  f"{questions} questions (offline, no model; seeds by {seeding})",
                  ["hop", "mean nodes", "largest", "largest / graph", "paper"],
                  [[str(s.hop), f"{s.mean:,.1f}", f"{s.largest:,}", f"{100 * s.share_of_graph:.1f}%",
                    "plotted, no number"] for s in sizes])
    report = Report("khop-growth", "SeedER Figure 3(a) / Figure 5: growth of naive k-hop expansion",
                    setting=[f"graph: {name} ({graph.num_nodes:,} nodes)", f"queries: {source}",
                             f"seeds: top {seeds} by {seeding}", "offline: no model, no training",
                             *([f"command: `{command}`"] if command else [])],
                    tables=[table], notes=[PAPER_SAYS])
    if charts and out is not None:
        report.figures.append(_plot(sizes, graph.num_nodes, name, out))
    return report


def _plot(sizes: Sequence[HopSizes], total: int, name: str, out: Path) -> Figure:
    """Mean (blue) and largest (black) size per hop on a log scale, the graph's size as a red line (Figure 5)."""
    from ..plots import pyplot

    plt = pyplot()
    figure, axes = plt.subplots(figsize=(4.5, 3.2))
    hops = [s.hop for s in sizes]
    axes.plot(hops, [s.mean for s in sizes], "o-", color="tab:blue", label="mean")
    axes.plot(hops, [s.largest for s in sizes], "o-", color="black", label="largest")
    axes.axhline(total, color="tab:red", label="graph")
    axes.set(yscale="log", xlabel="hops", ylabel="nodes reached", xticks=hops, title=f"k-hop growth: {name}")
    axes.legend()
    out.mkdir(parents=True, exist_ok=True)
    path = out / "khop_growth.png"
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return Figure(path, f"Nodes within h hops of the seeds ({name}; offline). Paper: Figure 3(a), Figure 5.")
