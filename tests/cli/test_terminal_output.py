"""Nothing from a graph, a model or code output reaches the terminal raw: control characters (OSC 52 clipboard
writes, screen clears, 8-bit CSI, bidirectional overrides) are shown escaped and rich markup in names is shown as
text, by ``ark graph info``, ``ark ask`` (table, trace and --json) and ``ark trajectory show``; graph files that
cannot be read give one line naming the file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ark.cli.main import app

CLIPBOARD = "\x1b]52;c;ZXZpbA==\x07"
HOSTILE = {
    "disease": f"Marfan syndrome {CLIPBOARD}[bold red]alarm[/]",
    "gene": "FBN1 \x1b[2J\x1b[H\x9b31m\u202eevil",
    "type": "disease\x1b[5m",
    "relation": "associated[/]\x1b]0;title\x07gene",
}
RAW = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]")  # what must never be printed as it is


def run(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


pytestmark = pytest.mark.usefixtures("isolated_env")  # tests/conftest.py: own ARK_HOME, no LLM variables


@pytest.fixture
def hostile_graph(tmp_path) -> Path:
    source = tmp_path / "source"
    source.mkdir()
    nodes = [{"id": "D:1", "name": HOSTILE["disease"], "type": "disease",
              "properties": {"description": f"A disorder of connective tissue {CLIPBOARD}"}},
             {"id": "G:1", "name": HOSTILE["gene"], "type": "gene", "properties": {"symbol": "FBN1"}},
             {"id": "X:1", "name": "odd", "type": HOSTILE["type"]}]
    (source / "nodes.jsonl").write_text("".join(json.dumps(n) + "\n" for n in nodes), encoding="utf-8")
    edges = [{"from": "D:1", "to": "G:1", "type": "associated_gene"},
             {"from": "X:1", "to": "G:1", "type": HOSTILE["relation"]}]
    (source / "edges.jsonl").write_text("".join(json.dumps(e) + "\n" for e in edges), encoding="utf-8")
    out = tmp_path / "graph"
    done = run("graph", "import", "parquet", source, "--out", out)
    assert done.exit_code == 0, done.output
    return out


def assert_escaped(output: str) -> None:
    assert not RAW.search(output), repr(RAW.search(output).group())
    assert "\\x1b" in output


def test_graph_info_shows_hostile_names_escaped(hostile_graph):
    done = run("graph", "info", hostile_graph)
    assert done.exit_code == 0, done.output
    assert_escaped(done.output)
    assert "disease\\x1b[5m" in done.output and "associated[/]\\x1b]0;title" in done.output  # (rich drops BEL)


def test_ask_table_trace_json_and_trajectory_show_escape_hostile_text(hostile_graph, tmp_path):
    table = run("ask", hostile_graph, "FBN1 Marfan syndrome", "-m", "bm25")
    assert table.exit_code == 0, table.output
    assert_escaped(table.output)
    assert "FBN1 \\x1b[2J\\x1b[H\\x9b31m\\u202eevil" in table.output and "[bold red]alarm[/]" in table.output
    saved = tmp_path / "runs.jsonl"
    traced = run("ask", hostile_graph, "Which gene is linked to Marfan syndrome?", "--offline", "--trajectories",
                 saved, "--set", "n_agents=1")
    assert traced.exit_code == 0 and not RAW.search(traced.output), traced.output
    shown = run("trajectory", "show", saved)
    assert shown.exit_code == 0, shown.output
    assert_escaped(shown.output)
    assert "[bold red]alarm[/]" in shown.output
    as_json = run("ask", hostile_graph, "FBN1 Marfan syndrome", "-m", "bm25", "--json")
    assert as_json.exit_code == 0 and not RAW.search(as_json.stdout)
    record = json.loads(as_json.stdout)
    assert HOSTILE["gene"] in {node["name"] for node in record["ranked"]}  # the JSON itself keeps the true text


def test_escape_is_a_whitelist():
    from ark.text import json_terminal_safe, terminal_safe

    assert terminal_safe("plain text, accents é, 漢字, emoji 😀, tab\tand\nnewline") == \
        "plain text, accents é, 漢字, emoji 😀, tab\tand\nnewline"
    assert terminal_safe(CLIPBOARD) == "\\x1b]52;c;ZXZpbA==\\x07"
    assert terminal_safe("a\u2028b\u200fc\x00d\x7f", keep="") == "a\\u2028b\\u200fc\\x00d\\x7f"
    assert terminal_safe("line\nbreak", keep="") == "line\\nbreak"
    text = "every control " + "".join(map(chr, range(0x20))) + "".join(map(chr, range(0x7f, 0xa0)))
    assert not RAW.search(terminal_safe(text, keep=""))
    encoded = json.dumps({"name": HOSTILE["gene"] + "\u2029"}, ensure_ascii=False)
    safe = json_terminal_safe(encoded)
    assert not RAW.search(safe) and json.loads(safe) == json.loads(encoded)


def test_unreadable_graph_files_give_one_line_naming_the_file(tmp_path):
    deep = tmp_path / "deep"
    deep.mkdir()
    nested = "[" * 20_000 + "]" * 20_000
    (deep / "nodes.jsonl").write_text('{"id": "a", "name": "A", "type": "t"}\n'
                                      '{"id": "b", "name": "B", "type": "t", "properties": {"x": ' + nested + "}}\n")
    (deep / "edges.jsonl").write_text('{"from": "a", "to": "b", "type": "r"}\n')
    done = run("graph", "import", "parquet", deep, "--out", tmp_path / "out-deep")
    assert done.exit_code == 2 and "Traceback" not in done.output and "RecursionError" not in done.output
    assert len(done.output.strip().splitlines()) == 1, done.output[:500]
    assert f"{deep / 'nodes.jsonl'}, line 2" in " ".join(done.output.split())

    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "nodes.csv").write_text("")
    (empty / "edges.csv").write_text("from,to,type\n")
    done = run("graph", "import", "parquet", empty, "--out", tmp_path / "out-empty")
    assert done.exit_code == 2 and str(empty / "nodes.csv") in " ".join(done.output.split()), done.output


LOGGED = """
import logging, sys
import ark.cli.main  # the command line as it starts
try:
    raise KeyError({hostile!r})
except KeyError:
    logging.getLogger("ark.serve.webapp").exception("GET %s failed", {path!r})
logging.getLogger("ark.other").warning("graph name %s", {hostile!r})
"""


def test_log_lines_and_tracebacks_print_escaped():
    """A failed request's path (``/api/nodes/%1b...`` arrives decoded) and an exception carrying a node name, as the
    servers log them when no logging is configured: escaped on stderr."""
    import subprocess
    import sys

    code = LOGGED.format(hostile=HOSTILE["gene"], path="/api/nodes/" + CLIPBOARD)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "GET /api/nodes/" in done.stderr and "Traceback" in done.stderr and "graph name FBN1" in done.stderr
    assert not RAW.search(done.stderr), repr(done.stderr[-600:])
    assert "\\x1b]52" in done.stderr


def test_graph_verify_prints_paths_as_text(tmp_path):
    from tests.support.graphs import save_clinical_graph

    folder = save_clinical_graph(tmp_path / "[bold]graphs[/bold] [red]x" / "clinical")
    done = run("graph", "verify", folder)
    assert done.exit_code == 0, done.output
    assert f"{folder}: 5 graph files intact" in " ".join(done.output.split())  # the brackets shown, not applied


WARNED = """
import logging, warnings
import ark.cli.main  # the command line as it starts
warnings.warn({hostile!r}, RuntimeWarning)
logging.basicConfig()
logging.captureWarnings(True)
warnings.warn({captured!r}, UserWarning)
"""


def test_python_warnings_print_escaped():
    """A warning whose message carries a node name or a path (shown directly, or captured by logging): escaped."""
    import subprocess
    import sys

    code = WARNED.format(hostile="graph name " + HOSTILE["gene"], captured="captured " + CLIPBOARD)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "RuntimeWarning: graph name FBN1 \\x1b[2J" in done.stderr
    assert "UserWarning: captured \\x1b]52" in done.stderr and "py.warnings" in done.stderr
    assert not RAW.search(done.stderr), repr(done.stderr[-600:])
