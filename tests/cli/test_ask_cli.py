"""``ark ask GRAPH QUESTION`` through typer's CliRunner: the offline policy, a loopback LLM endpoint, errors.

The graph is the small clinical graph of ``tests/support/graphs.py`` saved to a folder; ``ARK_HOME`` points at the
test's temporary folder and the LLM environment variables are unset, so nothing outside the test is read.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ark.cli.main import app
from ark.graph import save_graph
from tests.support.graphs import (
    CONJUNCTION_QUESTION,
    ONE_HOP,
    SHARED_FINDINGS,
    UNANSWERABLE_QUESTION,
    build_conditions_graph,
    save_clinical_graph,
)
from tests.support.openai_server import http_error, tool_reply, turn_script

OFFLINE_NOTICE = "using the offline policy"
MARFAN_GENES_QUESTION, FBN1 = ONE_HOP
COL3A1 = "NCBIGene:1281"  # a gene the offline policy would never pick for the Marfan question
TOOL_NAMES = ["search_in_graph", "search_in_neighborhood", "add_to_answer", "finish"]


@pytest.fixture(scope="module")
def graph_dir(tmp_path_factory) -> Path:
    return save_clinical_graph(tmp_path_factory.mktemp("graphs") / "clinical")


pytestmark = pytest.mark.usefixtures("isolated_env")  # tests/conftest.py: own ARK_HOME, no LLM variables


def ask(*args: object):
    return CliRunner().invoke(app, ["ask", *(str(a) for a in args)])


def flat(text: str) -> str:
    """Text with every run of whitespace made one space (rich wraps long messages)."""
    return " ".join(text.split())


def table_rows(stdout: str) -> list[list[str]]:
    """The body rows of the answer table, as lists of stripped cells."""
    return [[cell.strip() for cell in line.strip().strip("│").split("│")]
            for line in stdout.splitlines() if line.startswith("│")]


# ------------------------------------------------------------------------------------------------ offline
def test_ask_offline_prints_notice_traces_and_the_answer_table(graph_dir):
    result = ask(graph_dir, MARFAN_GENES_QUESTION)
    assert result.exit_code == 0, result.output
    assert OFFLINE_NOTICE in result.stderr and OFFLINE_NOTICE not in result.stdout
    assert result.stderr.count(OFFLINE_NOTICE) == 1
    for agent in range(3):
        assert re.search(rf"^Agent {agent} · \d+ steps · finish$", result.stdout, re.MULTILINE)
    assert "Agent 3" not in result.stdout
    assert "search_in_neighborhood(node_index=19: Marfan syndrome" in result.stdout
    assert re.search(r"\d+[a-z]*\. add_to_answer\(\d+ nodes?\) → \d+ nodes?", result.stdout)
    rows = table_rows(result.stdout)
    assert rows[0][:5] == ["1", FBN1, "FBN1", "gene", "3"]
    assert "Linked to Marfan syndrome" in rows[0][5]
    assert "offline · 3 agent(s)" in result.stdout


def test_ask_json_prints_one_record_with_ranking_and_agents(graph_dir, tmp_path):
    record_file = tmp_path / "runs" / "ask.jsonl"
    question, disease = SHARED_FINDINGS
    result = ask(graph_dir, question, "--json", "--set", "n_agents=2", "--set", "max_steps=5",
                 "--trajectories", record_file)
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)  # stdout is exactly the JSON record: notices go to stderr
    assert record["question"] == question and record["policy"] == "offline"
    assert record["config"]["n_agents"] == 2 and record["config"]["max_steps"] == 5
    assert record["ranked"][0]["node_id"] == disease
    assert [agent["agent_index"] for agent in record["agents"]] == [0, 1]
    for agent in record["agents"]:
        assert 1 <= len(agent["steps"]) <= 5 and agent["stop_reason"] == "finish"
        assert agent["messages"][0]["role"] == "system"
    saved = [json.loads(line) for line in record_file.read_text().splitlines()]
    assert len(saved) == 1 and saved[0]["fused_ids"] == record["fused_ids"]


def test_ask_steps_limit_cuts_every_agent_short(graph_dir):
    result = ask(graph_dir, SHARED_FINDINGS[0], "--json", "--set", "n_agents=2", "--set", "max_steps=2")
    assert result.exit_code == 0, result.output
    agents = json.loads(result.stdout)["agents"]
    assert len(agents) == 2
    assert all(len(a["steps"]) == 2 and a["stop_reason"] == "max_steps" and not a["finished"] for a in agents)

    human = ask(graph_dir, SHARED_FINDINGS[0], "--set", "n_agents=2", "--set", "max_steps=2")
    assert human.exit_code == 0 and "No node was added to the answer." in human.stdout
    assert "Agent 1 · 2 steps · max_steps" in human.stdout and "Agent 2" not in human.stdout


def test_ask_offline_flag_wins_over_a_configured_model(graph_dir, openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("ARK_MODEL", "test-model")
    result = ask(graph_dir, MARFAN_GENES_QUESTION, "--offline", "--set", "n_agents=1")
    assert result.exit_code == 0, result.output
    assert OFFLINE_NOTICE in result.stderr.lower() and openai_server.request_count == 0
    assert table_rows(result.stdout)[0][1] == FBN1


# ------------------------------------------------------------------------------------------------ errors
def test_unknown_graph_name_exits_2_listing_the_built_in_graphs(graph_dir):
    result = ask("no-such-graph", MARFAN_GENES_QUESTION)
    assert result.exit_code == 2
    assert "'no-such-graph'" in result.stderr and "hpo" in result.stderr
    assert "Traceback" not in result.output


def test_error_messages_are_shown_verbatim_not_as_markup(graph_dir):
    # A path with rich-markup brackets used to crash the error printer (MarkupError) or lose text.
    for name in ("graphs[/]", "[red]graph"):
        result = ask(name, MARFAN_GENES_QUESTION)
        assert result.exit_code == 2, result.output
        assert f"'{name}'" in result.stderr


@pytest.mark.parametrize("question", ["", "   ", "\n\t"])
def test_empty_question_is_refused(graph_dir, question):
    result = ask(graph_dir, question)
    assert result.exit_code == 2
    assert "the question is empty" in result.stderr


def test_unknown_fusion_lists_the_valid_ones(graph_dir):
    result = ask(graph_dir, MARFAN_GENES_QUESTION, "--set", "fusion=borda")
    assert result.exit_code == 2
    assert "'borda'" in result.stderr and "votes, ordering, random" in result.stderr


def test_agents_must_be_positive(graph_dir):
    result = ask(graph_dir, MARFAN_GENES_QUESTION, "--set", "n_agents=0")
    assert result.exit_code == 2 and "n_agents=0" in result.stderr and "greater than or equal to 1" in result.stderr


def test_an_option_the_method_refuses_when_built_is_one_line(graph_dir, tmp_path):
    """A SeedER model folder that does not exist is refused when the method is built: one line, not a traceback."""
    pytest.importorskip("torch")
    missing = tmp_path / "no-such-seeder-model"
    result = ask(graph_dir, MARFAN_GENES_QUESTION, "-m", "seeder", "--set", f"model={missing}")
    assert result.exit_code == 2, result.output
    assert "method 'seeder': no SeedER model" in flat(result.stderr) and str(missing) in flat(result.stderr)


def test_top_must_be_positive(graph_dir):
    result = ask(graph_dir, MARFAN_GENES_QUESTION, "--top", -2)
    assert result.exit_code == 2 and "--top" in result.output


# ------------------------------------------------------------------------------------------------ with an LLM
def scripted_agent(graph_dir) -> list:
    """search (COL3A1 among the results) → add COL3A1 (with a reasoning containing markup-like brackets) → finish."""
    from ark.graph import load_graph

    col3a1 = load_graph(graph_dir).index_of(COL3A1)
    return [
        tool_reply(("search_in_graph", {"query": "Marfan syndrome COL3A1", "size": 30})),
        tool_reply(("add_to_answer", {"answer_nodes": [{"node_index": col3a1, "reasoning": "scripted [/] pick"}]})),
        tool_reply(("finish", {})),
    ]


def test_ask_with_base_url_uses_the_endpoint(graph_dir, openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    openai_server.responder = turn_script(scripted_agent(graph_dir))
    result = ask(graph_dir, MARFAN_GENES_QUESTION, "--base-url", openai_server.base_url, "--model", "test-model",
                 "--set", "n_agents=2")
    assert result.exit_code == 0, result.output
    assert OFFLINE_NOTICE not in result.output
    assert openai_server.request_count == 6  # 2 agents x 3 turns
    for body, headers in zip(openai_server.requests, openai_server.headers, strict=True):
        assert body["model"] == "test-model" and body["tool_choice"] == "required"
        assert [t["function"]["name"] for t in body["tools"]] == TOOL_NAMES
        assert MARFAN_GENES_QUESTION in body["messages"][1]["content"]
        assert headers["authorization"] == "Bearer dummy-key"
    for agent in range(2):
        assert f"Agent {agent} · 3 steps · finish" in result.stdout
    assert "search_in_graph(query=Marfan syndrome COL3A1" in result.stdout
    rows = table_rows(result.stdout)
    assert len(rows) == 1 and rows[0][:5] == ["1", COL3A1, "COL3A1", "gene", "2"]
    assert rows[0][5] == "scripted [/] pick"  # the model's reasoning, verbatim
    assert "openai:test-model · 2 agent(s)" in result.stdout and "tokens" in result.stdout


def test_rejected_key_exits_non_zero_naming_the_url(graph_dir, openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    openai_server.api_key = "the-real-key"
    result = ask(graph_dir, MARFAN_GENES_QUESTION, "--base-url", openai_server.base_url, "--model", "test-model")
    assert result.exit_code not in (0, None), result.output
    assert isinstance(result.exception, SystemExit)  # a clean exit, not an exception escaping the command
    assert openai_server.base_url in flat(result.stderr) and "401" in result.stderr
    assert "Traceback" not in result.output and "No node was added" not in result.stdout
    assert "dummy-key" not in result.output  # the key is never echoed


def test_one_failing_agent_fails_the_question_with_one_line_naming_the_endpoint(graph_dir, openai_server,
                                                                                 monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    # Whichever agent asks first gets a non-retried error; the other is stopped.
    openai_server.enqueue(http_error(400, "bad request from the test", retry_after_ms=None),
                          *scripted_agent(graph_dir))
    result = ask(graph_dir, MARFAN_GENES_QUESTION, "--base-url", openai_server.base_url, "--model", "test-model",
                 "--set", "n_agents=2")
    assert result.exit_code == 1, result.output
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: AgentError: agent") and "of 2 failed" in line
    assert openai_server.base_url in line and "bad request from the test" in line
    assert result.stdout == ""  # no answer table for a question whose agents did not all run


def test_allow_partial_fuses_the_other_agents_and_says_so(graph_dir, openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    openai_server.enqueue(http_error(400, "bad request from the test", retry_after_ms=None),
                          *scripted_agent(graph_dir))
    result = ask(graph_dir, MARFAN_GENES_QUESTION, "--base-url", openai_server.base_url, "--model", "test-model",
                 "--set", "n_agents=2", "--allow-partial", "--json")
    assert result.exit_code == 0, result.output
    assert "partial answer (--allow-partial): 1 of 2 agent(s) failed" in result.stderr
    record = json.loads(result.stdout)
    assert record["partial"].startswith("1 of 2 agents failed") and "bad request from the test" in record["partial"]
    assert record["ranked"][0]["node_id"] == COL3A1


def test_max_tool_calls_per_turn_flag_caps_one_reply(graph_dir, openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    many = [("search_in_graph", {"query": f"Marfan {n}"}) for n in range(5)]
    openai_server.responder = turn_script([tool_reply(*many), tool_reply(("finish", {}))])
    result = ask(graph_dir, MARFAN_GENES_QUESTION, "--base-url", openai_server.base_url, "--model", "test-model",
                 "--set", "n_agents=1", "--max-tool-calls-per-turn", "2", "--json")
    assert result.exit_code == 0, result.output
    [agent] = json.loads(result.stdout)["agents"]
    assert len(agent["steps"][0]["tool_calls"]) == 2
    assert "3 more tool call(s) in this reply were not run" in agent["steps"][0]["observations"][-1]
    bad = ask(graph_dir, MARFAN_GENES_QUESTION, "--max-tool-calls-per-turn", "0")
    assert bad.exit_code == 2 and "--max-tool-calls-per-turn" in flat(bad.output)


# ------------------------------------------------------------------------------------------------ confidence
@pytest.fixture(scope="module")
def conditions_dir(tmp_path_factory) -> Path:
    return save_graph(build_conditions_graph(), tmp_path_factory.mktemp("graphs") / "conditions")


def test_ask_says_when_the_graph_has_no_relation_for_the_question(conditions_dir):
    result = ask(conditions_dir, UNANSWERABLE_QUESTION)
    assert result.exit_code == 0, result.output
    assert "Confidence: low — The graph has no node type or relation for 'treatment'" in flat(result.stdout)
    record = json.loads(ask(conditions_dir, UNANSWERABLE_QUESTION, "--json").stdout)
    assert record["confidence"] == "low" and "'treatment'" in record["confidence_reason"]


def test_ask_shows_which_conditions_each_answer_satisfies(conditions_dir):
    result = ask(conditions_dir, CONJUNCTION_QUESTION)
    assert result.exit_code == 0, result.output
    text = flat(result.stdout)
    assert "Satisfies all 2 conditions: Arachnodactyly; Ectopia lentis." in text
    assert "Partial match: Arachnodactyly; not found: Ectopia lentis." in text
    assert ("Confidence: medium — Answers are linked to Arachnodactyly and Ectopia lentis; the first 2 answers are "
            "tied: the graph does not distinguish them.") in text
    assert "1=" in text and "n= : tied answers" in text  # the table shows the tie as a shared rank
    record = json.loads(ask(conditions_dir, CONJUNCTION_QUESTION, "--json").stdout)
    groups = [node["tie_group"] for node in record["ranked"]]
    assert groups[:2] == [1, 1] and groups[2] > 1  # the two answers meeting both conditions share the first group


# ------------------------------------------------------------------------------------------------ real graph
@pytest.mark.slow
def test_ask_hpo_ranks_fbn1_first_for_marfan(use_hpo_home):
    result = ask("hpo", "Which genes are implicated in Marfan syndrome?", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["ranked"][0]["node_id"] == "NCBIGene:2200"


# ------------------------------------------------------------------------------------------------ graphscout
GENE_COUNT_QUESTION = "How many genes are associated with Loeys-Dietz syndrome?"


def test_ask_graphscout_offline_answers_a_count_and_shows_the_code(graph_dir):
    pytest.importorskip("ladybug")
    result = ask(graph_dir, GENE_COUNT_QUESTION, "--method", "graphscout")
    assert result.exit_code == 0, result.output
    assert OFFLINE_NOTICE in result.stderr
    assert "Agent 0 · 3 steps · answer" in result.stdout
    assert "node_id_retriever(queries=['Loeys-Dietz syndrome'], topk=2)" in result.stdout
    assert "code_interpreter(code below)" in result.stdout
    assert "│ rows = cypher('MATCH (a0:disease {id: $anchor})-[:associated_gene]->(x:gene) RETURN count(DISTINCT " \
           "x) AS answer', {'anchor': 'OMIM:609192'})" in result.stdout
    assert "      → 2" in result.stdout  # what the code printed
    assert "Answer (number): 2" in result.stdout
    assert table_rows(result.stdout)[0][1] == "OMIM:609192"  # the nodes it touched


def test_ask_graphscout_json_record_has_answer_and_trajectory(graph_dir):
    pytest.importorskip("ladybug")
    result = ask(graph_dir, GENE_COUNT_QUESTION, "--method", "graphscout", "--json")
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert record["answer"] == {"text": "2", "type": "number"} and record["stop_reason"] == "answer"
    assert record["agents"][0]["messages"][-1]["content"].endswith("\\answer{2}")
    usage = record["sandbox_usage"]  # the worker ended before the command did, its CPU time counted
    assert usage["workers_started"] == usage["workers_ended"] == 1 and usage["worker_cpu_s"] > 0


@pytest.mark.slow
def test_ask_hpo_graphscout_counts_marfan_genes_with_cypher(use_hpo_home):
    pytest.importorskip("ladybug")
    result = ask("hpo", "How many genes are associated with Marfan syndrome?", "--method", "graphscout")
    assert result.exit_code == 0, result.output
    assert "RETURN count(DISTINCT x) AS answer" in result.stdout and "Answer (number): 1" in result.stdout
