"""An experiment's report folder: ``report.md`` (Markdown tables, the plots, how it was run), ``results.json`` (the same
tables as data) and the PNG plots, each written whole (atomically)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..storage.atomic import atomic_write_text


@dataclass
class Table:
    """A Markdown table: a caption, column names and rows of cells (already formatted)."""

    name: str
    caption: str
    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)

    def markdown(self) -> str:
        numeric = [bool(self.rows) and all(_is_number(row[i]) for row in self.rows) for i in range(len(self.columns))]
        lines = ["| " + " | ".join(self.columns) + " |",
                 "|" + "|".join("---:" if right else "---" for right in numeric) + "|"]
        lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in self.rows]
        return f"**{self.caption}**\n\n" + "\n".join(lines) + "\n"


def _is_number(cell: Any) -> bool:
    try:
        float(str(cell).rstrip("%").split(" ")[0])
    except ValueError:
        return False
    return True


@dataclass
class Figure:
    """A PNG plot in the report folder and what it shows."""

    path: Path
    caption: str


@dataclass
class Report:
    """What an experiment writes: its title, the setting, tables, figures and notes."""

    experiment: str
    title: str
    setting: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)

    def markdown(self) -> str:
        parts = [f"# {self.title}", ""]
        parts += [f"- {line}" for line in self.setting] + [""]
        for table in self.tables:
            parts += [table.markdown()]
        for figure in self.figures:
            parts += [f"![{figure.caption}]({figure.path.name})", "", f"*{figure.caption}*", ""]
        if self.notes:
            parts += ["## Notes", ""] + [f"- {note}" for note in self.notes] + [""]
        if self.runs:
            parts += ["## Run folders", ""] + [f"- {r['label']}: `{r['folder']}`" for r in self.runs] + [""]
        return "\n".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "experiment": self.experiment,
            "title": self.title,
            "setting": self.setting,
            "tables": {t.name: {"caption": t.caption, "columns": t.columns, "rows": t.rows} for t in self.tables},
            "figures": [{"file": f.path.name, "caption": f.caption} for f in self.figures],
            "notes": self.notes,
            "runs": self.runs,
        }

    def write(self, directory: Path) -> Path:
        """Write ``report.md`` and ``results.json`` into ``directory`` (the figures are already there)."""
        directory.mkdir(parents=True, exist_ok=True)
        atomic_write_text(directory / "results.json", json.dumps(self.to_dict(), indent=1) + "\n")
        return atomic_write_text(directory / "report.md", self.markdown())


def pct(value: float) -> str:
    """A metric as the papers print it: ×100 with two decimals."""
    return f"{100 * value:.2f}"


def truncation_label(truncate: int | None) -> str:
    return f"top {truncate}" if truncate else "none"


def metric_columns(metrics: Sequence[str]) -> list[str]:
    from ..eval.scoring import METRIC_LABELS

    return [METRIC_LABELS[m] for m in metrics]
