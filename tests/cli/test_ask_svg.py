"""``ark ask --svg FILE``: the evidence drawing written as a standalone SVG, parsed here with ``xml.etree``.

The expected drawing comes from the clinical graph's own tables (``tests/support/graphs.py``), not from the module
that draws: the anchors are the findings the question names, the answers the ranking ``--json`` prints, and the
edges every graph edge between them (the offline policy searches around each finding for diseases, so it follows
each of them). A graph whose node and relation names are hostile markup proves that every graph string is escaped.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ark.cli.main import app
from ark.graph import save_graph
from ark.loaders import open_graph
from tests.support import graphs
from tests.support.graphs import DISEASES, ONE_HOP, PHENOTYPES, SHARED_FINDINGS, TWO_HOP, save_clinical_graph

SVG = "{http://www.w3.org/2000/svg}"
FINDINGS = ("Ectopia lentis", "Arachnodactyly", "Aortic root dilatation", "Tall stature")  # named by SHARED_FINDINGS
HOSTILE_GENE = "FBN1 <script>alert(\"x\")</script> & 'co' \x01]]>"
HOSTILE_RELATION = "gene<of>&\"'"


@pytest.fixture(scope="module")
def graph_dir(tmp_path_factory) -> Path:
    return save_clinical_graph(tmp_path_factory.mktemp("graphs") / "clinical")


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch, tmp_path):
    monkeypatch.setenv("ARK_HOME", str(tmp_path / "ark-home"))
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ARK_MODEL"):
        monkeypatch.delenv(name, raising=False)


def ask_svg(graph_dir: Path, question: str, svg: Path) -> dict:
    """Run ``ark ask --offline --json --svg``; the printed record."""
    result = CliRunner().invoke(app, ["ask", str(graph_dir), question, "--offline", "--json", "--svg", str(svg)])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def drawn(svg: Path) -> tuple[dict[int, ET.Element], set[tuple[int, str, int]], ET.Element]:
    """The drawing's nodes by index, its edges as (source, relation, target), and the parsed root."""
    root = ET.parse(svg).getroot()
    assert root.tag == f"{SVG}svg"
    nodes = {int(e.get("data-index")): e for e in root.iter() if "ev-node" in (e.get("class") or "").split()}
    edge_elements = [e for e in root.iter() if e.get("class") == "ev-edge"]
    edges = {(int(e.get("data-source")), e.get("data-relation"), int(e.get("data-target"))) for e in edge_elements}
    assert len(edges) == len(edge_elements)  # one element per edge
    return nodes, edges, root


def test_svg_draws_the_anchors_the_followed_edges_and_the_answers(graph_dir, tmp_path):
    record = ask_svg(graph_dir, SHARED_FINDINGS[0], tmp_path / "evidence.svg")
    nodes, edges, _ = drawn(tmp_path / "evidence.svg")
    graph = open_graph(str(graph_dir))
    findings = [node_id for node_id, name, _ in PHENOTYPES if name in FINDINGS]
    anchors = {graph.index_of(node_id) for node_id in findings}
    answers = {e["index"]: e["node_id"] for e in record["ranked"]}
    assert len(anchors) == 4 and len(answers) == 3 and record["ranked"][0]["node_id"] == SHARED_FINDINGS[1]
    assert set(nodes) == anchors | set(answers)
    assert {i for i, e in nodes.items() if e.get("data-role") == "anchor"} == anchors
    assert {i for i, e in nodes.items() if e.get("data-role") == "answer"} == set(answers)
    expected = {(graph.index_of(disease), "has_phenotype", graph.index_of(p))
                for disease, _, _, phenotypes, _ in DISEASES if disease in answers.values()
                for p in phenotypes if p in findings}
    assert edges == expected and len(expected) == 8  # Marfan: all 4 findings; the two tied diseases: 2 each
    for edge in (e for e in ET.parse(tmp_path / "evidence.svg").getroot().iter() if e.get("class") == "ev-edge"):
        title = edge.find(f"{SVG}title").text
        assert "has_phenotype" in title and "step" in title  # hovering names the relation and the step


def test_svg_draws_an_intermediate_node_of_a_two_hop_answer(graph_dir, tmp_path):
    record = ask_svg(graph_dir, TWO_HOP[0], tmp_path / "two-hop.svg")
    nodes, edges, _ = drawn(tmp_path / "two-hop.svg")
    assert record["ranked"][0]["node_id"] == TWO_HOP[1]
    roles = {e.find(f"{SVG}title").text.split(" (")[0]: e.get("data-role") for e in nodes.values()}
    assert roles == {"Febrile seizure": "anchor", "Dravet syndrome": "via", "SCN1A": "answer"}
    names = {e.find(f"{SVG}title").text.split(" (")[0]: i for i, e in nodes.items()}
    assert edges == {(names["Dravet syndrome"], "has_phenotype", names["Febrile seizure"]),
                     (names["Dravet syndrome"], "associated_gene", names["SCN1A"])}


def test_svg_escapes_hostile_names_from_the_graph(tmp_path, monkeypatch):
    monkeypatch.setattr(graphs, "GENES", [(g, HOSTILE_GENE if g == ONE_HOP[1] else n, t) for g, n, t in graphs.GENES])
    graph_dir = tmp_path / "hostile"
    save_graph(graphs.build_graph(*graphs._clinical_tables(associated_gene=HOSTILE_RELATION),
                                  metadata={"name": "hostile"}), graph_dir)
    record = ask_svg(graph_dir, ONE_HOP[0], tmp_path / "hostile.svg")
    assert record["ranked"][0]["node_id"] == ONE_HOP[1]
    text = (tmp_path / "hostile.svg").read_text(encoding="utf-8")
    assert "<script" not in text and "<of>" not in text  # markup only as escaped text
    nodes, edges, root = drawn(tmp_path / "hostile.svg")
    assert not [e for e in root.iter() if e.tag.endswith("script")]
    gene = nodes[record["ranked"][0]["index"]]
    shown = HOSTILE_GENE.replace("\x01", "")  # a character XML cannot carry is dropped, the rest kept as text
    assert gene.find(f"{SVG}title").text.startswith(shown)
    assert {relation for _, relation, _ in edges} == {HOSTILE_RELATION}
    [edge] = [e for e in root.iter() if e.get("class") == "ev-edge"]
    assert HOSTILE_RELATION in edge.find(f"{SVG}title").text and shown in edge.find(f"{SVG}title").text


def test_svg_to_an_unwritable_place_fails_before_the_question_runs(graph_dir, tmp_path):
    (tmp_path / "a-file").write_text("not a folder")
    result = CliRunner().invoke(app, ["ask", str(graph_dir), ONE_HOP[0], "--offline",
                                      "--svg", str(tmp_path / "a-file" / "x.svg")])
    assert result.exit_code == 2 and "cannot write --svg" in result.output and "FBN1" not in result.output
