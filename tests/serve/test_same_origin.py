"""Who may make the servers spend a model: the real ``ark serve`` and ``ark mcp --transport http`` refuse a web page
of another origin (403, JSON, no model call) and a body that is not declared JSON; run-folder files never leave
their run; no page or response points at anything outside the server."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from fastapi.testclient import TestClient  # noqa: E402

from ark.loaders import open_graph  # noqa: E402
from ark.serve.graph_tools import GraphTools  # noqa: E402
from ark.serve.questions import ModelSettings, QuestionService  # noqa: E402
from ark.serve.webapp import STATIC, create_app  # noqa: E402
from tests.support.graphs import ONE_HOP, build_index  # noqa: E402

from .conftest import announced_url  # noqa: E402

ARK = [sys.executable, "-m", "ark.cli.main"]
EVIL = "http://evil.example"
SPEND = {"question": ONE_HOP[0], "method": "ark", "options": {"n_agents": 2, "max_steps": 3}}


def send(url: str, body: bytes, headers: dict[str, str], method: str = "POST") -> tuple[int, dict]:
    request = urllib.request.Request(url, body, headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, _json(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, _json(exc.read())


def _json(raw: bytes) -> dict:
    try:
        value = json.loads(raw)
    except ValueError:
        return {"raw": raw.decode("utf-8", "replace")[:200]}
    return value if isinstance(value, dict) else {"value": value}


def start(command: list[str], pattern: str) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        return process, announced_url(process, pattern, timeout=90)
    except BaseException:
        process.terminate()
        process.wait(timeout=30)
        raise


def test_ark_serve_refuses_cross_origin_requests_before_any_model_call(clinical_dir, openai_server):
    process, url = start([*ARK, "serve", str(clinical_dir), "--port", "0", "--model", "test-model", "--base-url",
                          openai_server.base_url], r"listening on (http://127\.0\.0\.1:\d+)/")
    try:
        body = json.dumps(SPEND).encode()
        for path in ("/api/tools/retrieve", "/api/ask", "/api/ask/stream"):
            for content_type in ("text/plain", "application/json"):
                status, answer = send(url + path, body, {"Content-Type": content_type, "Origin": EVIL})
                assert status == 403 and answer["kind"] == "cross_origin", (path, content_type, status, answer)
                assert EVIL in answer["error"] and url in answer["error"]
            status, answer = send(url + path, body, {"Content-Type": "application/json",
                                                     "Sec-Fetch-Site": "cross-site"})
            assert status == 403 and answer["kind"] == "cross_origin", (path, status, answer)
            status, answer = send(url + path, body, {"Content-Type": "text/plain"})  # a form or a "simple request"
            assert status == 415 and "application/json" in answer["error"], (path, status, answer)
        other_port = url.rsplit(":", 1)[0] + ":1"  # another loopback origin is another origin
        assert send(url + "/api/tools/retrieve", body, {"Content-Type": "application/json",
                                                         "Origin": other_port})[0] == 403
        assert openai_server.request_count == 0
        # the server's own page, and a client that is not a browser, are answered (the model is asked)
        bm25 = json.dumps({"question": ONE_HOP[0], "method": "bm25"}).encode()
        status, answer = send(url + "/api/tools/retrieve", bm25, {"Content-Type": "application/json", "Origin": url,
                                                                   "Sec-Fetch-Site": "same-origin"})
        assert status == 200 and answer["ok"], answer
        send(url + "/api/tools/retrieve", body, {"Content-Type": "application/json"})
        assert openai_server.request_count >= 1
        # no other site may show the page in a frame and have the user click its buttons (its own requests)
        for path in ("/", "/api/graph"):
            with urllib.request.urlopen(url + path, timeout=30) as response:
                assert response.headers["X-Frame-Options"] == "DENY", path
                assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"], path
    finally:
        process.terminate()
        process.wait(timeout=30)


def initialize(origin: str | None = None, content_type: str = "application/json") -> tuple[bytes, dict[str, str]]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "test", "version": "1"}}}
    headers = {"Content-Type": content_type, "Accept": "application/json, text/event-stream"}
    if origin is not None:
        headers["Origin"] = origin
    return json.dumps(body).encode(), headers


def test_ark_mcp_over_http_refuses_cross_origin_requests(clinical_dir, openai_server):
    pytest.importorskip("mcp")
    process, url = start([*ARK, "mcp", str(clinical_dir), "--transport", "http", "--port", "0", "--model",
                          "test-model", "--base-url", openai_server.base_url],
                         r"listening on (http://127\.0\.0\.1:\d+/mcp)")
    own = url.rsplit("/", 1)[0]
    try:
        call = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                           "params": {"name": "retrieve", "arguments": SPEND}}).encode()
        status, answer = send(url, call, {"Content-Type": "text/plain", "Origin": EVIL})
        assert status == 403 and answer["kind"] == "cross_origin" and EVIL in answer["error"], (status, answer)
        for origin in (EVIL, own.rsplit(":", 1)[0] + ":3000", "null"):  # another local page is another origin
            status, answer = send(url, *initialize(origin))
            assert status == 403 and answer["kind"] == "cross_origin", (origin, status, answer)
        assert send(url, *initialize(None, "text/plain"))[0] == 415
        assert openai_server.request_count == 0
        assert send(url, *initialize(own))[0] == 200  # its own origin, and clients without one, are answered
        assert send(url, *initialize())[0] == 200
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_same_origin_rule_by_header():
    from ark.serve.binding import SameOriginMiddleware

    rule = SameOriginMiddleware(None, token="t" * 20)
    host = {"host": "127.0.0.1:8000", "content-type": "application/json"}
    assert rule.problem("GET", {**host, "origin": EVIL}) is None  # reads are not refused (no CORS: unreadable)
    assert rule.problem("POST", {**host, "origin": "http://127.0.0.1:8000"}) is None
    assert rule.problem("POST", {**host, "sec-fetch-site": "none"}) is None
    assert rule.problem("POST", {**host, "origin": "HTTP://127.0.0.1:8000"}) is None
    assert rule.problem("DELETE", {"host": "127.0.0.1:8000"}) is None  # no body: no content type needed
    assert rule.problem("POST", {**host, "origin": EVIL})[0] == 403
    assert rule.problem("POST", {**host, "sec-fetch-site": "same-site"})[0] == 403
    assert rule.problem("DELETE", {**host, "origin": EVIL})[0] == 403
    assert rule.problem("POST", {**host, "origin": EVIL, "authorization": "Bearer " + "t" * 20}) is None
    assert rule.problem("POST", {**host, "origin": EVIL, "authorization": "Bearer " + "u" * 20})[0] == 403
    assert rule.problem("POST", {**host, "content-type": "application/json; charset=utf-8"}) is None
    for content_type in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
                         "application/jsonp", ""):
        assert rule.problem("POST", {**host, "content-type": content_type})[0] == 415, content_type


@pytest.fixture
def linked_run(run_root, tmp_path) -> Path:
    """A copy of the offline run whose chart and trajectory file are symlinks to files outside it."""
    [run] = [p for p in run_root.iterdir() if (p / "config.json").is_file()]
    copy = shutil.copytree(run, tmp_path / "runs" / run.name, symlinks=True)
    (copy / "charts").mkdir(exist_ok=True)
    (copy / "charts" / "x.png").symlink_to("/etc/passwd")
    secret = tmp_path / "secret.jsonl"
    secret.write_text('{"id": "secret", "question": "not this run\'s"}\n')
    (copy / "trajectories.jsonl").unlink()
    (copy / "trajectories.jsonl").symlink_to(secret)
    (copy / "charts" / "inside.png").symlink_to(copy / "charts" / "x.png")  # a link to a link leaving the run
    return copy


@pytest.mark.skipif(not Path("/etc/passwd").is_file(), reason="needs a file outside the run to link to")
def test_run_browser_never_serves_a_file_outside_its_run(clinical_dir, linked_run):
    graph = open_graph(str(clinical_dir))
    tools = GraphTools(graph, build_index(graph), questions=QuestionService(graph, ModelSettings(offline=True)))
    client = TestClient(create_app(tools, runs=[linked_run.parent]), raise_server_exceptions=False)
    name = linked_run.name
    for chart in ("x.png", "inside.png"):
        response = client.get(f"/api/runs/{name}/charts/{chart}")
        assert response.status_code == 404 and "root:" not in response.text, response.text[:200]
    detail = client.get(f"/api/runs/{name}").json()
    assert "x.png" not in detail["charts"] and detail["n_trajectories"] == 0
    assert client.get(f"/api/runs/{name}/trajectories").json() == {"total": 0, "items": []}
    assert client.get(f"/api/runs/{name}/trajectories/0").status_code == 404


def test_run_browser_never_lists_a_run_folder_linked_from_outside_its_root(clinical_dir, run_root, tmp_path):
    """A run folder under the root that is a symlink to a folder elsewhere holding a ``config.json`` (another
    tool's settings, say): it is not a run of this root, so nothing of it is listed or served."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "config.json").write_text('{"auths": {"registry": {"auth": "c2VjcmV0"}}}')
    (elsewhere / "summary.json").write_text('{"overall": {"hit@1": 1.0}, "n_queries": 1, "secret": "c2VjcmV0"}')
    [run] = [p for p in run_root.iterdir() if (p / "config.json").is_file()]
    root = tmp_path / "runs"
    shutil.copytree(run, root / run.name, symlinks=True)
    (root / "linked").symlink_to(elsewhere)
    graph = open_graph(str(clinical_dir))
    tools = GraphTools(graph, build_index(graph), questions=QuestionService(graph, ModelSettings(offline=True)))
    client = TestClient(create_app(tools, runs=[root]), raise_server_exceptions=False)
    assert [r["name"] for r in client.get("/api/runs").json()] == [run.name]
    response = client.get("/api/runs/linked")
    assert response.status_code == 404 and "c2VjcmV0" not in response.text, response.text[:200]


# Another host's URL; the SVG namespace name (an identifier: nothing is loaded from it) is not one.
EXTERNAL = re.compile(r"(?:https?:)?//(?!127\.0\.0\.1|localhost|testserver|\[::1\]|www\.w3\.org/2000/svg\b)"
                      r"[a-z0-9.-]+\.[a-z]{2,}", re.I)


def test_no_page_or_response_points_outside_the_server(clinical_dir, run_root):
    """Every route of the OpenAPI schema (GET and POST, with real parameters), the page, the API reference and every
    static file: no absolute URL of another host in any text response (no CDN, no outside asset; the charts are
    PNG images, whose metadata names their plotting library's site but loads nothing)."""
    graph = open_graph(str(clinical_dir))
    tools = GraphTools(graph, build_index(graph), questions=QuestionService(graph, ModelSettings(offline=True)))
    app = create_app(tools, runs=[run_root])
    client = TestClient(app, raise_server_exceptions=False)
    run = client.get("/api/runs").json()[0]["name"]
    charts = client.get(f"/api/runs/{run}").json()["charts"]
    values = {"ref": ONE_HOP[1], "name": run, "position": "0", "chart": charts[0] if charts else "none.png"}
    bodies = {"/api/ask": {"question": ONE_HOP[0]}, "/api/ask/stream": {"question": ONE_HOP[0]}}
    seen: dict[str, str] = {}
    paths = client.get("/openapi.json").json()["paths"]
    for template, operations in paths.items():
        for method in operations:
            for path in _expand(template, values, tools.names):
                tool = path.rsplit("/", 1)[-1]
                body = bodies.get(path, {"question": ONE_HOP[0], "method": "bm25"} if tool == "retrieve" else {})
                response = client.request(method.upper(), path, json=body if method == "post" else None)
                assert response.status_code < 500, (path, response.text[:200])
                if not response.headers["content-type"].startswith("image/"):  # a PNG's text chunk loads nothing
                    seen[f"{method.upper()} {path}"] = response.text
    for page in ("/", "/docs", "/openapi.json", "/redoc", "/docs/oauth2-redirect"):
        seen[page] = client.get(page).text
    for file in STATIC.rglob("*"):
        if file.is_file():
            seen[f"/static/{file.relative_to(STATIC)}"] = client.get(f"/static/{file.relative_to(STATIC)}").text
    assert len(seen) > 15 and "/api/tools/{name}" in paths
    outside = {where: EXTERNAL.findall(text)[:3] for where, text in seen.items() if EXTERNAL.search(text)}
    assert not outside, outside
    assert "/api/ask" in seen["/docs"] and "<script" not in seen["/docs"]


def _expand(template: str, values: dict[str, str], tool_names: list[str]) -> list[str]:
    if "{name}" in template and template.startswith("/api/tools/"):
        return [f"/api/tools/{tool}" for tool in tool_names]
    return [re.sub(r"\{(\w+)\}", lambda m: values[m.group(1)], template)]
