"""The evidence graph of a question's record (:mod:`ark.runtime.evidence_graph`) and its SVG: records written here
by hand in the trajectory format, over the small epilepsy graph of ``tests/support/graphs.py`` (node index =
position in ``NODES``)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from ark.runtime import evidence_graph as module
from ark.runtime.evidence_graph import evidence_graph
from ark.runtime.evidence_svg import render_svg, xml_text
from tests.support.graphs import build_small_graph

DRAVET, MIGRAINE, SEIZURE, FEBRILE, HEADACHE, SCN1A, CACNA1A, NERVOUS = range(8)
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def graph():
    return build_small_graph()


def around(centre: int, *shown: tuple[int, list[str], list[str]], ok: bool = True) -> dict:
    """A neighbourhood call's record: ``shown`` as (neighbour, relations out of the centre, relations into it)."""
    return {"name": "search_in_neighborhood", "ok": ok, "arguments": "{}",
            "result": {"center": centre, "results": [{"index": n, "out": o, "in": i} for n, o, i in shown]}}


def record(*steps: list[dict], ranked: list[int], agents: int = 1) -> dict:
    trajectory = [{"index": k, "tool_calls": calls} for k, calls in enumerate(steps)]
    return {"question": "q", "ranked": [{"index": i, "votes": agents} for i in ranked],
            "agents": [{"agent_index": a, "steps": trajectory} for a in range(agents)]}


def triples(drawing) -> set[tuple[int, str, int]]:
    return {(e.source, e.relation, e.target) for e in drawing.edges}


def test_dead_ends_and_branches_that_reach_no_answer_are_left_out(graph):
    drawing = evidence_graph(record(
        [{"name": "search_in_graph", "result": {"results": [{"index": FEBRILE}]}}],
        [around(FEBRILE, (DRAVET, [], ["has_phenotype"]), (SEIZURE, ["is_a"], []), (SCN1A, [], ["has_phenotype"]))],
        [around(DRAVET, (SCN1A, ["associated_with"], ["associated_with"]), (SEIZURE, ["has_phenotype"], []))],
        [around(SEIZURE, (NERVOUS, ["is_a"], []))],  # a branch that reached no answer
        ranked=[SCN1A]), graph)
    roles = {n.index: n.role for n in drawing.nodes}
    assert roles == {FEBRILE: "anchor", DRAVET: "via", SCN1A: "answer"}  # not the anchor's other neighbours
    assert triples(drawing) == {(DRAVET, "has_phenotype", FEBRILE), (SCN1A, "has_phenotype", FEBRILE),
                                (DRAVET, "associated_with", SCN1A), (SCN1A, "associated_with", DRAVET)}
    assert {e.bend for e in drawing.edges if {e.source, e.target} == {DRAVET, SCN1A}} == {0, 1}  # drawn apart
    assert [(u.agent, u.step) for e in drawing.edges for u in e.uses if e.source == DRAVET
            and e.relation == "has_phenotype"] == [(0, 2)]
    columns = sorted({n.x for n in drawing.nodes})
    assert [drawing.node(i).x for i in (FEBRILE, DRAVET, SCN1A)] == columns  # anchors, then via, then answers


def test_an_anchor_is_where_an_agent_started_not_a_node_it_went_back_to(graph):
    drawing = evidence_graph(record(
        [around(DRAVET, (SCN1A, ["associated_with"], []))],
        [around(SCN1A, (DRAVET, [], ["associated_with"]), (FEBRILE, ["has_phenotype"], []))],  # checking back
        [around(MIGRAINE, (CACNA1A, [], ["associated_with"]))],
        ranked=[SCN1A], agents=2), graph)
    assert {n.index: (n.role, n.anchor) for n in drawing.nodes} == {
        DRAVET: ("anchor", True), MIGRAINE: ("anchor", True), SCN1A: ("answer", False)}
    assert triples(drawing) == {(DRAVET, "associated_with", SCN1A)}  # one edge, followed both ways
    assert {(u.agent, u.step) for u in drawing.edges[0].uses} == {(0, 1), (1, 1), (0, 2), (1, 2)}
    assert drawing.node(SCN1A).votes == 2 and drawing.node(DRAVET).votes == 2  # votes; agents that used it


def test_failed_calls_unknown_nodes_and_methods_without_exploration(graph):
    drawing = evidence_graph(record(
        [around(DRAVET, (SCN1A, ["associated_with"], []), ok=False)],
        [around(999, (SCN1A, ["associated_with"], []))],
        [{"name": "run_code", "result": None}],
        ranked=[SCN1A, 12345]), graph)
    assert [(n.index, n.role) for n in drawing.nodes] == [(SCN1A, "answer")] and not drawing.edges
    assert evidence_graph({"ranked": [{"index": DRAVET}]}, graph).node(DRAVET).votes == 1


def test_the_drawing_is_the_same_every_time_and_caps_intermediate_nodes(graph, monkeypatch):
    steps = ([around(FEBRILE, (DRAVET, [], ["has_phenotype"]), (SEIZURE, ["is_a"], []))],
             [around(DRAVET, (SCN1A, ["associated_with"], []))], [around(SEIZURE, (SCN1A, [], ["has_phenotype"]))])
    first = evidence_graph(record(*steps, ranked=[SCN1A]), graph)
    assert first == evidence_graph(record(*steps, ranked=[SCN1A]), graph)
    assert render_svg(first) == render_svg(evidence_graph(record(*steps, ranked=[SCN1A]), graph))
    assert {n.role for n in first.nodes}.issuperset({"via"}) and first.omitted == 0
    monkeypatch.setattr(module, "MAX_VIAS", 1)
    capped = evidence_graph(record(*steps, ranked=[SCN1A]), graph)
    assert sum(n.role == "via" for n in capped.nodes) == 1 and capped.omitted == 1
    assert "1 more intermediate node(s) not drawn" in render_svg(capped)


@pytest.mark.parametrize("hostile", ['<script>alert("x")</script>', "a & b ' \" ]]> \x00\x1b[31m", "</svg><svg>"])
def test_svg_carries_any_name_as_text(graph, hostile, monkeypatch):
    names = graph.nodes.column("name").to_pylist()
    names[SCN1A] = hostile
    monkeypatch.setattr(type(graph), "name", lambda self, i: names[i])
    drawing = evidence_graph(record([around(DRAVET, (SCN1A, [hostile], []))], ranked=[SCN1A]), graph)
    text = render_svg(drawing, node_href=lambda i: f"#/node/{i}")
    root = ET.fromstring(text)  # well-formed whatever the names
    assert not [e for e in root.iter() if e.tag in (f"{SVG}script", "script")]
    clean = hostile.replace("\x00", "").replace("\x1b", "")
    [edge] = [e for e in root.iter() if e.get("class") == "ev-edge"]
    assert edge.get("data-relation") == clean and clean in edge.find(f"{SVG}title").text
    [node] = [e for e in root.iter() if e.get("data-index") == str(SCN1A)]
    assert node.find(f"{SVG}title").text.startswith(clean) and node.get("href") == f"#/node/{SCN1A}"
    assert xml_text("<&>\"'") == "&lt;&amp;&gt;&quot;&apos;"
