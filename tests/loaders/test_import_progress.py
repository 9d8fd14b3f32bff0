"""Progress of a first build (#45): importing the synthetic MAG-shaped graph draws bars that end at 100% with their
counts (the node rows, then the steps: edges, graph, files), and so does its BM25 index build; off a terminal no
bar is drawn; the first use of a built-in graph says once what it builds and why."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from ark.cli.main import app
from ark.graph import load_graph
from ark.index import open_index
from ark.progress import console_for_bars
from benchmarks.synthetic_mag import MagShape, generate
from tests.conftest import isolate_user_env
from tests.support.graphs import build_small_graph

SCALE = 0.0005  # 350 papers, 552 authors, 4 institutions, 30 fields
ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def final_bars(output: str) -> dict[str, str]:
    """Each bar's description -> the last state drawn of it (escape codes removed)."""
    plain = ESCAPES.sub("", output).replace("\r", "\n")
    last: dict[str, str] = {}
    for line in plain.splitlines():
        if "━" in line:
            last[line.split("━")[0].strip()] = " ".join(line.split("━")[-1].split())
    return last


def terminal() -> tuple[Console, io.StringIO]:
    sink = io.StringIO()
    return Console(file=sink, force_terminal=True, width=160, color_system=None), sink


@pytest.fixture
def mag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate_user_env(monkeypatch, tmp_path / "home")
    generate(tmp_path / "src", scale=SCALE, seed=1)
    return tmp_path


def test_importing_the_synthetic_mag_graph_shows_bars_that_reach_100_percent(mag: Path) -> None:
    shape = MagShape().scaled(SCALE)
    nodes = shape.papers + shape.authors + shape.institutions + shape.fields
    console, sink = terminal()
    with console_for_bars(console):
        result = CliRunner().invoke(app, ["graph", "import", "parquet", str(mag / "src"), "--name", "smag"])
        assert result.exit_code == 0, result.output
        graph = load_graph(mag / "home" / "graphs" / "smag")
        open_index(graph, "bm25", progress=True)
    bars = final_bars(sink.getvalue())
    assert bars["Reading nodes.parquet"].startswith(f"{nodes}/{nodes} 100%")
    assert bars["Building graph 'smag' (edges, graph, files)"].startswith("3/3 100%")
    indexing = next(v for k, v in bars.items() if "indexing" in k)
    assert indexing.startswith(f"{nodes}/{nodes} 100%") and "ETA 0:00:00" in indexing


def test_off_a_terminal_the_import_draws_no_bar(mag: Path) -> None:
    sink = io.StringIO()
    with console_for_bars(Console(file=sink, force_terminal=False)):
        result = CliRunner().invoke(app, ["graph", "import", "parquet", str(mag / "src"), "--name", "smag"])
    assert result.exit_code == 0, result.output
    assert "━" not in sink.getvalue() and "━" not in result.output


def test_the_first_ask_says_once_what_it_builds_and_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ark.loaders import registry

    isolate_user_env(monkeypatch, tmp_path / "home")
    monkeypatch.setitem(registry.BUILDERS, "small", build_small_graph)
    first = CliRunner().invoke(app, ["ask", "small", "seizures"])
    assert first.exit_code == 0, first.output
    said = [line for line in first.stderr.splitlines() if "Building graph 'small'" in line]
    assert len(said) == 1
    assert f"into {tmp_path / 'home' / 'graphs' / 'small'}" in said[0]
    assert "(first use; once: later runs open the saved graph at once)" in said[0]
    again = CliRunner().invoke(app, ["ask", "small", "seizures"])
    assert again.exit_code == 0 and "Building graph" not in again.stderr and "built in" not in again.stderr
