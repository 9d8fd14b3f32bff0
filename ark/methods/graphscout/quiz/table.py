"""The distribution of a GraphScout quiz: questions per answer type × difficulty × pattern, mean hops, mean set
sizes and the leakage guard's drops, as rows for a terminal table or Markdown for the README."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .objective import ALL_PATTERNS, ANSWER_TYPES, DIFFICULTIES


@dataclass(frozen=True)
class DistributionRow:
    answer_type: str
    difficulty: str
    per_pattern: dict[str, int]
    total: int
    mean_hops: float
    mean_set_size: float | None  # set questions only
    mean_clues: float


def distribution(records: list[dict[str, Any]]) -> list[DistributionRow]:
    """One row per (answer type, difficulty) present, then a total row (``answer_type="all"``)."""
    rows = []
    groups = [((a, d), [r for r in records if r["answer_type"] == a and r["difficulty"] == d])
              for a in ANSWER_TYPES for d in DIFFICULTIES]
    groups.append((("all", ""), records))
    for (answer_type, difficulty), group in groups:
        if not group:
            continue
        sets = [len(r["answer_ids"]) for r in group if r["answer_type"] == "set"]
        rows.append(DistributionRow(
            answer_type, difficulty, {p: sum(r["pattern"] == p for r in group) for p in ALL_PATTERNS}, len(group),
            sum(r["hops"] for r in group) / len(group), sum(sets) / len(sets) if sets else None,
            sum(len(r["clue_ids"]) for r in group) / len(group)))
    return rows


def distribution_markdown(records: list[dict[str, Any]], guard_dropped: int | None = None,
                          test_nodes: int | None = None) -> str:
    """The distribution as a Markdown table (and the guard's drops below it)."""
    head = ["answer type", "difficulty", *ALL_PATTERNS, "total", "mean hops", "mean set size", "mean clues"]
    lines = ["| " + " | ".join(h.replace("<", "⟨").replace(">", "⟩") for h in head) + " |",
             "|" + "|".join(["---"] * 2 + ["---:"] * (len(head) - 2)) + "|"]
    for row in distribution(records):
        cells = [row.answer_type if row.answer_type != "all" else "**all**", row.difficulty,
                 *(str(row.per_pattern[p]) for p in ALL_PATTERNS), str(row.total), f"{row.mean_hops:.2f}",
                 "" if row.mean_set_size is None else f"{row.mean_set_size:.2f}", f"{row.mean_clues:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    if guard_dropped is not None:
        lines.append("")
        nodes = f" (clues touching any of the {test_nodes:,} nodes of the test questions)" if test_nodes else ""
        lines.append(f"Leakage guard: {guard_dropped:,} training questions dropped{nodes}.")
    return "\n".join(lines)
