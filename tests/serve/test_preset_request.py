"""A request's ``preset`` (HTTP ``/api/ask``): the method's paper settings over the server's options and under the
request's own, checked through the same allow-list; the answer says which preset it ran under."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient  # noqa: E402

from ark.loaders import open_graph  # noqa: E402
from ark.serve.graph_tools import GraphTools  # noqa: E402
from ark.serve.questions import ModelSettings, QuestionService  # noqa: E402
from ark.serve.webapp import create_app  # noqa: E402
from tests.support.graphs import ONE_HOP, build_index  # noqa: E402


@pytest.fixture(scope="module")
def client(clinical_dir):
    graph = open_graph(str(clinical_dir))
    service = QuestionService(graph, ModelSettings(offline=True), server_options={"ark": {"n_agents": 2}})
    return TestClient(create_app(GraphTools(graph, build_index(graph), questions=service)),
                      raise_server_exceptions=False)


def test_a_request_preset_runs_the_papers_settings_over_the_servers_and_under_the_requests(client):
    answer = client.post("/api/ask", json={"question": ONE_HOP[0], "preset": "paper",
                                           "options": {"max_steps": 12}})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    options = body["options"]
    assert body["preset"] == "paper"
    assert options["scoring"] == "plain" and options["fusion_evidence"] is False
    assert options["n_agents"] == 3  # the paper's n over the server's 2
    assert options["max_steps"] == 12  # the request's own option over the preset
    assert body["ranked"][0]["id"] == ONE_HOP[1]
    plain = client.post("/api/ask", json={"question": ONE_HOP[0]}).json()
    assert plain["preset"] is None and plain["options"]["n_agents"] == 2 and "fusion_evidence" not in plain["options"]


@pytest.mark.parametrize(("body", "words"), [
    ({"preset": "papr"}, "unknown preset 'papr'; valid: paper"),
    ({"preset": "paper", "method": "bm25"}, "method 'bm25' has no preset 'paper'"),
])
def test_an_unknown_preset_or_one_the_method_lacks_is_a_422_naming_it(client, body, words):
    answer = client.post("/api/ask", json={"question": ONE_HOP[0], **body})
    assert answer.status_code == 422, answer.text
    assert words in answer.json()["error"]


def test_a_server_may_run_a_method_under_a_preset_and_a_request_still_sets_its_options(clinical_dir):
    graph = open_graph(str(clinical_dir))
    service = QuestionService(graph, ModelSettings(offline=True), server_options={"ark": {"preset": "paper"}})
    served = TestClient(create_app(GraphTools(graph, build_index(graph), questions=service)))
    body = served.post("/api/ask", json={"question": ONE_HOP[0], "options": {"n_agents": 2}}).json()
    assert body["preset"] == "paper" and body["options"]["scoring"] == "plain" and body["options"]["n_agents"] == 2
