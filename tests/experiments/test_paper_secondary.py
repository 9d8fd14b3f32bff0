"""The papers' tables carried as data, read back cell by cell from the seed texts (shared/seeds: 000 ARK, 002
SeedER): SeedER's Table 6 and ARK's Table 5 (the secondary tables the experiments print beside ours), and the
Table 1s the paper-table command prints. A cell copied wrong, a row missing or a row added fails here."""

from __future__ import annotations

import re

import pytest

from ark.experiments.paper_secondary import (
    ARK_TABLE_5,
    ARK_TABLE_5_BENCHMARKS,
    SEEDER_TABLE_6,
    SEEDER_TABLE_6_LABELS,
)
from ark.experiments.paper_tables import ARK_TABLE_1, SEEDER_TABLE_1
from tests.methods.test_paper_preset import SEEDS

_MARKUP = re.compile(r"</?(?:u|b|i)>|\*\*")


def seed_lines(prefix: str, start: str, end: str) -> list[str]:
    """The lines of seed ``prefix`` from the first ``start`` line on, up to the next line holding ``end``."""
    found = sorted(SEEDS.glob(f"{prefix}*.txt"))
    if not found:
        pytest.skip(f"the papers' text is not at {SEEDS} (set ARK_SHARED)")
    lines = found[0].read_text(encoding="utf-8").splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith(start))
    last = next(i for i in range(first + 1, len(lines)) if end in lines[i])
    return lines[first:last]


def cells(lines: list[str], label: str) -> list[float]:
    """The numbers on the row of ``label`` (markup such as <u>0.101</u> stripped)."""
    rows = [line for line in lines if line.strip().split("\t")[0] == label]
    assert len(rows) == 1, f"{len(rows)} rows labelled {label!r}"
    parts = [_MARKUP.sub("", part).strip() for part in rows[0].split("\t")]
    return [float(part) for part in parts if re.fullmatch(r"\d+\.\d+", part)]


def row_labels(lines: list[str]) -> list[str]:
    return [_MARKUP.sub("", line.strip().split("\t")[0]) for line in lines[1:] if re.search(r"\t\d+\.\d+", line)]


def test_seeder_table_6_cell_by_cell():
    lines = seed_lines("002_", "Table 6: **Validation–test", "Table 6 shows")
    assert "Metric\tPearson r\tSpearman ρ\tKendall τ" in lines
    assert row_labels(lines) == [SEEDER_TABLE_6_LABELS[m] for m in SEEDER_TABLE_6]
    for metric, ours in SEEDER_TABLE_6.items():
        assert cells(lines, SEEDER_TABLE_6_LABELS[metric]) == list(ours), metric


def test_ark_table_5_cell_by_cell():
    lines = seed_lines("000_", "Method\tAMAZON\t\t\t\tMAG", "Table 5: Retrieval performance")
    assert lines[1].split() == ["Hit@1", "Hit@5", "R@20", "MRR"] * 3
    assert row_labels(lines) == list(ARK_TABLE_5)
    for label, per_graph in ARK_TABLE_5.items():
        ours = [v for bench in ARK_TABLE_5_BENCHMARKS for v in per_graph[bench]]
        assert cells(lines, label) == ours, label


@pytest.mark.parametrize("table, prefix, start, end", [
    (ARK_TABLE_1, "000_", "Category\tMethod\tAMAZON", "Table 1: Retrieval performance"),
    (SEEDER_TABLE_1, "002_", "Dense Retriever\t", "Table 2: STARK-PRIME results"),
])
def test_table_1_cell_by_cell(table, prefix, start, end):
    lines = seed_lines(prefix, start, end)
    names = {"SEEDER": "SEEDER (ours)"}
    for row in table.rows:
        ours = [v for bench in table.benchmarks for v in row.reported[bench]]
        assert cells(lines, names.get(row.label, row.label)) == ours, row.label
