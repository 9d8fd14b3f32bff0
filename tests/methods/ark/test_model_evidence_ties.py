"""With a model, the paper's vote fusion stays the ranking and the graph's evidence only breaks ties within a vote
group: the real `openai` client against the scripted loopback server, on the small clinical graph."""

from __future__ import annotations

import pytest

from ark.llm import OpenAIChatClient, resolve_settings
from ark.methods.ark.api import ARK
from ark.methods.ark.options import ArkOptions
from tests.support.graphs import build_clinical_graph, build_index
from tests.support.openai_server import tool_reply, turn_script

SEED = 200  # the client sends seed + agent_index: the server tells the agents apart
BLIND = ArkOptions(allow_unseen_answers=True)  # the scripted agents answer by name, without searching
QUESTION = "Which diseases show arachnodactyly and tall stature?"  # Marfan syndrome has both; the others one each


@pytest.fixture(scope="module")
def clinical():
    graph = build_clinical_graph()
    return graph, build_index(graph)


def model(server, tmp_path) -> OpenAIChatClient:
    settings = resolve_settings(base_url=server.base_url, model="test-model", api_key="test-key", seed=SEED,
                                environ={}, config_path=tmp_path / "absent.toml", use_cache=False)
    return OpenAIChatClient(settings)


def agents_adding(graph, *answers, confidence="high"):
    """A responder: agent k adds the diseases ``answers[k]`` (by name) and finishes, stating ``confidence``."""
    index = {graph.name(i): i for i in range(graph.num_nodes)}
    players = [turn_script([
        tool_reply(("add_to_answer", {"answer_nodes": [{"node_index": index[n], "reasoning": "my guess"}
                                                       for n in names]})),
        tool_reply(("finish", {"confidence": confidence, "reason": "Both findings are listed."}))])
        for names in answers]
    return lambda body: players[body["seed"] - SEED](body)


def test_graph_evidence_orders_nodes_with_equal_votes_and_votes_still_come_first(openai_server, clinical, tmp_path):
    graph, index = clinical
    openai_server.responder = agents_adding(graph, ["Loeys-Dietz syndrome", "Homocystinuria", "Marfan syndrome"],
                                            ["Loeys-Dietz syndrome", "Marfan syndrome"],
                                            ["Homocystinuria", "Loeys-Dietz syndrome"])
    result = ARK(graph, llm=model(openai_server, tmp_path), index=index, config=BLIND).retrieve(QUESTION)
    # Votes 3, 2, 2. The paper's fusion puts Homocystinuria (first seen earlier) before Marfan syndrome; the graph
    # links Marfan syndrome to both findings and Homocystinuria to one, so Marfan syndrome comes first of the two.
    # Loeys-Dietz syndrome (one finding) keeps the first place its third vote gives it.
    assert [(n.name, n.votes) for n in result.ranked] == [
        ("Loeys-Dietz syndrome", 3), ("Marfan syndrome", 2), ("Homocystinuria", 2)]
    assert [n.tie_group for n in result.ranked] == [1, 2, 3]
    assert result.confidence == "high" and result.confidence_reason == "Both findings are listed."
    assert openai_server.request_count == 6  # reading the evidence asked the model nothing


def test_a_single_agents_own_order_stands(openai_server, clinical, tmp_path):
    graph, index = clinical
    openai_server.responder = agents_adding(graph, ["Homocystinuria", "Marfan syndrome"])
    result = ARK(graph, llm=model(openai_server, tmp_path), index=index,
                 config=BLIND.model_copy(update={"n_agents": 1})).retrieve(QUESTION)
    # Nothing is fused, so nothing is tied: the graph would put Marfan syndrome first, the model's order stands.
    assert [(n.name, n.tie_group) for n in result.ranked] == [("Homocystinuria", 1), ("Marfan syndrome", 2)]
    assert openai_server.request_count == 2


def test_answers_the_graph_does_not_distinguish_share_a_group_and_the_top_is_not_high(openai_server, clinical,
                                                                                       tmp_path):
    graph, index = clinical
    openai_server.responder = agents_adding(graph, ["Homocystinuria", "Loeys-Dietz syndrome"],
                                            ["Loeys-Dietz syndrome", "Homocystinuria"])
    result = ARK(graph, llm=model(openai_server, tmp_path), index=index,
                 config=BLIND.model_copy(update={"n_agents": 2})).retrieve(QUESTION)
    # Two votes each, one finding each, one edge each: the graph does not say which comes first.
    assert [(n.name, n.tie_group) for n in result.ranked] == [("Homocystinuria", 1), ("Loeys-Dietz syndrome", 1)]
    assert result.confidence == "medium"
    assert result.confidence_reason == ("Both findings are listed; the first 2 answers are tied: the graph does not "
                                        "distinguish them.")


def test_ark_ask_with_a_model_shows_the_tie_as_a_shared_rank_and_says_why_it_is_not_high(openai_server, tmp_path,
                                                                                         monkeypatch):
    from typer.testing import CliRunner

    from ark.cli.main import app
    from tests.support.graphs import save_clinical_graph

    folder = save_clinical_graph(tmp_path / "clinical")
    monkeypatch.setenv("ARK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("COLUMNS", "200")
    graph = build_clinical_graph()
    both = [graph.index_of("OMIM:236200"), graph.index_of("OMIM:609192")]  # Homocystinuria, Loeys-Dietz syndrome
    openai_server.responder = turn_script([  # every agent adds the two, one finding each, and says "high"
        tool_reply(("add_to_answer", {"answer_nodes": [{"node_index": i, "reasoning": "my guess"} for i in both]})),
        tool_reply(("finish", {"confidence": "high", "reason": "Both findings are listed."}))])
    result = CliRunner().invoke(app, ["ask", str(folder), QUESTION, "--base-url", openai_server.base_url,
                                      "--model", "test-model", "--set", "n_agents=2",
                                      "--set", "allow_unseen_answers=true"])
    assert result.exit_code == 0, result.output
    rows = [[c.strip() for c in line.strip().strip("│").split("│")] for line in result.stdout.splitlines()
            if line.startswith("│")]
    assert [(r[0], r[2]) for r in rows] == [("1=", "Homocystinuria"), ("1=", "Loeys-Dietz syndrome")]
    assert "n= : tied answers" in result.stdout
    text = " ".join(result.stdout.split())
    assert ("Confidence: medium — Both findings are listed; the first 2 answers are tied: the graph does not "
            "distinguish them.") in text
