"""How an agent's trace reads in the terminal: ``ark ask`` and ``ark trajectory show`` number the steps the same
way (a step's calls lettered under its number, "→ 0 nodes" where a call found nothing), and output that goes to a
pipe or a file is not wrapped at 80 columns; ``--width N`` wraps it at N."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.cells import cell_len
from typer.testing import CliRunner

from ark.cli.main import app
from tests.support.graphs import ONE_HOP, save_clinical_graph
from tests.support.openai_server import text_reply, tool_reply, turn_script

MARFAN_GENES_QUESTION = ONE_HOP[0]
COL3A1 = "NCBIGene:1281"
NOTHING = "qqxyzzy vvwwkk"  # matches no word of the graph
CALL_LINE = re.compile(r"^ +(\d+[a-z]*)\. (\(\w[\w ]*\)|\w+)(.*)$", re.MULTILINE)
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def graph_dir(tmp_path_factory) -> Path:
    return save_clinical_graph(tmp_path_factory.mktemp("graphs") / "clinical")


def run(*args: object, env: dict[str, str] | None = None):
    return CliRunner().invoke(app, [str(a) for a in args], env=env)


def calls_shown(stdout: str) -> list[tuple[str, str, str]]:
    """(label, tool name, the rest of the line) of every numbered line of a trace."""
    return [(label, name, rest.strip()) for label, name, rest in CALL_LINE.findall(stdout)]


def scripted_steps(graph_dir: Path) -> list:
    """Step 1: two searches, the first showing COL3A1, the second finding nothing; step 2: that answer and a call
    that fails; step 3: a reply without a tool call (corrected); step 4: finish."""
    from ark.graph import load_graph

    col3a1 = load_graph(graph_dir).index_of(COL3A1)
    return [
        tool_reply(("search_in_graph", {"query": "COL3A1 gene"}), ("search_in_graph", {"query": NOTHING})),
        tool_reply(("add_to_answer", {"answer_nodes": [{"node_index": col3a1, "reasoning": "scripted"}]}),
                   ("search_in_neighborhood", {"node_index": 10**6})),
        text_reply("I think I am done."),
        tool_reply(("finish", {})),
    ]


def test_ask_and_trajectory_show_number_steps_and_their_calls_the_same_way(graph_dir, openai_server, monkeypatch,
                                                                          tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    monkeypatch.setenv("COLUMNS", "250")
    openai_server.responder = turn_script(scripted_steps(graph_dir))
    saved = tmp_path / "runs.jsonl"
    asked = run("ask", graph_dir, MARFAN_GENES_QUESTION, "--base-url", openai_server.base_url, "--model", "m",
                "--set", "n_agents=1", "--trajectories", saved)
    assert asked.exit_code == 0, asked.output
    assert re.search(r"^Agent 0 · 4 steps · finish · [\d,]+ tokens$", asked.stdout, re.MULTILINE), asked.stdout
    shown = run("trajectory", "show", saved)
    assert shown.exit_code == 0, shown.output
    for output in (asked.stdout, shown.stdout):
        calls = calls_shown(output)
        assert [(label, name) for label, name, _ in calls] == [
            ("1a", "search_in_graph"), ("1b", "search_in_graph"), ("2a", "add_to_answer"),
            ("2b", "search_in_neighborhood"), ("3", "(no tool call)"), ("4", "finish")], output
        found, nothing, added, failed, corrected, finish = (rest for _, _, rest in calls)
        assert re.search(r"→ [1-9]\d* nodes?\b", found)
        assert f"(query={NOTHING}) → 0 nodes" in nothing
        assert added.startswith("(1 node) → 1 node")
        assert "(error" in failed and "→" not in failed
        assert "I think I am done." in corrected
        assert "→" not in finish  # finishing looks for no node
    assert "Agent 0 · 4 steps · finish" in shown.stdout


def test_piped_output_is_not_wrapped(graph_dir, monkeypatch, tmp_path):
    monkeypatch.delenv("COLUMNS", raising=False)
    question = MARFAN_GENES_QUESTION + " Answer with the genes, please, and nothing but the genes of it."
    saved = tmp_path / "runs.jsonl"
    asked = run("ask", graph_dir, question, "--offline", "--set", "n_agents=1", "--trajectories", saved)
    assert asked.exit_code == 0, asked.output
    [search] = [line for line in asked.stdout.splitlines() if "1a. search_in_graph(query=" in line]
    assert cell_len(search) > 80 and search.rstrip().endswith("nodes")  # whole, on one line
    assert f"Answer to: {question}" in asked.stdout
    shown = run("trajectory", "show", saved)
    assert shown.exit_code == 0, shown.output
    assert f"Question: {question}" in shown.stdout
    assert max(map(cell_len, shown.stdout.splitlines())) > 80
    assert max(map(cell_len, asked.stdout.splitlines() + shown.stdout.splitlines())) < 1000  # nothing padded


def test_the_command_piped_to_another_process_keeps_lines_whole(graph_dir):
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    question = MARFAN_GENES_QUESTION + " Name each gene of the graph that is linked to it, with its evidence."
    done = subprocess.run([sys.executable, "-m", "ark.cli.main", "ask", str(graph_dir), question, "--offline",
                           "--set", "n_agents=1"], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"Answer to: {question}\n" in done.stdout
    assert re.search(r"^ +1a\. search_in_graph\(query=.{40,}\) → \d+ nodes?$", done.stdout, re.MULTILINE)


def test_width_option_wraps_at_n_columns(graph_dir, tmp_path):
    saved = tmp_path / "runs.jsonl"
    asked = run("ask", graph_dir, MARFAN_GENES_QUESTION, "--offline", "--set", "n_agents=1", "--trajectories",
                saved, "--width", 60, env={"COLUMNS": "250"})
    assert asked.exit_code == 0, asked.output
    shown = run("trajectory", "show", saved, "--width", 60, env={"COLUMNS": "250"})
    assert shown.exit_code == 0, shown.output
    for output in (asked.stdout, shown.stdout):
        widths = [cell_len(line) for line in output.splitlines()]
        assert 55 <= max(widths) <= 60, widths
    narrow = run("ask", graph_dir, MARFAN_GENES_QUESTION, "--offline", "--width", 5)
    assert narrow.exit_code == 2 and "--width" in narrow.output
