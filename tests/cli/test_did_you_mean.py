"""A misspelt name gets exactly one suggestion, wherever it is parsed (#45): a method, a graph, a ``--set``
option, a node type and a relation on the command line; a type, a relation or a tool in a model's tool call (ARK's
tools and the MCP graph tools); a column named by an import flag."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ark.cli.main import app
from ark.loaders.tabular import load_tabular
from ark.methods.ark.options import ToolConfig
from ark.methods.ark.tools import Toolbox
from ark.serve.graph_tools import GraphTools
from tests.conftest import isolate_user_env
from tests.support.graphs import build_index

FILMS = Path(__file__).resolve().parents[2] / "examples" / "films"
QUESTION = "Which film is about rival magicians?"
SUGGESTION = re.compile(r"did you mean '([^']+)'\?", re.IGNORECASE)


def suggestions(text: str) -> list[str]:
    return SUGGESTION.findall(" ".join(text.split()))


@pytest.fixture
def films_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate_user_env(monkeypatch, tmp_path / "home", columns=250)
    result = CliRunner().invoke(app, ["graph", "import", "csv", str(FILMS), "--name", "films"])
    assert result.exit_code == 0, result.output
    return tmp_path / "home"


CLI_TYPOS = {
    "method": (["ask", "films", QUESTION, "--method", "bm52"], "bm25"),
    "graph (built-in)": (["ask", "hop", QUESTION], "hpo"),
    "graph (imported)": (["graph", "info", "flims"], "films"),
    "option": (["ask", "films", QUESTION, "--set", "n_agnets=3"], "n_agents"),
    "option of another method": (["retrieve", "films", "-q", "{q}", "-m", "bm25", "--set", "k11=2", "--out",
                                  "{tmp}/r.jsonl"], "k1"),
    "method of a METHOD.KEY option": (["serve", "films", "--set", "bm52.k1=2"], "bm25"),
    "option of a METHOD.KEY option": (["serve", "films", "--set", "ark.tools.neighborhod_budget=3"],
                                      "tools.neighborhood_budget"),
    "node type": (["ask", "films", QUESTION, "--candidate-types", "flim"], "film"),
    "import column": (["graph", "import", "csv", str(FILMS), "--name", "f2", "--name-column", "nmae"], "name"),
    "text column": (["graph", "import", "csv", str(FILMS), "--name", "f3", "--text-columns", "descripton"],
                    "description"),
    "command": (["grpah", "list"], "graph"),
}


@pytest.mark.parametrize("kind", list(CLI_TYPOS))
def test_a_misspelt_name_on_the_command_line_gets_one_suggestion(films_home: Path, tmp_path: Path,
                                                                  kind: str) -> None:
    argv, meant = CLI_TYPOS[kind]
    if argv[0] == "serve":
        pytest.importorskip("fastapi")
        pytest.importorskip("uvicorn")
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"id": "q1", "query": "rival magicians", "answer_ids": ["f1"]}\n', encoding="utf-8")
    result = CliRunner().invoke(app, [a.format(q=queries, tmp=tmp_path) for a in argv])
    assert result.exit_code == 2, result.output
    assert suggestions(result.output) == [meant], result.output


@pytest.fixture(scope="module")
def films():
    return load_tabular(FILMS)


def test_a_tool_call_with_a_misspelt_type_relation_or_tool_gets_one_suggestion_each(films) -> None:
    box = Toolbox(films, build_index(films), ToolConfig())
    prestige = films.index_of("f1")
    typed = box.execute("search_in_neighborhood", {"node_index": prestige, "node_types": ["persn"]})
    assert not typed.ok and suggestions(typed.text) == ["person"]
    related = box.execute("search_in_neighborhood", {"node_index": prestige, "edge_types": ["direted_by", "stars"]})
    assert not related.ok and suggestions(related.text) == ["directed_by", "starring"]  # one for each name
    unknown_tool = box.execute("search_in_neighbourhood", {"node_index": prestige})
    assert not unknown_tool.ok and suggestions(unknown_tool.text) == ["search_in_neighborhood"]


def test_the_mcp_graph_tools_suggest_one_name_too(films) -> None:
    tools = GraphTools(films, build_index(films))
    typed = tools.execute("search_in_surroundings", {"node": "f1", "node_types": ["flim"]})
    assert not typed.ok and suggestions(typed.text) == ["film"]
    related = tools.execute("find_paths", {"source": "f1", "target": "f2", "edge_types": ["starrring"]})
    assert not related.ok and suggestions(related.text) == ["starring"]
    unknown_tool = tools.execute("find_path", {"source": "f1", "target": "f2"})
    assert not unknown_tool.ok and suggestions(unknown_tool.text) == ["find_paths"]
