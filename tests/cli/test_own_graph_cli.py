"""A user's own graph, first class (#45): imported from the shipped films example it answers to its name in every
command that takes GRAPH, ``ark graph list`` shows it, a re-import never loses its versions silently, and the
import says which columns became the name, the text and the properties."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from ark.cli.main import app
from tests.conftest import USER_ENV_KEYS, isolate_user_env

REPO = Path(__file__).resolve().parents[2]
FILMS = REPO / "examples" / "films"
QUESTION = "Which film is about rival magicians?"


def run_ark(home: Path, *args: object) -> subprocess.CompletedProcess[str]:
    """``ark ARGS`` as a user runs it: a new process, this checkout's code, ``ARK_HOME`` at ``home``, no model."""
    env = {k: v for k, v in os.environ.items() if k not in USER_ENV_KEYS}
    env.update(ARK_HOME=str(home), PYTHONPATH=str(REPO), COLUMNS="250")
    return subprocess.run([sys.executable, "-m", "ark.cli.main", *map(str, args)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)


def list_row(home: Path, name: str) -> list[str]:
    """The cells of ``name``'s row of ``ark graph list``."""
    listed = run_ark(home, "graph", "list")
    assert listed.returncode == 0, listed.stderr
    rows = [[c.strip() for c in line.strip("│ ").split("│")] for line in listed.stdout.splitlines()
            if line.startswith("│")]
    return next(row for row in rows if row[0] == name)


def test_films_by_name_from_a_fresh_home(tmp_path: Path) -> None:
    home = tmp_path / "fresh-home"
    imported = run_ark(home, "graph", "import", "csv", "examples/films", "--name", "films")
    assert imported.returncode == 0, imported.stderr
    assert "as 'films'" in imported.stdout
    asked = run_ark(home, "ask", "films", QUESTION, "--json")
    assert asked.returncode == 0, asked.stderr
    ranked = json.loads(asked.stdout)["ranked"]
    assert ranked[0]["name"] == "The Prestige" and ranked[0]["node_id"] == "f1"
    table = run_ark(home, "ask", "films", QUESTION)
    assert table.returncode == 0 and "│ 1 │ f1 │ The Prestige │ film" in table.stdout

    cells = list_row(home, "films")
    assert cells[:6] == ["films", "imported", str(home / "graphs" / "films"), "37", "41", "0"]
    assert cells[6][:4].isdigit() and ":" in cells[6]  # when it was built

    delete = tmp_path / "delete.txt"
    delete.write_text("f4\n", encoding="utf-8")
    assert run_ark(home, "graph", "update", "films", "--delete", delete).returncode == 0
    again = run_ark(home, "graph", "import", "csv", "examples/films", "--name", "films")
    assert again.returncode == 1
    assert "version(s) 1" in again.stderr and "--replace" in again.stderr
    assert list_row(home, "films")[3:6] == ["36", "38", "1"]  # version 1 kept (f4 and its 3 edges deleted)

    replaced = run_ark(home, "graph", "import", "csv", "examples/films", "--name", "films", "--replace")
    assert replaced.returncode == 0, replaced.stderr
    assert list_row(home, "films")[3:6] == ["37", "41", "0"]


@pytest.fixture
def films_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh ARK_HOME holding the films example imported as ``films``."""
    isolate_user_env(monkeypatch, tmp_path / "home", columns=250)
    result = ark("graph", "import", "csv", FILMS, "--name", "films")
    assert result.exit_code == 0, result.output
    return tmp_path / "home"


def ark(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_the_import_says_per_type_what_each_column_became(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_user_env(monkeypatch, tmp_path / "home", columns=250)
    result = ark("graph", "import", "csv", FILMS, "--name", "films")
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if " nodes): " in line]
    assert lines == [
        "film (15 nodes): name from name; text from name, description; properties: year, description",
        "person (16 nodes): name from name; text from name, description; properties: description",
        "genre (6 nodes): name from name; text from name, description; properties: description",
    ]
    chosen = ark("graph", "import", "csv", FILMS, "--name", "films2", "--name-column", "id", "--text-columns",
                 "year")
    assert chosen.exit_code == 0, chosen.output
    assert "film (15 nodes): name from id; text from id, year; properties: name, year, description" in chosen.stdout


def write_queries(path: Path) -> Path:
    rows = [{"id": "q1", "query": QUESTION, "answer_ids": ["f1"]},
            {"id": "q2", "query": "Which film plants an idea in a dream?", "answer_ids": ["f2"]}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def free_port_in_use() -> socket.socket:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    return taken


# Each command that takes GRAPH, run with the registered name: (argv after the name, what its output shows once the
# graph was opened, an extra it needs). {q}: a query file, {tmp}: a scratch folder, {port}: a port in use.
GRAPH_COMMANDS = {
    "ask": (["ask", "films", QUESTION], "The Prestige", None),
    "retrieve": (["retrieve", "films", "-q", "{q}", "-m", "bm25", "--out", "{tmp}/r.jsonl"], "2 new", None),
    "eval": (["eval", "films", "-q", "{q}", "-m", "bm25", "--run-dir", "{tmp}/run"], "│ overall │ 2 │ 100.00 │", None),
    "quiz": (["quiz", "films", "--out", "{tmp}/quiz.jsonl", "--n", "3"], "Wrote", None),
    "experiment": (["experiment", "fusion", "films", "-q", "{q}", "--out", "{tmp}/x"], "Report:", "matplotlib"),
    "graph info": (["graph", "info", "films"], "37 nodes, 41 edges", None),
    "graph verify": (["graph", "verify", "films"], "ok: every checksum matches", None),
    "graph update": (["graph", "update", "films", "--delete", "{tmp}/delete.txt"], "version 1", None),
    "graph compact": (["graph", "compact", "films"], "nothing to compact", None),
    "serve": (["serve", "films", "--port", "{port}"], "cannot listen on 127.0.0.1:{port}", "fastapi"),
    "mcp": (["mcp", "films", "--transport", "http", "--port", "{port}"], "cannot listen on 127.0.0.1:{port}", "mcp"),
}
# Training commands need a model or an extra to go on; they are run until they have opened the graph (the opening
# is stopped there, naming the folder the name resolved to).
OPENED_THEN_STOPPED = {
    "train mor": ["train", "mor", "films", "-q", "{q}", "--out", "{tmp}/mor"],
    "train mfar": ["train", "mfar", "films", "-q", "{q}", "--out", "{tmp}/mfar"],
    "train avatar": ["train", "avatar", "films", "-q", "{q}", "--out", "{tmp}/avatar", "--model", "m", "--base-url",
                     "http://127.0.0.1:9/v1"],
    "train seeder": ["train", "seeder", "films", "-q", "{q}", "--out", "{tmp}/seeder"],
    "train graphscout": ["train", "graphscout", "films", "--quiz", "{q}", "--base", "{tmp}", "--out", "{tmp}/gs"],
    "distill export": ["distill", "export", "films", "-q", "{q}", "--out", "{tmp}/distill"],
}


def filled(argv: list[str], tmp: Path, port: int) -> list[str]:
    queries = write_queries(tmp / "q.jsonl")
    (tmp / "delete.txt").write_text("f4\n", encoding="utf-8")
    return [a.format(q=queries, tmp=tmp, port=port) for a in argv]


@pytest.mark.parametrize("command", list(GRAPH_COMMANDS))
def test_every_command_that_takes_graph_accepts_a_registered_name(films_home: Path, tmp_path: Path,
                                                                  command: str) -> None:
    argv, shown, extra = GRAPH_COMMANDS[command]
    if extra:
        pytest.importorskip(extra)
    taken = free_port_in_use()
    try:
        port = taken.getsockname()[1]
        result = ark(*filled(argv, tmp_path, port))
    finally:
        taken.close()
    output = " ".join((result.stdout + result.stderr).split())
    assert "neither a built-in graph" not in output
    assert shown.format(port=port) in output, output[-2000:]
    misspelt = ark(*filled(argv, tmp_path, 0)[: argv.index("films")], "flims", *filled(argv, tmp_path, 0)[
        argv.index("films") + 1:])
    assert misspelt.exit_code == 2 and "(did you mean 'films'?)" in misspelt.stderr


@pytest.mark.parametrize("command", list(OPENED_THEN_STOPPED))
def test_training_commands_open_a_registered_name(films_home: Path, tmp_path: Path, command: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from ark.loaders import registry

    def open_and_stop(name_or_path: object, status: object = None) -> object:
        raise ValueError(f"stopped after resolving {name_or_path} to {registry.graph_location(str(name_or_path))}")

    monkeypatch.setattr(registry, "open_graph", open_and_stop)
    result = ark(*filled(OPENED_THEN_STOPPED[command], tmp_path, 0))
    output = " ".join(result.stderr.split())
    if "stopped after resolving" not in output and ("pip install" in output or "needs" in output):
        pytest.skip(f"{command} needs an extra that is not installed: {output[:200]}")
    assert f"stopped after resolving films to {films_home / 'graphs' / 'films'}" in output, output


def graph_commands(group: Any, ctx: Any, prefix: str = "") -> list[str]:
    """Every command (by its words) with a GRAPH argument, found by walking the command tree."""
    found = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None:
            continue
        words = f"{prefix} {name}".strip()
        if any(p.param_type_name == "argument" and p.name in ("graph", "graph_name") for p in command.params):
            found.append(words)  # a group may take GRAPH itself (ark eval GRAPH; ark eval compare RUN...)
        if hasattr(command, "list_commands"):
            found += graph_commands(command, ctx, words)
    return found


def test_every_graph_command_is_covered_above() -> None:
    group = typer.main.get_command(app)
    with group.make_context("ark", ["ask", "--help"], resilient_parsing=True) as ctx:
        found = set(graph_commands(group, ctx))
    assert {"ask", "eval", "graph info", "train mor"} <= found  # the walk sees commands at every depth
    assert found - set(GRAPH_COMMANDS) - set(OPENED_THEN_STOPPED) == set()
