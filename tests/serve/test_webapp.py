"""``ark serve``: the JSON API (through FastAPI's test client and a real uvicorn server on loopback), its errors,
the streamed steps, the run browser, and the binding rule."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from fastapi.testclient import TestClient  # noqa: E402

from ark.loaders import open_graph  # noqa: E402
from ark.serve.binding import LoopbackHostMiddleware, TokenMiddleware, check_binding  # noqa: E402
from ark.serve.graph_tools import GraphTools  # noqa: E402
from ark.serve.questions import ModelSettings, QuestionService  # noqa: E402
from ark.serve.webapp import MAX_BODY_BYTES, create_app  # noqa: E402
from tests.support.graphs import ONE_HOP, SHARED_FINDINGS, build_index, build_small_graph  # noqa: E402

from .conftest import WRONG_QUESTION, announced_url  # noqa: E402


@pytest.fixture(scope="module")
def app(clinical_dir, run_root):
    graph = open_graph(str(clinical_dir))
    tools = GraphTools(graph, build_index(graph), questions=QuestionService(graph, ModelSettings(offline=True)))
    return create_app(tools, runs=[run_root])


@pytest.fixture(scope="module")
def client(app):
    return TestClient(app, raise_server_exceptions=False)


def test_ask_returns_the_fused_ranking_with_evidence(client):
    answer = client.post("/api/ask", json={"question": ONE_HOP[0]})
    assert answer.status_code == 200
    top = answer.json()["ranked"][0]
    assert top["id"] == ONE_HOP[1] and top["votes"] == 3 and top["evidence"] == ["Linked to Marfan syndrome."]
    other = client.post("/api/ask", json={"question": ONE_HOP[0], "method": "bm25", "top": 3}).json()
    assert other["method"] == "bm25" and len(other["ranked"]) <= 3 and other["llm"] is None


@pytest.mark.parametrize(("body", "status", "words"), [
    ({"question": "x", "method": "nope"}, 400, ["nope", "bm25", "ark"]),
    ({"question": "x", "options": {"n_agents": "many"}}, 422, ["n_agents", "many"]),
    ({"question": "x", "options": {"agents": 3}}, 422, ["agents", "n_agents"]),
    ({"question": ""}, 422, ["question"]),
    ({"question": "x", "top": 0}, 422, ["top"]),
    ({"question": "x", "candidate_types": ["protein"]}, 422, ["protein", "gene"]),
    ({"question": "x", "model": {"model": "gpt-x"}}, 403, ["model.model", "--allow-request-models"]),
    ({"question": "x", "options": {"system_prompt": "obey"}}, 403, ["system_prompt", "server", "n_agents"]),
    ({"question": "x", "surprise": 1}, 422, ["surprise"]),
])
def test_bad_requests_get_a_4xx_json_error_naming_the_value(client, body, status, words):
    for path in ("/api/ask", "/api/ask/stream"):
        response = client.post(path, json=body)
        assert response.status_code == status, (path, response.text)
        error = response.json()["error"]
        assert all(word in error for word in words), error
        assert "Traceback" not in response.text


@pytest.mark.parametrize(("method", "options", "needs", "words"), [
    ("khop-filter", {"embedder": "no-such-embedder"}, "sentence_transformers", ["khop-filter", "no-such-embedder"]),
    ("seeder", {"model": "/no/such/seeder-model"}, "torch", ["seeder", "/no/such/seeder-model"]),
])
def test_options_refused_while_building_the_method_are_a_4xx(clinical_dir, client, method, options, needs, words):
    """An embedder or model folder is the server's (a request naming one: 403); one the server was given that does
    not exist is refused when the method is built: 422 naming the value, not a 500."""
    pytest.importorskip(needs)
    key = next(iter(options))
    refused = client.post("/api/ask", json={"question": "x", "method": method, "options": options})
    assert refused.status_code == 403 and refused.json()["kind"] == "server_setting", refused.text
    assert f"option {key!r} is set by the server" in refused.json()["error"]
    graph = open_graph(str(clinical_dir))
    service = QuestionService(graph, ModelSettings(offline=True), server_options={method: options})
    served = TestClient(create_app(GraphTools(graph, build_index(graph), questions=service)))
    for path in ("/api/ask", "/api/ask/stream"):
        response = served.post(path, json={"question": "x", "method": method})
        assert response.status_code == 422, (path, response.text)
        assert response.json()["kind"] == "invalid_options"
        assert all(word in response.json()["error"] for word in words), response.text


def test_a_request_names_its_model_only_where_the_server_allows_it(clinical_dir):
    """--allow-request-models: a request's model and endpoint are read (a model without an endpoint: 422 naming
    both); sandbox settings stay the server's (403)."""
    graph = open_graph(str(clinical_dir))
    service = QuestionService(graph, ModelSettings(offline=True), allow_request_models=True)
    served = TestClient(create_app(GraphTools(graph, build_index(graph), questions=service)))
    response = served.post("/api/ask", json={"question": "x", "model": {"model": "gpt-x"}})
    assert response.status_code == 422 and all(w in response.json()["error"] for w in ("gpt-x", "base_url"))
    assert served.get("/api/graph").json()["allow_request_models"] is True
    response = served.post("/api/ask", json={"question": "x", "method": "graphscout", "model": {
        "model": "m", "base_url": "http://127.0.0.1:9/v1"}, "options": {"sandbox": {"isolation": "rlimit"}}})
    assert response.status_code == 403 and "'sandbox.isolation' is set by the server" in response.json()["error"]


@pytest.mark.parametrize(("options", "words"), [
    ({"n_agents": 10**9}, ["n_agents=1000000000", "at most 16"]),
    ({"max_steps": 10**6}, ["max_steps=1000000", "at most 100"]),
])
def test_options_asking_for_unbounded_work_are_refused(client, options, words):
    """One short request must not be able to start a billion agents (it took the whole process down)."""
    response = client.post("/api/ask", json={"question": "x", "options": options})
    assert response.status_code == 422 and response.json()["kind"] == "invalid_options", response.text
    assert all(word in response.json()["error"] for word in words), response.text


def test_oversized_and_malformed_bodies_are_refused(client):
    big = client.post("/api/ask", content=b'{"question": "' + b"x" * (MAX_BODY_BYTES + 10) + b'"}',
                      headers={"content-type": "application/json"})
    assert big.status_code == 413 and "bytes" in big.json()["error"]

    def streamed():  # no Content-Length: counted as it arrives
        yield b'{"question": "'
        yield from (b"x" * 1000 for _ in range(MAX_BODY_BYTES // 1000 + 1))
        yield b'"}'

    chunked = client.post("/api/ask", content=streamed(), headers={"content-type": "application/json"})
    assert chunked.status_code == 413 and chunked.json()["kind"] == "too_large"
    small = client.post("/api/ask", content=iter([b'{"question": "', ONE_HOP[0].encode(), b'"}']),
                        headers={"content-type": "application/json"})
    assert small.status_code == 200 and small.json()["ranked"][0]["id"] == ONE_HOP[1]
    broken = client.post("/api/ask", content=b"{not json", headers={"content-type": "application/json"})
    assert broken.status_code == 422 and "not valid JSON" in broken.json()["error"]
    assert client.get("/api/nodes/HP:9999999").status_code == 404
    assert client.post("/api/tools/drop_graph", json={}).status_code == 404


def test_stream_sends_each_step_then_the_answer(client):
    with client.stream("POST", "/api/ask/stream", json={"question": ONE_HOP[0]}) as response:
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
        events = re.findall(r"event: (\w+)\ndata: (.*)\n\n", "".join(response.iter_text()))
    names = [name for name, _ in events]
    assert names[-1] == "answer" and set(names[:-1]) == {"step"} and len(names) > 3
    steps = [json.loads(data) for name, data in events if name == "step"]
    assert {s["agent"] for s in steps} == {0, 1, 2}
    assert steps[0]["step"] == 1 and steps[0]["calls"][0]["name"] == "search_in_graph"
    assert json.loads(events[-1][1])["ranked"][0]["id"] == ONE_HOP[1]


def test_node_view_has_text_and_typed_neighbours(client):
    node = client.get("/api/nodes/OMIM:154700").json()
    assert node["name"] == "Marfan syndrome" and "Marfan" in node["text"]
    neighbours = {(n["relation"], n["direction"], n["name"]) for n in node["neighbour_list"]}
    assert ("associated_gene", "out", "FBN1") in neighbours and len(neighbours) == node["neighbour_total"]
    assert client.get(f"/api/nodes/{node['index']}").json()["id"] == "OMIM:154700"


def test_graph_tools_over_http(client):
    paths = client.post("/api/tools/find_paths", json={"source": "NCBIGene:2200", "target": "HP:0001166"})
    assert paths.status_code == 200 and "Marfan syndrome" in paths.json()["text"]
    bad = client.post("/api/tools/search_in_surroundings", json={"node": 0, "hops": 3})
    assert bad.status_code == 422 and "hops" in bad.json()["text"]


def test_run_browser_lists_metrics_wrong_queries_and_trajectories(client):
    [run] = client.get("/api/runs").json()
    assert run["method"] == "ark" and run["hit@1"] == 0.5
    detail = client.get(f"/api/runs/{run['name']}").json()
    assert detail["by_template"]["one_hop"]["n"] == 2
    assert [w["id"] for w in detail["wrong"]] == ["q2"] and detail["n_trajectories"] == 2
    page = client.get(f"/api/runs/{run['name']}/trajectories").json()
    assert page["total"] == 2 and page["items"][1]["question"] == WRONG_QUESTION[0]
    record = client.get(f"/api/runs/{run['name']}/trajectories/0").json()
    assert len(record["trajectories"]) == 2 and record["trajectories"][0]["steps"][0]["tool_calls"]
    missing = client.get(f"/api/runs/{run['name']}/trajectories/9")
    assert missing.status_code == 404 and "0 to 1" in missing.json()["error"]
    assert client.get("/api/runs/nope").status_code == 404
    if importlib.util.find_spec("matplotlib") is not None:  # the run was made with --charts
        assert detail["charts"], detail
    for chart in detail["charts"]:
        assert client.get(f"/api/runs/{run['name']}/charts/{chart}").content[:4] == b"\x89PNG"
    assert client.get(f"/api/runs/{run['name']}/charts/..%2Fconfig.json").status_code == 404


def test_openapi_and_the_page_need_no_network(client):
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/api/ask", "/api/ask/stream", "/api/nodes/{ref}", "/api/runs"} <= set(paths)
    page = client.get("/").text
    assets = re.findall(r'(?:src|href)="([^"#]+)"', page)
    assert assets and all(a.startswith("/") for a in assets)  # every asset from this server
    script = client.get("/static/app.js").text
    assert "http://" not in script and "https://" not in script


def test_binding_rule():
    assert check_binding("127.0.0.1", False, None) is None and check_binding("::1", False, None) is None
    with pytest.raises(ValueError, match="--allow-remote"):
        check_binding("0.0.0.0", False, "x" * 20)
    with pytest.raises(ValueError, match="at least 16"):
        check_binding("0.0.0.0", True, "short")
    assert check_binding("0.0.0.0", True, "t" * 16) == "t" * 16


def test_loopback_server_answers_only_loopback_host_names(app):
    guarded = TestClient(LoopbackHostMiddleware(app), base_url="http://127.0.0.1:8000")
    assert guarded.get("/api/graph").status_code == 200
    for host in ("localhost:8000", "[::1]:8000", "127.0.0.2"):
        assert guarded.get("/api/graph", headers={"Host": host}).status_code == 200, host
    for host in ("evil.example", "evil.example:8000", "127.0.0.1.evil.example", "", "[::1"):
        refused = guarded.get("/api/graph", headers={"Host": host})
        assert refused.status_code == 421 and "Host" in refused.json()["error"], host


def test_token_is_required_when_set(app):
    guarded = TestClient(TokenMiddleware(app, "s" * 20))
    assert guarded.get("/api/graph").status_code == 401
    assert guarded.get("/api/graph", headers={"Authorization": "Bearer " + "s" * 20}).status_code == 200
    first = guarded.get("/?token=" + "s" * 20)
    assert first.status_code == 200 and "ark_token" in first.headers["set-cookie"]
    assert guarded.get("/api/graph").status_code == 200  # the cookie carries it from then on


def post_json(url: str, body: dict, timeout: float = 30, headers: dict | None = None) -> int:
    request = urllib.request.Request(url, json.dumps(body).encode(),
                                     {"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            response.read()
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def _rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return int(next(line for line in status if line.startswith("VmRSS")).split()[1])


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads resident memory from /proc")
def test_fifty_concurrent_offline_questions_on_loopback(clinical_dir, tmp_path):
    """The real ``ark serve`` command: 50 questions at once all answered (200) within 30 s; memory stays bounded."""
    process = subprocess.Popen([sys.executable, "-m", "ark.cli.main", "serve", str(clinical_dir), "--port", "0",
                                "--offline"], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        url = announced_url(process, r"listening on (http://127\.0\.0\.1:\d+)/", timeout=60)
        assert post_json(f"{url}/api/ask", {"question": "warm up"}) == 200
        # a web page reaching the loopback server through DNS rebinding sends its own host name: refused
        assert post_json(f"{url}/api/ask", {"question": "x"}, headers={"Host": "evil.example"}) == 421
        port = url.rsplit(":", 1)[1]
        assert post_json(f"{url}/api/ask", {"question": "warm up"}, headers={"Host": f"localhost:{port}"}) == 200
        before = _rss_kb(process.pid)
        questions = [f"{ONE_HOP[0]} ({n})" for n in range(50)]
        started = time.monotonic()
        with ThreadPoolExecutor(50) as pool:
            statuses = list(pool.map(lambda q: post_json(f"{url}/api/ask", {"question": q}), questions))
        elapsed = time.monotonic() - started
        grown_mb = (_rss_kb(process.pid) - before) / 1024
        assert statuses == [200] * 50 and elapsed < 30, (statuses, elapsed)
        assert grown_mb < 200, grown_mb
        print(f"50 concurrent offline questions: {elapsed:.2f} s, resident memory +{grown_mb:.1f} MB")
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_ark_serve_refuses_a_public_address_without_a_token(clinical_dir):
    done = subprocess.run([sys.executable, "-m", "ark.cli.main", "serve", str(clinical_dir), "--host", "0.0.0.0"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "refusing to listen on 0.0.0.0" in done.stderr


def test_answer_carries_ties_confidence_and_the_evidence_drawing(client):
    answer = client.post("/api/ask", json={"question": SHARED_FINDINGS[0]}).json()
    assert [row["tie_group"] for row in answer["ranked"]] == [1, 2, 2]
    assert answer["confidence"] == "medium" and "not understood" in answer["confidence_reason"]
    drawing = answer["evidence_graph"]
    roles = {node["index"]: node["role"] for node in drawing["nodes"]}
    assert {row["index"] for row in answer["ranked"]} == {i for i, role in roles.items() if role == "answer"}
    assert sum(role == "anchor" for role in roles.values()) == 4 and len(drawing["edges"]) == 8
    assert all(edge["uses"] and edge["relation"] == "has_phenotype" for edge in drawing["edges"])
    assert drawing["svg"].startswith("<svg") and f'href="#/node/{answer["ranked"][0]["index"]}"' in drawing["svg"]


def test_page_lists_the_methods_before_any_script_runs(client):
    page = client.get("/").text
    options = re.findall(r'<option value="([^"]+)"[^>]*>', page)
    assert "ark" in options and "bm25" in options and '<option value="ark" title="' in page
    assert re.search(r'<option value="ark"[^>]* selected>', page)


def test_run_browser_draws_a_runs_question_and_refuses_a_run_of_another_graph(client, run_root):
    [run] = client.get("/api/runs").json()
    drawing = client.get(f"/api/runs/{run['name']}/trajectories/0/evidence").json()
    names = {node["name"]: node["role"] for node in drawing["nodes"]}
    assert names == {"Marfan syndrome": "anchor", "FBN1": "answer"} and len(drawing["edges"]) == 1
    assert "<svg" in drawing["svg"]
    other = build_small_graph()
    tools = GraphTools(other, build_index(other), questions=QuestionService(other, ModelSettings(offline=True)))
    refused = TestClient(create_app(tools, runs=[run_root])).get(f"/api/runs/{run['name']}/trajectories/0/evidence")
    assert refused.status_code == 409 and "another graph" in refused.json()["error"]
