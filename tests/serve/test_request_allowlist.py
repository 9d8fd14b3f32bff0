"""Nothing a client sends weakens the server: per-request options are an allow-list. The real ``ark serve`` and
``ark mcp`` refuse a request that switches GraphScout's sandbox to rlimits with its own model endpoint (the
downgrade that let model-written code read the user's files): a 4xx naming the option, no model call, a planted
canary never read. ``--allow-request-models`` lets a request choose its model, never the sandbox."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from ark.methods import get_method_spec, method_specs
from ark.methods.options import RequestOptionError, describe_options, request_keys, request_values
from tests.support.graphs import ONE_HOP
from tests.support.openai_server import text_reply, tool_reply, turn_script

from .conftest import announced_url

QUESTION = "How many genes are associated with Marfan syndrome?"
DOWNGRADES = ({"sandbox": {"isolation": "rlimit"}, "max_turns": 3}, {"sandbox.isolation": "rlimit"})


@pytest.fixture
def canary() -> Iterator[tuple[Path, str]]:
    """A file of the user's that model-written code must never read: its path and its secret content. Readable by
    every user, as /etc/passwd is (a sandbox worker started by root runs as nobody), so that only the sandbox keeps
    it unread (the old server, under rlimits, read it)."""
    secret = f"CANARY-{uuid.uuid4().hex}"
    folder = Path(tempfile.mkdtemp(prefix="ark-canary-"))
    try:
        folder.chmod(0o755)
        path = folder / "canary.txt"
        path.write_text(secret)
        path.chmod(0o644)
        yield path, secret
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def code_reading_model(openai_server, canary):
    """The scripted model: code that prints the canary file, then an answer."""
    code = f"print(open({str(canary[0])!r}).read())"
    openai_server.responder = turn_script([tool_reply(("code_interpreter", {"code": code})),
                                           text_reply("Done.\n\\answer{1}")])
    return openai_server


def never_read(server, secret: str, *replies: str) -> None:
    assert server.request_count == 0, "the model was called"
    assert not any(secret in json.dumps(request) for request in server.requests)
    assert not any(secret in reply for reply in replies)


# ------------------------------------------------------------------ the allow-list itself
def test_every_per_request_option_exists_and_none_is_a_server_setting():
    for name, spec in method_specs().items():
        known = {info.key for info in describe_options(spec.options)}
        allowed = request_keys(spec.options)
        assert set(allowed) <= known, (name, set(allowed) - known)
        for key in allowed:  # a test's guard, not the rule (the rule is the allow-list)
            assert not any(word in key for word in ("sandbox", "timeout", "embedder", "base_url", "system_prompt",
                                                    "device", "threads")), (name, key)
            assert key.rsplit(".", 1)[-1] != "model", (name, key)


def test_every_per_request_limit_has_a_server_cap():
    """An integer a request may set is bounded by its model or by the server's REQUEST_CAPS."""
    import annotated_types

    from ark.serve.questions import REQUEST_CAPS

    for name, spec in method_specs().items():
        for key in request_keys(spec.options):
            model = spec.options
            *groups, leaf = key.split(".")
            for group in groups:
                model = model.model_fields[group].annotation
            field = model.model_fields[leaf]
            if "int" not in str(field.annotation):
                continue
            bounded = any(isinstance(m, (annotated_types.Le, annotated_types.Lt)) for m in field.metadata)
            assert bounded or leaf in REQUEST_CAPS, f"{name}: per-request {key} has no upper bound and no cap"


def test_an_option_added_later_is_the_servers_by_default():
    from ark.methods.graphscout.options import GraphScoutOptions
    from ark.methods.registry import MethodSpec

    class Later(GraphScoutOptions):
        network: bool = False

    spec = MethodSpec("later", "a method whose options gained a field", Later, "x:y")
    assert request_values(spec, {"max_turns": 2, "retriever": {"max_topk": 5}}) == {"max_turns": 2,
                                                                                   "retriever.max_topk": 5}
    for given in ({"network": True}, {"sandbox": {"isolation": "rlimit"}}, {"sandbox": {"memory_mb": 64}},
                  {"retriever": {"embedder_base_url": "http://x"}}, {"sandbox": "rlimit"}):
        with pytest.raises(RequestOptionError, match="is set by the server") as refused:
            request_values(spec, given)
        assert refused.value.server_only
    with pytest.raises(RequestOptionError, match="unknown option 'nope'.*max_turns"):
        request_values(spec, {"nope": 1})


def test_the_question_service_refuses_server_settings_from_python(clinical_dir):
    """The Python API the servers call applies the same list: given nested, dotted or as an options object."""
    from ark.loaders import open_graph
    from ark.methods.graphscout.options import SandboxConfig
    from ark.serve.questions import ModelSettings, QuestionService, RequestError

    service = QuestionService(open_graph(str(clinical_dir)), ModelSettings(offline=True))
    spec = get_method_spec("graphscout")
    for options in (*DOWNGRADES, {"sandbox": SandboxConfig(isolation="rlimit")},
                    spec.options(sandbox=SandboxConfig(isolation="rlimit"))):
        with pytest.raises(RequestError, match="'sandbox.isolation' is set by the server") as refused:
            asyncio.run(service.prepare(QUESTION, "graphscout", options))
        assert refused.value.status == 403 and refused.value.kind == "server_setting"
    with pytest.raises(RequestError, match="model.base_url is set by the server") as refused:
        asyncio.run(service.prepare(QUESTION, "bm25", model=ModelSettings(base_url="http://127.0.0.1:9/v1")))
    assert refused.value.status == 403
    with pytest.raises(RequestError, match="max_topk=9999 is more than") as capped:  # a string counts as its value
        asyncio.run(service.prepare(QUESTION, "graphscout", {"retriever": {"max_topk": "9999"}}))
    assert capped.value.status == 422


# ------------------------------------------------------------------ the real servers
@contextmanager
def ark_serve(graph: Path, *flags: str) -> Iterator[str]:
    from .test_same_origin import ARK

    process = subprocess.Popen([*ARK, "serve", str(graph), "--port", "0", *flags], stderr=subprocess.PIPE,
                               stdout=subprocess.DEVNULL, text=True)
    try:
        yield announced_url(process, r"listening on (http://127\.0\.0\.1:\d+)/")
    finally:
        process.terminate()
        process.wait(timeout=30)


def post(url: str, body: dict) -> tuple[int, dict, str]:
    from .test_same_origin import send

    status, answer = send(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    return status, answer, json.dumps(answer)


def downgrade(server, options: dict) -> dict:
    return {"question": QUESTION, "method": "graphscout", "options": options,
            "model": {"model": "test-model", "base_url": server.base_url}}


def test_ark_serve_refuses_the_sandbox_downgrade_and_never_runs_the_code(clinical_dir, code_reading_model, canary):
    pytest.importorskip("fastapi")
    server, secret = code_reading_model, canary[1]
    for flags in ((), ("--allow-request-models",)):
        with ark_serve(clinical_dir, "--offline", *flags) as url:
            for options in DOWNGRADES:
                for path in ("/api/ask", "/api/ask/stream", "/api/tools/retrieve"):
                    status, answer, text = post(url + path, downgrade(server, options))
                    assert status == 403, (flags, path, status, answer)
                    assert "'sandbox.isolation' is set by the server, not per request" in text, answer
                    never_read(server, secret, text)
            methods = json.loads(_get(url + "/api/methods"))
            graphscout = next(m for m in methods if m["name"] == "graphscout")
            assert "max_turns" in graphscout["request_options"]
            assert not any(key.startswith("sandbox") for key in graphscout["request_options"])
    never_read(server, secret)


def test_ark_serve_reads_a_requests_model_only_with_allow_request_models(clinical_dir, openai_server):
    pytest.importorskip("fastapi")
    openai_server.responder = turn_script([tool_reply(("finish", {}))])
    ask = {"question": ONE_HOP[0], "method": "ark", "options": {"n_agents": 1, "max_steps": 2},
           "model": {"model": "test-model", "base_url": openai_server.base_url}}
    with ark_serve(clinical_dir, "--offline") as url:
        status, answer, _ = post(url + "/api/ask", ask)
        assert status == 403 and answer["kind"] == "server_setting", answer
        assert "model.model and model.base_url are set by the server" in answer["error"]
        assert "--allow-request-models" in answer["error"]
        assert openai_server.request_count == 0
    with ark_serve(clinical_dir, "--offline", "--allow-request-models") as url:
        status, answer, _ = post(url + "/api/ask", ask)
        assert status == 200 and answer["llm"] == "openai:test-model", answer
        assert openai_server.request_count >= 1


def _get(url: str) -> str:
    import urllib.request

    with urllib.request.urlopen(url, timeout=30) as response:
        return response.read().decode()


def mcp_calls(graph: Path, calls: list[dict], *flags: str) -> list[tuple[bool, str]]:
    """``retrieve`` called with each of ``calls`` on a real ``ark mcp`` over stdio (the SDK's client)."""
    pytest.importorskip("mcp")
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    from .test_same_origin import ARK

    target = StdioServerParameters(command=ARK[0], args=[*ARK[1:], "mcp", str(graph), *flags], env=dict(os.environ))

    async def run() -> list[tuple[bool, str]]:
        async with Client(target) as client:
            out = []
            for arguments in calls:
                result = await client.call_tool("retrieve", arguments)
                out.append((result.is_error, result.content[0].text))
            return out

    return asyncio.run(run())


def test_ark_mcp_retrieve_refuses_the_sandbox_downgrade(clinical_dir, code_reading_model, canary):
    server, secret = code_reading_model, canary[1]
    # The server's own model is the code-writing one: only the sandbox stands between it and the canary.
    calls = [{"question": QUESTION, "method": "graphscout", "options": options} for options in DOWNGRADES]
    calls.append(downgrade(server, {"max_turns": 3}))  # a model of the request's own: not on this server
    results = mcp_calls(clinical_dir, calls, "--model", "test-model", "--base-url", server.base_url)
    for (is_error, text), call in zip(results, calls, strict=True):
        assert is_error, (call, text)
        never_read(server, secret, text)
    assert "'sandbox.isolation' is set by the server" in results[0][1] and "max_turns" in results[0][1]
    assert "'sandbox.isolation' is set by the server" in results[1][1]
    assert "model.model and model.base_url are set by the server" in results[2][1]


def test_ark_mcp_with_allow_request_models_takes_the_model_never_the_sandbox(clinical_dir, code_reading_model,
                                                                             canary):
    server, secret = code_reading_model, canary[1]
    (refused, text), = mcp_calls(clinical_dir, [downgrade(server, DOWNGRADES[0])], "--offline",
                                 "--allow-request-models")
    assert refused and "'sandbox.isolation' is set by the server" in text, text
    never_read(server, secret, text)
    server.responder = turn_script([tool_reply(("finish", {}))])
    (failed, text), = mcp_calls(clinical_dir, [{"question": ONE_HOP[0], "options": {"n_agents": 1, "max_steps": 2},
                                                 "model": {"model": "test-model", "base_url": server.base_url}}],
                                "--offline", "--allow-request-models")
    assert not failed, text
    assert server.request_count >= 1


@pytest.mark.parametrize(("command", "sets", "words"), [
    ("serve", ["graphscout.sandbox.isolation=none"], ["sandbox.isolation", "'none'", "rlimit"]),
    ("mcp", ["graphscut.max_turns=3"], ["graphscut", "graphscout"]),
    ("serve", ["max_turns=3"], ["max_turns", "METHOD.KEY=VALUE"]),
])
def test_the_servers_own_method_options_are_checked_at_start(clinical_dir, command, sets, words):
    pytest.importorskip({"serve": "fastapi", "mcp": "mcp"}[command])  # without it the server stops before its options
    from typer.testing import CliRunner

    from ark.cli.main import app

    args = [command, str(clinical_dir), "--port", "0", *(part for value in sets for part in ("--set", value))]
    done = CliRunner().invoke(app, args)
    assert done.exit_code != 0, done.output
    text = " ".join(done.output.split())
    assert all(word in text for word in words), text
