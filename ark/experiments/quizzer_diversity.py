"""The diversity of a GraphScout quiz (``ark experiment quizzer-diversity GRAPH --queries QUIZ``): GraphScout's
Figure 7 (shares of difficulty levels, question patterns and answer types) and Figure 8 (question token lengths and
clue nodes per question), from the quiz file alone (no method runs, no model).

The paper's Figure 7 labels come from an LLM judging each question afresh (DeepSeek-Chat, Appendix B.1); ours are
the labels the quizzer recorded with each question (its objective, or what the random-walk quizzer read off the
walk): not a post-hoc judgment, and said so. Question tokens here are words and punctuation marks (a tokenizer-free
count, labelled). The paper plots both figures and prints no numbers.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .graphscout_paper import PLOTTED
from .report import Figure, Report, Table

PAPER_SAYS = ("Appendix B.1 (Figure 7): \"the distributions of question difficulty and answer type are relatively "
              "balanced ... the distribution of question structural patterns is more uneven, with hybrid questions "
              "accounting for a larger proportion\"; Figure 8: \"The token length distribution exhibits substantial "
              "variation with a clear long-tail pattern, while the number of clue nodes spans from simple, "
              "single-clue questions to instances involving multiple reasoning cues.\"")
TOKEN = re.compile(r"\w+|[^\w\s]")


def pattern_of(record: dict[str, Any]) -> str:
    """The question's structural pattern; two or more parts make it "hybrid" (GraphScout §3.3.1)."""
    parts = record.get("pattern_parts") or []
    return "hybrid" if len(parts) > 1 else str(record.get("pattern") or "unknown")


def question_tokens(text: str) -> int:
    return len(TOKEN.findall(text))


def shares(records: Sequence[dict[str, Any]]) -> dict[str, Counter[str]]:
    """Counts per difficulty level, pattern and answer type."""
    return {"difficulty": Counter(str(r.get("difficulty") or "unknown") for r in records),
            "pattern": Counter(pattern_of(r) for r in records),
            "answer type": Counter(str(r.get("answer_type") or "unknown") for r in records)}


def _quantiles(values: Sequence[int]) -> list[str]:
    ordered = sorted(values)
    pick = [ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))] for q in (0.0, 0.5, 0.9, 1.0)]
    return [f"{sum(ordered) / len(ordered):.1f}", *(str(v) for v in pick)]


def diversity_report(records: Sequence[dict[str, Any]], *, graph_name: str, source: str, out: Path, charts: bool,
                     command: str | None = None) -> Report:
    """The report (two tables; with ``charts`` Figure 7's pies and Figure 8's histograms as PNGs in ``out``)."""
    if not records:
        raise ValueError("quizzer-diversity needs a quiz with at least one question")
    quizzers = sorted({str(r.get("quizzer") or "unknown") for r in records})
    report = Report("quizzer-diversity", "GraphScout Figures 7-8: diversity of the quizzer's questions", setting=[
        f"graph: {graph_name}; quiz: `{source}` ({len(records)} questions; quizzer: {', '.join(quizzers)})",
        "labels: the quizzer's own recorded labels (the paper's Figure 7: an LLM judge's de-conditioned labels)",
        "question tokens: words and punctuation marks (no model tokenizer); offline, no model",
        *([f"command: `{command}`"] if command else [])], notes=[PAPER_SAYS + " " + PLOTTED])
    counted = shares(records)
    table = Table("shares", "Figure 7: share of the questions per category", ["Dimension", "Category", "n", "share",
                                                                                  "paper"])
    for dimension, counts in counted.items():
        for category, n in counts.most_common():
            shown = category.replace("<", "⟨").replace(">", "⟩")  # Markdown would read <h,r,t> as a tag
            table.rows.append([dimension, shown, str(n), f"{100 * n / len(records):.1f}%", "plotted, no number"])
    lengths = [question_tokens(str(r.get("query", ""))) for r in records]
    clues = [len(r.get("clue_ids") or []) for r in records]
    spread = Table("spread", "Figure 8: question tokens and clue nodes per question",
                   ["Quantity", "mean", "min", "median", "90th pct", "max", "paper"],
                   [["question tokens", *_quantiles(lengths), "plotted, no number"],
                    ["clue nodes", *_quantiles(clues), "plotted, no number"]])
    report.tables += [table, spread]
    if charts:
        report.figures += [_pies(counted, out), _histograms(lengths, clues, out)]
    return report


def _pies(counted: dict[str, Counter[str]], out: Path) -> Figure:
    from ..plots import pyplot, save_png

    plt = pyplot()
    figure, axes = plt.subplots(1, 3, figsize=(10, 3.4))
    for axis, (dimension, counts) in zip(axes, counted.items(), strict=True):
        labels, sizes = zip(*counts.most_common(), strict=True)
        axis.pie(sizes, labels=labels, autopct="%1.0f%%", textprops={"fontsize": 7})
        axis.set_title(dimension)
    figure.suptitle("The quizzer's recorded labels (offline, no LLM judge)", fontsize=9)
    path = save_png(figure, out / "quizzer_shares.png")
    return Figure(path, "Shares of difficulty, pattern and answer type (the quizzer's labels; paper: Figure 7)")


def _histograms(lengths: Sequence[int], clues: Sequence[int], out: Path) -> Figure:
    from ..plots import pyplot, save_png

    plt = pyplot()
    figure, axes = plt.subplots(1, 2, figsize=(8, 3.2))
    axes[0].hist(lengths, bins=min(30, max(5, len(set(lengths)))), color="tab:blue")
    axes[0].set(xlabel="question tokens (words and punctuation)", ylabel="questions", title="(a) question length")
    axes[1].hist(clues, bins=range(min(clues), max(clues) + 2), color="tab:green", align="left")
    axes[1].set(xlabel="clue nodes per question", ylabel="questions", title="(b) clue nodes")
    figure.suptitle("Quiz questions (offline quizzer, no model)", fontsize=9)
    path = save_png(figure, out / "quizzer_spread.png")
    return Figure(path, "Question tokens and clue nodes per question (paper: Figure 8)")
