"""``ark mcp`` as a host sees it: the real command over stdio and streamable HTTP, driven by the reference client
(the MCP Inspector's CLI from npm, skipped where npx or the package cannot be had) and by the official SDK's client;
and a host loop that runs the served prompt with a scripted model over the served tools, reaching ``ark ask``'s
answer with the same model."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from tests.support.openai_server import text_reply, tool_reply, turn_script  # noqa: E402

from .conftest import announced_url  # noqa: E402
from .test_mcp import ARK  # noqa: E402

INSPECTOR = "@modelcontextprotocol/inspector-cli@0.15.0"  # installs alone (0.20.0, 1.0.3 do not) and runs on Node 20
NPM_PREFIX = Path(os.environ.get("ARK_TEST_NPM_PREFIX", Path.home() / ".cache" / "ark-test-npm"))
QUESTION = "Which gene is linked to Marfan syndrome?"
CLINICAL_TYPES = ["phenotype", "disease", "gene", "is_a", "has_phenotype", "associated_gene"]
Methods = Callable[[list[tuple[str, dict]]], list[dict]]  # [(method, params)] -> their JSON results


# ------------------------------------------------------------------ the servers
def serve_args(graph: Path, runs: Path) -> list[str]:
    return ["mcp", str(graph), "--offline", "--max-rows", "5", "--runs", str(runs)]


@contextmanager
def http_server(graph: Path, runs: Path) -> Iterator[str]:
    process = subprocess.Popen([*ARK, *serve_args(graph, runs), "--transport", "http", "--port", "0"],
                               stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        yield announced_url(process, r"listening on (http://127\.0\.0\.1:\d+/mcp)")
    finally:
        process.terminate()
        process.wait(timeout=30)


# ------------------------------------------------------------------ the clients
@pytest.fixture(scope="module")
def inspector() -> list[str]:
    """The Inspector CLI's command: npm installs it into NPM_PREFIX once (.ci/run does it beforehand)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("Node.js (node, npm) is not installed: the MCP Inspector CLI cannot run")
    cli = NPM_PREFIX / "node_modules" / "@modelcontextprotocol" / "inspector-cli" / "build" / "cli.js"
    if not cli.is_file():
        try:
            done = subprocess.run([npm, "install", "--prefix", str(NPM_PREFIX), "--no-audit", "--no-fund",
                                   INSPECTOR], capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired:
            pytest.skip(f"npm could not install {INSPECTOR} within 5 minutes")
        if done.returncode != 0 or not cli.is_file():
            pytest.skip(f"npm could not install {INSPECTOR} (offline?): {done.stderr.strip()[-300:]}")
    return [node, str(cli)]


def inspector_methods(command: list[str], target: list[str]) -> Methods:
    def run(calls: list[tuple[str, dict]]) -> list[dict]:
        out = []
        for method, params in calls:
            flags = ["--method", method]
            if "name" in params:
                flags += ["--prompt-name", params["name"], "--prompt-args",
                          *(f"{k}={v}" for k, v in params["arguments"].items())]
            if "uri" in params:
                flags += ["--uri", params["uri"]]
            done = subprocess.run([*command, "--cli", *target, *flags], capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, f"{method}: {done.stdout[-500:]} {done.stderr[-1000:]}"
            out.append(json.loads(done.stdout))
        return out

    return run


def sdk_methods(target: object) -> Methods:
    def run(calls: list[tuple[str, dict]]) -> list[dict]:
        async def go() -> list[dict]:
            out = []
            async with Client(target) as client:
                for method, params in calls:
                    if method == "prompts/get":
                        result = await client.get_prompt(params["name"], params["arguments"])
                    elif method == "resources/read":
                        result = await client.read_resource(params["uri"])
                    else:
                        result = await {"prompts/list": client.list_prompts, "resources/list": client.list_resources,
                                        "resources/templates/list": client.list_resource_templates}[method]()
                    out.append(result.model_dump(mode="json", by_alias=True, exclude_none=True))
            return out

        return asyncio.run(go())

    return run


# ------------------------------------------------------------------ what a host reads
def check_prompts_and_resources(methods: Methods) -> None:
    prompts, got, resources, templates, node = methods([
        ("prompts/list", {}),
        ("prompts/get", {"name": "ark", "arguments": {"question": QUESTION}}),
        ("resources/list", {}),
        ("resources/templates/list", {}),
        ("resources/read", {"uri": "ark://clinical/node/NCBIGene:2200"}),
    ])
    ark = next(p for p in prompts["prompts"] if p["name"] == "ark")
    assert ark["arguments"] == [{"name": "question", "required": True,
                                 "description": "The question to answer from the graph, in plain language."}]
    text = got["messages"][0]["content"]["text"]
    assert all(name in text for name in CLINICAL_TYPES) and text.endswith(QUESTION)
    assert "`search_in_neighborhood(node_index, query, node_types, edge_types)`" in text
    assert {r["uri"] for r in resources["resources"]} == {
        "ark://clinical/schema", "ark://clinical/runs", "ark://clinical/runs/clinical-ark"}
    assert "ark://clinical/node/{id}" in [t["uriTemplate"] for t in templates["resourceTemplates"]]
    page = node["contents"][0]["text"]
    assert page.startswith("[25] FBN1 (gene) · id NCBIGene:2200") and "[19] Marfan syndrome (disease)" in page


def test_inspector_cli_over_stdio(inspector, clinical_dir, run_root):
    check_prompts_and_resources(inspector_methods(inspector, [*ARK, *serve_args(clinical_dir, run_root)]))


def test_inspector_cli_over_streamable_http(inspector, clinical_dir, run_root):
    with http_server(clinical_dir, run_root) as url:
        check_prompts_and_resources(inspector_methods(inspector, [url]))


def test_sdk_client_over_stdio(clinical_dir, run_root):
    check_prompts_and_resources(sdk_methods(StdioServerParameters(
        command=ARK[0], args=[*ARK[1:], *serve_args(clinical_dir, run_root)], env=dict(os.environ))))


def test_sdk_client_over_streamable_http(clinical_dir, run_root):
    with http_server(clinical_dir, run_root) as url:
        check_prompts_and_resources(sdk_methods(url))


# ------------------------------------------------------------------ a host running the prompt with a model
def scripted_model(graph_dir: Path) -> list:
    """Anchor Marfan syndrome (COL3A1 among the results), list its genes, add FBN1, then COL3A1 with FBN1 again
    (kept first), finish."""
    from ark.graph import load_graph

    graph = load_graph(graph_dir)
    marfan, fbn1, col3a1 = (graph.index_of(i) for i in ("OMIM:154700", "NCBIGene:2200", "NCBIGene:1281"))
    return [
        tool_reply(("search_in_graph", {"query": "Marfan syndrome COL3A1", "size": 30})),
        tool_reply(("search_in_neighborhood", {"node_index": marfan, "node_types": ["gene"]})),
        tool_reply(("add_to_answer", {"answer_nodes": [{"node_index": fbn1, "reasoning": "its associated gene"}]})),
        tool_reply(("add_to_answer", {"answer_nodes": [{"node_index": col3a1, "reasoning": "a look-alike"},
                                                       {"node_index": fbn1}]})),
        tool_reply(("finish", {})),
    ]


@dataclass
class Hosted:
    prompt: str  # what the prompt gave the host's model
    answer: list[str]  # the node ids add_to_answer recorded, first recording first
    final: str | None  # the model's last text (a reply without tool calls), if it ended so


async def host_loop(target: object, base_url: str, prompt: str, question: str, max_turns: int = 20) -> Hosted:
    """What an MCP host does with a prompt: its model (here the OpenAI client) gets the prompt's messages and the
    served tools; every call goes to the server; it ends at finish or at a reply without tool calls."""
    import openai

    model = openai.AsyncOpenAI(base_url=base_url, api_key="k")
    async with Client(target) as client:
        got = await client.get_prompt(prompt, {"question": question})
        listed = await client.list_tools()
        tools = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                   "parameters": t.input_schema}} for t in listed.tools]
        messages: list[dict] = [{"role": m.role, "content": m.content.text} for m in got.messages]
        hosted = Hosted(messages[0]["content"], [], None)
        for _ in range(max_turns):
            reply = (await model.chat.completions.create(model="test-model", messages=messages, tools=tools))
            message = reply.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                hosted.final = message.content
                return hosted
            for called in message.tool_calls:
                result = await client.call_tool(called.function.name, json.loads(called.function.arguments))
                assert not result.is_error, result.content[0].text
                messages.append({"role": "tool", "tool_call_id": called.id, "content": result.content[0].text})
                if called.function.name == "add_to_answer":
                    hosted.answer += [row["id"] for row in result.structured_content["added"]
                                      if row["id"] not in hosted.answer]
                if called.function.name == "finish":
                    return hosted
    raise AssertionError("the scripted model neither finished nor answered")


def stdio_server(graph: Path) -> StdioServerParameters:
    return StdioServerParameters(command=ARK[0], args=[*ARK[1:], "mcp", str(graph), "--offline"], env=dict(os.environ))


def ask_with(openai_server, graph: Path, question: str, *options: str) -> dict:
    from ark.cli.main import app

    asked = CliRunner().invoke(app, ["ask", str(graph), question, "--base-url", openai_server.base_url, "--model",
                                     "test-model", "--json", *options], env={"OPENAI_API_KEY": "dummy-key"})
    assert asked.exit_code == 0, asked.output
    return json.loads(asked.stdout)


def test_a_host_running_the_prompt_reaches_ark_asks_answer(clinical_dir, openai_server):
    openai_server.responder = turn_script(scripted_model(clinical_dir))
    hosted = asyncio.run(host_loop(stdio_server(clinical_dir), openai_server.base_url, "ark", QUESTION))
    hosted_requests = len(openai_server.requests)
    record = ask_with(openai_server, clinical_dir, QUESTION, "--set", "n_agents=1")
    assert hosted.answer == ["NCBIGene:2200", "NCBIGene:1281"]
    assert [row["node_id"] for row in record["ranked"]] == hosted.answer
    agents_system = openai_server.requests[hosted_requests]["messages"][0]["content"]
    assert hosted.prompt.startswith(agents_system)  # the host's model read the text ARK's agent read


def test_a_host_running_graphscouts_prompt_reaches_its_answer(clinical_dir, openai_server):
    pytest.importorskip("ladybug")
    openai_server.responder = turn_script([tool_reply(("node_id_retriever", {"queries": ["Marfan syndrome"]})),
                                           text_reply("Its gene in the graph is FBN1.\n\\answer{FBN1}")])
    hosted = asyncio.run(host_loop(stdio_server(clinical_dir), openai_server.base_url, "graphscout", QUESTION))
    hosted_requests = len(openai_server.requests)
    record = ask_with(openai_server, clinical_dir, QUESTION, "--method", "graphscout", "--set",
                      "code_interpreter=false")
    from ark.methods.graphscout.answer import extract_answer

    assert extract_answer(hosted.final) == record["answer"]["text"] == "FBN1"
    solver_system = openai_server.requests[hosted_requests]["messages"][0]["content"]
    assert hosted.prompt.startswith(solver_system)
