"""GraphScout's carried paper values against the seed text (shared/seeds/004_*): every cell of Table 2 (ablations)
and Table 5 (failed tool calls) as ark.experiments.graphscout_paper holds it, and Table 1 as graphscout_table
holds it, is read back from the table's own lines in the paper (tab-separated, bold markup stripped)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from ark.experiments.graphscout_paper import TABLE_2, TABLE_2_DOMAINS, TABLE_5
from ark.experiments.graphscout_table import DOMAINS, TABLE_1

SEEDS = Path(os.environ.get("ARK_SHARED", Path(__file__).parents[3] / "shared")) / "seeds"


@pytest.fixture(scope="module")
def lines() -> list[str]:
    found = sorted(SEEDS.glob("004_*.txt"))
    if not found:
        pytest.skip(f"GraphScout's text is not at {SEEDS} (set ARK_SHARED)")
    return found[0].read_text(encoding="utf-8").splitlines()


def table_lines(lines: list[str], caption: str) -> list[list[str]]:
    """The tab-separated lines after the caption up to the next blank line after the table, split into cells."""
    start = next(i for i, line in enumerate(lines) if caption in line)
    rows, seen = [], False
    for line in lines[start + 1:]:
        if not line.strip():
            if seen:
                break
            continue
        seen = True
        rows.append([re.sub(r"</?[bu]>", "", cell).strip() for cell in line.split("\t")])
    return rows


def number(cell: str) -> float:
    return float(cell.rstrip("%"))


def test_table_2_cell_by_cell(lines):
    rows = table_lines(lines, "Table 2: Ablation study of GraphScout")
    assert [c for c in rows[0] if c] == list(TABLE_2_DOMAINS) and rows[1][1:] == ["QwenScore", "F1"] * 2
    body = {row[0]: row[1:] for row in rows[2:]}
    assert list(body) == [row.printed for row in TABLE_2]  # every row, in the paper's order
    for row in TABLE_2:
        printed = [number(cell) for cell in body[row.printed] if cell]
        assert printed == [value for pair in row.reported for value in pair], row.label


def test_table_5_cell_by_cell(lines):
    rows = table_lines(lines, "Table 5: Proportion of failed tool calls")
    assert rows[0][1:] == list(DOMAINS)
    body = {row[0]: [number(cell) for cell in row[1:]] for row in rows[1:]}
    assert body == {label: list(values) for label, values in TABLE_5.items()}


def test_table_1_cell_by_cell(lines):
    rows = table_lines(lines, "Table 1: Performance Comparison on GRBENCH")
    method = None
    printed: dict[tuple[str, str], list[float]] = {}
    for row in rows[2:]:
        if row[0] == "Relative Improvement":
            break
        method = row[0] or method
        printed[(str(method), row[1])] = [number(cell) for cell in row[2:] if cell]
    carried = {(m, b): [v for pair in cells for v in pair]
               for m, backbones in TABLE_1.items() for b, cells in backbones.items()}
    assert printed == carried
