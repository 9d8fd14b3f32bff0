"""GraphScout's secondary tables as data (seed text 004, Ying et al.), beside Table 1 in :mod:`.graphscout_table`.

The numbers are copied from the paper and never measured here; tests/experiments/test_graphscout_paper_values.py
reads each cell back from the seed text. Table 2 (ablations): (QwenScore, F1) on GRBench Healthcare and
Literature. Table 5 (failed tool calls): percent of failed calls before and after training, per domain.
Figures 3-8 are plots: the paper prints no numbers for them, so none are carried.
"""

from __future__ import annotations

from dataclasses import dataclass

from .graphscout_table import DOMAINS

TABLE_2_DOMAINS = ("Healthcare", "Literature")


@dataclass(frozen=True)
class AblationRow:
    """A Table 2 row: our label, the label as the paper prints it, and (QwenScore, F1) per Table 2 domain."""

    label: str
    printed: str
    reported: tuple[tuple[float, float], tuple[float, float]]


# Table 2: Ablation study of GraphScout ("rw" denotes random walk on knowledge graphs).
TABLE_2 = (
    AblationRow("GraphScout", "GraphScout", ((0.819, 0.855), (0.696, 0.646))),
    AblationRow("w/o Graph Solver", "w/o Graph Solver", ((0.211, 0.217), (0.210, 0.220))),
    AblationRow("w/o A_code", "w/o $\\mathcal{A}_{code}$", ((0.107, 0.101), (0.196, 0.148))),
    AblationRow("w/o r_clue", "w/o $r_{clue}$", ((0.785, 0.812), (0.667, 0.635))),
    AblationRow("rw Graph Quizzer", "rw Graph Quizzer", ((0.678, 0.705), (0.608, 0.571))),
)

# Table 5: Proportion of failed tool calls (percent), per domain in DOMAINS' order.
TABLE_5: dict[str, tuple[float, ...]] = {
    "w/o train": (63.73, 67.14, 61.48, 61.15, 72.20),
    "w/ train": (3.14, 5.80, 5.45, 6.61, 1.27),
}

PLOTTED = ("The paper plots this figure and prints no numbers for it: none are printed beside ours; its words are "
           "quoted instead.")


def ablation_row(label: str) -> AblationRow:
    """The Table 2 row called ``label`` (``KeyError`` for another)."""
    for row in TABLE_2:
        if row.label == label:
            return row
    raise KeyError(label)


def reported_failures(domain: str) -> tuple[float, float]:
    """Table 5's (w/o train, w/ train) failed-call percentages on ``domain``."""
    column = DOMAINS.index(domain)
    return TABLE_5["w/o train"][column], TABLE_5["w/ train"][column]
