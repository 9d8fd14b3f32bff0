"""The ``fusion_evidence`` option: ties within a vote group broken by the graph's evidence (on by default) or by the
paper's earliest-position rule alone (off, as under ``--preset paper``). Three stub agents (the scripted
OpenAI-compatible server on loopback, the real client) answer "Marfan syndrome" with one vote per gene, without
searching first (so under allow_unseen_answers, the paper's unchecked answers)."""

from __future__ import annotations

import pytest

from ark.graph import EdgeTable, NodeTable, build_graph, save_graph
from ark.llm import OpenAIChatClient, resolve_settings
from ark.methods.ark.api import ARK
from ark.methods.ark.fusion_evidence import evidence_keys, question_anchors
from ark.methods.ark.options import ArkOptions
from tests.support.graphs import _clinical_tables, build_index
from tests.support.openai_server import tool_reply, turn_script

SEED = 300
QUESTION = "Marfan syndrome"
# Agent k adds these genes: every gene gets one vote; FBN1 (Marfan syndrome's gene) is seen last.
ANSWERS = (["CFTR"], ["HTT"], ["TGFBR2", "FBN1"])


@pytest.fixture(scope="module")
def marfan():
    """The clinical graph with two genes of other diseases (cystic fibrosis, Huntington disease) added."""
    nodes, edges = _clinical_tables()
    extra = [("OMIM:219700", "disease", "Cystic fibrosis", "Cystic fibrosis. A disorder of the lungs."),
             ("OMIM:143100", "disease", "Huntington disease", "Huntington disease. A movement disorder."),
             ("NCBIGene:1080", "gene", "CFTR", "CFTR. Cystic fibrosis transmembrane conductance regulator."),
             ("NCBIGene:3064", "gene", "HTT", "HTT. Huntingtin.")]
    ids, types, names, texts = (list(nodes.ids), list(nodes.types), list(nodes.names), list(nodes.texts or []))
    for node_id, node_type, name, text in extra:
        ids.append(node_id), types.append(node_type), names.append(name), texts.append(text)
    src = list(edges.sources) + ["OMIM:219700", "OMIM:143100"]
    dst = list(edges.targets) + ["NCBIGene:1080", "NCBIGene:3064"]
    rel = list(edges.relations) + ["associated_gene", "associated_gene"]
    graph = build_graph(NodeTable(ids, types, names, texts), EdgeTable(src, dst, rel), metadata={"name": "marfan"})
    return graph, build_index(graph)


def script_agents(server, graph) -> None:
    """Agent k (told apart by the seed the client sends) adds ``ANSWERS[k]`` and finishes."""
    by_name = {graph.name(i): i for i in range(graph.num_nodes)}
    players = [turn_script([
        tool_reply(("add_to_answer", {"answer_nodes": [{"node_index": by_name[n], "reasoning": "a gene"}
                                                       for n in names]})),
        tool_reply(("finish", {"confidence": "medium", "reason": "Listed."}))]) for names in ANSWERS]
    server.responder = lambda body: players[body["seed"] - SEED](body)


def ask(server, tmp_path, graph, index, **options) -> list[str]:
    script_agents(server, graph)
    settings = resolve_settings(base_url=server.base_url, model="test-model", api_key="test-key", seed=SEED,
                                environ={}, config_path=tmp_path / "absent.toml", use_cache=False)
    config = ArkOptions(allow_unseen_answers=True, **options)
    ark = ARK(graph, llm=OpenAIChatClient(settings), index=index, config=config)
    return [node.name for node in ark.retrieve(QUESTION).ranked]


def test_by_default_the_graphs_evidence_puts_the_named_diseases_gene_first(openai_server, marfan, tmp_path):
    assert ask(openai_server, tmp_path, *marfan) == ["FBN1", "CFTR", "HTT", "TGFBR2"]
    assert openai_server.request_count == 6  # reading the evidence asked the model nothing


def test_without_fusion_evidence_the_papers_earliest_position_rule_alone_orders_the_votes(openai_server, marfan,
                                                                                          tmp_path):
    assert ask(openai_server, tmp_path, *marfan, fusion_evidence=False) == ["CFTR", "HTT", "TGFBR2", "FBN1"]


def test_the_evidence_is_read_from_the_graph_around_the_nodes_the_question_names(marfan):
    graph, index = marfan
    anchors = question_anchors(graph, index, "Which genes cause Marfan syndrome?")
    assert [graph.name(a) for a in anchors] == ["Marfan syndrome"]
    genes = [graph.index_of(i) for i in ("NCBIGene:2200", "NCBIGene:7048")]  # FBN1, TGFBR2
    assert evidence_keys(graph, anchors, genes) == {genes[0]: (1, 1), genes[1]: (0, 0)}
    assert question_anchors(graph, index, "Which genes cause Marfan?") == []  # no node bears that name
    assert evidence_keys(graph, [], genes) == {}


def test_ark_ask_with_preset_paper_ranks_by_the_papers_rule(openai_server, marfan, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from ark.cli.main import app

    graph, _ = marfan
    folder = tmp_path / "marfan"
    save_graph(graph, folder)
    script_agents(openai_server, graph)
    monkeypatch.setenv("ARK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("COLUMNS", "200")
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "config.toml").write_text(f"[llm]\nseed = {SEED}\n")

    def ranked(*flags: str) -> list[str]:
        result = CliRunner().invoke(app, ["ask", str(folder), QUESTION, "--base-url", openai_server.base_url,
                                          "--model", "test-model", "--set", "allow_unseen_answers=true",
                                          *flags])
        assert result.exit_code == 0, result.output
        rows = [[c.strip() for c in line.strip().strip("│").split("│")] for line in result.stdout.splitlines()
                if line.startswith("│")]
        return [r[2] for r in rows]

    assert ranked("--preset", "paper") == ["CFTR", "HTT", "TGFBR2", "FBN1"]
    assert ranked() == ["FBN1", "CFTR", "HTT", "TGFBR2"]
