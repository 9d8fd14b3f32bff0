"""``ark mcp``: the graph tools through the official MCP client: in process (the small clinical graph), and the
real command over stdio and streamable HTTP on the built-in HPO graph."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

from ark.methods.ark.tools import Toolbox  # noqa: E402
from ark.serve.graph_tools import GraphTools, ResultLimits  # noqa: E402
from ark.serve.mcp_graphscout import graphscout_available  # noqa: E402
from ark.serve.mcp_server import build_mcp_server  # noqa: E402
from ark.serve.questions import ModelSettings, QuestionService  # noqa: E402
from tests.support.graphs import ONE_HOP, build_clinical_graph, build_index  # noqa: E402

from .conftest import announced_url  # noqa: E402

TOOLS = ["search_in_graph", "search_in_neighborhood", "get_node", "graph_schema", "search_in_surroundings",
         "find_paths", "retrieve", "add_to_answer", "finish",
         *(["node_id_retriever"] if graphscout_available() else [])]  # GraphScout's prompt names it
FBN1_HPO = 32455  # NCBIGene:2200 in the built-in HPO graph
ARK = [sys.executable, "-m", "ark.cli.main"]


@pytest.fixture(scope="module")
def clinical_tools():
    graph = build_clinical_graph()
    return GraphTools(graph, build_index(graph), ResultLimits(max_rows=5, max_chars=1500),
                      questions=QuestionService(graph, ModelSettings(offline=True)))


def call(tools, script):
    async def go():
        async with Client(build_mcp_server(tools)) as client:
            return await script(client)

    return asyncio.run(go())


def test_tools_have_arks_schemas_and_are_read_only(clinical_tools):
    listed = call(clinical_tools, lambda c: c.list_tools())
    assert [t.name for t in listed.tools] == TOOLS
    own = {s["name"]: s for s in Toolbox(clinical_tools.graph, clinical_tools.index,
                                         clinical_tools.tool_config).mcp_tools()}
    by_name = {t.name: t for t in listed.tools}
    # the agent's own schemas, stating the server's sizes (here at most 5 rows, as ResultLimits says)
    assert "at most 5)" in by_name["search_in_graph"].input_schema["properties"]["size"]["description"]
    for name in ("search_in_graph", "search_in_neighborhood"):
        assert by_name[name].input_schema == own[name]["inputSchema"]
    assert all(t.annotations.read_only_hint and not t.annotations.destructive_hint for t in listed.tools)


def test_typed_tools_declare_their_result_and_what_they_return_conforms(clinical_tools):
    """search_in_graph and search_in_neighborhood declare an outputSchema (their result models); the client
    validates every successful call's structured content against it (a mismatch would raise here)."""
    async def script(client):
        listed = await client.list_tools()
        found = await client.call_tool("search_in_graph", {"query": "Marfan syndrome"})
        centre = found.structured_content["results"][0]["index"]
        around = await client.call_tool("search_in_neighborhood", {"node_index": centre})
        return listed, found, around

    listed, found, around = call(clinical_tools, script)
    schemas = {t.name: t.output_schema for t in listed.tools}
    assert schemas["search_in_graph"]["title"] == "SearchInGraphResult"
    assert set(schemas["search_in_neighborhood"]["required"]) >= {"center", "total", "edge_types"}
    assert not found.is_error and not around.is_error
    assert around.structured_content["center"] == found.structured_content["results"][0]["index"]
    assert list(around.structured_content["results"][0]) == ["index", "out", "in"]


def test_search_then_neighbourhood_then_node_and_paths(clinical_tools):
    graph = clinical_tools.graph
    fbn1 = graph.index_of("NCBIGene:2200")

    async def script(client):
        found = await client.call_tool("search_in_graph", {"query": "FBN1"})
        around = await client.call_tool("search_in_neighborhood", {"node_index": fbn1})
        node = await client.call_tool("get_node", {"node": "NCBIGene:2200"})
        by_name = await client.call_tool("find_paths", {"source": "NCBIGene:2200", "target": "Marfan syndrome"})
        paths = await client.call_tool("find_paths", {"source": fbn1, "target": "HP:0001166"})
        return found, around, node, by_name, paths

    found, around, node, by_name, paths = call(clinical_tools, script)
    assert not found.is_error and found.structured_content["results"][0]["index"] == fbn1
    assert f"[{fbn1}] FBN1 (gene)" in found.content[0].text
    assert "Marfan syndrome (disease)" in around.content[0].text and not around.is_error
    assert node.structured_content["id"] == "NCBIGene:2200" and node.structured_content["degree"] >= 1
    assert by_name.is_error and "not found" in by_name.content[0].text  # a name is not an id: told what to send
    # FBN1 <-associated_gene- Marfan syndrome -has_phenotype-> Arachnodactyly
    assert not paths.is_error and paths.structured_content["direct"] is None
    assert paths.structured_content["results"][0]["id"] == "OMIM:154700"
    assert "<-associated_gene- [" in paths.content[0].text and "-has_phenotype-> [" in paths.content[0].text


def test_filters_around_a_node_keep_only_what_was_asked(clinical_tools):
    """The neighbourhood's set filters, and the 1-2-hop search's node types, edge types and query ranking."""
    graph = clinical_tools.graph
    marfan = graph.index_of("OMIM:154700")
    found = graph.neighbors(marfan)
    phenotypes = {graph.node_id(int(i)) for i, r in zip(found.nodes, found.relations, strict=True)
                  if graph.relation_types[int(r)] == "has_phenotype"}

    async def script(client):
        return [await client.call_tool(name, args) for name, args in [
            ("search_in_neighborhood", {"node_index": marfan, "node_types": ["gene", "disease"]}),
            ("search_in_surroundings", {"node": "NCBIGene:2200", "hops": 2, "node_types": ["phenotype"]}),
            ("search_in_surroundings", {"node": "NCBIGene:2200", "hops": 2, "edge_types": ["associated_gene"]}),
            ("search_in_surroundings", {"node": "NCBIGene:2200", "hops": 2, "query": "arachnodactyly", "limit": 3}),
        ]]

    around, typed, by_edge, ranked = call(clinical_tools, script)
    assert not any(r.is_error for r in (around, typed, by_edge, ranked))
    assert "found 1 result" in around.content[0].text and "[25] FBN1 (gene)" in around.content[0].text  # no phenotype
    shown = {r["id"] for r in typed.structured_content["results"]}  # at most 5 rows on this server
    assert len(phenotypes) == 6 and "found 6 nodes" in typed.content[0].text and len(shown) == 5
    assert shown <= phenotypes
    assert [r["id"] for r in by_edge.structured_content["results"]] == ["OMIM:154700"]  # phenotypes need has_phenotype
    assert ranked.structured_content["results"][0]["id"] == "HP:0001166"  # Arachnodactyly ranked first


def test_errors_are_tool_results_naming_what_to_send(clinical_tools):
    async def script(client):
        return [await client.call_tool(name, args) for name, args in [
            ("get_node", {"node": "HP:9999999"}),
            ("search_in_neighborhood", {"node_index": 10_000}),
            ("search_in_surroundings", {"node": 0, "node_types": ["protein"]}),
            ("search_in_graph", {"query": "x" * 60_000}),
            ("retrieve", {"question": "anything", "method": "nope"}),
            ("retrieve", {"question": "anything", "options": {"n_agents": "many"}}),
            ("retrieve", {"question": "anything", "options": {"n_agents": 10**9}}),
        ]]

    results = call(clinical_tools, script)
    assert all(r.is_error for r in results)
    texts = [r.content[0].text for r in results]
    assert "not found" in texts[0] and "search_in_graph" in texts[0]
    assert "node indices run from 0 to 31" in texts[1] or "does not exist" in texts[1]
    assert "protein" in texts[2] and "phenotype" in texts[2]  # the bad type and the valid ones
    assert "too long" in texts[3] or "characters" in texts[3]
    assert "nope" in texts[4] and "bm25" in texts[4]
    assert "n_agents" in texts[5]
    assert "n_agents=1000000000" in texts[6] and "at most 16" in texts[6]  # no billion agents from one call


def test_rows_and_characters_are_capped(clinical_tools):
    async def script(client):
        return await client.call_tool("search_in_surroundings", {"node": "NCBIGene:2200", "hops": 2, "limit": 500})

    result = call(clinical_tools, script)
    assert len(result.structured_content["results"]) <= 5
    assert "capped at 5 rows" in result.content[0].text and len(result.content[0].text) <= 1500


def test_retrieve_gives_evidence_not_an_answer(clinical_tools):
    question, fbn1 = ONE_HOP

    async def script(client):
        return await client.call_tool("retrieve", {"question": question})

    result = call(clinical_tools, script)
    top = result.structured_content["ranked"][0]
    assert top["id"] == fbn1 and top["votes"] == 3 and top["evidence"]
    assert "Evidence:" in result.content[0].text and result.structured_content["llm"] == "offline"


def check_hpo_session(client_target) -> None:
    """Through a real transport: list the tools, search a gene symbol (its diseases name it), explore the genes
    around the first hit: the gene itself is there."""
    async def go():
        async with Client(client_target) as client:
            listed = await client.list_tools()
            found = await client.call_tool("search_in_graph", {"query": "FBN1"})
            hit = found.structured_content["results"][0]["index"]
            around = await client.call_tool("search_in_neighborhood", {"node_index": hit, "node_type": "gene"})
            return listed, found, around

    listed, found, around = asyncio.run(go())
    assert [t.name for t in listed.tools] == TOOLS
    assert not found.is_error and found.content[0].text.count("**FBN1**") >= 3  # each hit's text names the gene
    assert not around.is_error and f"[{FBN1_HPO}] FBN1 (gene)" in around.content[0].text


@pytest.mark.slow
def test_ark_mcp_hpo_over_stdio(use_hpo_home):
    env = {**os.environ, "ARK_HOME": str(use_hpo_home)}
    check_hpo_session(StdioServerParameters(command=ARK[0], args=[*ARK[1:], "mcp", "hpo", "--offline"], env=env))


@pytest.mark.slow
def test_ark_mcp_hpo_over_streamable_http(use_hpo_home):
    env = {**os.environ, "ARK_HOME": str(use_hpo_home)}
    process = subprocess.Popen([*ARK, "mcp", "hpo", "--transport", "http", "--port", "0", "--offline"], env=env,
                               stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        url = announced_url(process, r"listening on (http://127\.0\.0\.1:\d+/mcp)")
        check_hpo_session(url)
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_ark_mcp_refuses_a_public_address_without_a_token(tmp_path):
    done = subprocess.run([*ARK, "mcp", "hpo", "--transport", "http", "--host", "0.0.0.0"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2
    assert "refusing to listen on 0.0.0.0" in done.stderr and "--allow-remote" in done.stderr
    done = subprocess.run([*ARK, "mcp", "hpo", "--transport", "http", "--host", "0.0.0.0", "--allow-remote",
                           "--token", "short"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "at least 16 characters" in done.stderr


# ------------------------------------------------------------------ prompts, answer tools and resources
def test_prompt_is_the_agents_own_system_prompt_and_names_only_served_tools(clinical_tools):
    import re

    from ark.methods.ark.options import ArkOptions
    from ark.methods.ark.prompt import first_user_message, render_system_prompt

    question = "Which gene is linked to Marfan syndrome?"

    async def script(client):
        return (await client.list_prompts(), await client.get_prompt("ark", {"question": question}),
                await client.list_tools())

    listed, got, tools = call(clinical_tools, script)
    prompt = next(p for p in listed.prompts if p.name == "ark")
    assert [(a.name, a.required) for a in prompt.arguments] == [("question", True)]
    text = got.messages[0].content.text
    graph = clinical_tools.graph
    # the text ARK's agents get under the served sizes (the table-2 sizes here are capped by --max-rows 5)
    agents = render_system_prompt(graph, clinical_tools.tool_config, ArkOptions().max_steps)
    assert text == f"{agents}\n{first_user_message(question)}" and "at most 5)" in text
    assert all(t in text for t in [*graph.node_types, *graph.relation_types, "disease -associated_gene-> gene"])
    named = set(re.findall(r"`([a-z_]+)\(", text))
    assert {"search_in_graph", "search_in_neighborhood", "add_to_answer", "finish"} <= named
    assert named <= {t.name for t in tools.tools}  # a host's model can call every tool the strategy names


def test_answer_tools_record_nodes_without_state(clinical_tools):
    fbn1 = clinical_tools.graph.index_of("NCBIGene:2200")

    async def script(client):
        return [await client.call_tool(name, args) for name, args in [
            ("add_to_answer", {"answer_nodes": [{"node_index": fbn1, "reasoning": "causes it"},
                                                {"node_index": 999}, {"node_index": fbn1}]}),
            ("add_to_answer", {"answer_nodes": [{"node_index": 999}]}),
            ("add_to_answer", {"answer_nodes": []}),
            ("finish", {"confidence": "high"}),
        ]]

    added, only_missing, empty, finished = call(clinical_tools, script)
    assert not added.is_error and [r["id"] for r in added.structured_content["added"]] == ["NCBIGene:2200"]
    assert added.structured_content["missing"] == [999] and "Valid indices are 0 to 31" in added.content[0].text
    assert f"[{fbn1}] FBN1 (gene)" in added.content[0].text and "Reasoning: causes it" in added.content[0].text
    assert only_missing.is_error and empty.is_error and "answer_nodes is empty" in empty.content[0].text
    assert not finished.is_error and finished.structured_content["confidence"] == "high"


def test_node_pages_and_schema_are_resources(clinical_tools):
    from mcp.shared.exceptions import MCPError

    async def script(client):
        listed, templates = await client.list_resources(), await client.list_resource_templates()
        pages = [await client.read_resource(uri) for uri in (
            "ark://clinical/schema", "ark://clinical/node/OMIM:154700", "ark://clinical/node/OMIM%3A154700",
            f"ark://clinical/node/{clinical_tools.graph.index_of('OMIM:154700')}")]
        with pytest.raises(MCPError) as refused:
            await client.read_resource("ark://clinical/node/OMIM:999")
        return listed, templates, pages, refused.value

    listed, templates, pages, refused = call(clinical_tools, script)
    assert [str(r.uri) for r in listed.resources] == ["ark://clinical/schema"]
    assert [t.uri_template for t in templates.resource_templates] == ["ark://clinical/node/{id}"]
    schema, *marfan = [page.contents[0].text for page in pages]
    assert "disease -associated_gene-> gene (7)" in schema and "degree: mean 3.06" in schema
    assert marfan[0] == marfan[1] == marfan[2] and marfan[0].startswith("[19] Marfan syndrome (disease)")
    assert "- associated_gene -> gene (1): [25] FBN1 (gene)" in marfan[0]
    assert "has_phenotype -> phenotype (6): " in marfan[0] and "Properties" not in marfan[0]
    assert "'OMIM:999' not found" in str(refused) and "search_in_graph" in str(refused)


def test_run_folders_are_resources(clinical_tools, run_root):
    import json

    from mcp.shared.exceptions import MCPError

    async def script(client):
        listed = await client.list_resources()
        runs = await client.read_resource("ark://clinical/runs")
        one = await client.read_resource("ark://clinical/runs/clinical-ark")
        record = await client.read_resource("ark://clinical/runs/clinical-ark/trajectories/1")
        with pytest.raises(MCPError) as unknown:
            await client.read_resource("ark://clinical/runs/nope")
        return listed, runs, one, record, unknown.value

    async def go():
        async with Client(build_mcp_server(clinical_tools, runs=[run_root])) as client:
            return await script(client)

    listed, runs, one, record, unknown = asyncio.run(go())
    assert {str(r.uri) for r in listed.resources} == {"ark://clinical/schema", "ark://clinical/runs",
                                                      "ark://clinical/runs/clinical-ark"}
    assert [r["name"] for r in json.loads(runs.contents[0].text)] == ["clinical-ark"]
    detail = json.loads(one.contents[0].text)
    assert detail["n_queries"] == 2 and [w["id"] for w in detail["wrong"]] == ["q2"]
    assert json.loads(record.contents[0].text)["question"].startswith("Which genes cause vascular")
    assert "no run named 'nope'" in str(unknown) and "clinical-ark" in str(unknown)


def test_graphscout_prompt_is_the_solvers_retriever_only_prompt(clinical_tools):
    if not graphscout_available():
        pytest.skip("the graphdb extra (ladybug) is not installed: no GraphScout prompt")
    from ark.graphdb.schema import build_schema
    from ark.methods.graphscout.prompt import render_system_prompt

    async def script(client):
        got = await client.get_prompt("graphscout", {"question": "Which gene is linked to Marfan syndrome?"})
        found = await client.call_tool("node_id_retriever", {"queries": ["Marfan syndrome", "FBN1"]})
        return got, found

    got, found = call(clinical_tools, script)
    text = got.messages[0].content.text
    solver = render_system_prompt(clinical_tools.graph, build_schema(clinical_tools.graph), code=False)
    assert text == f"{solver}\nQuestion: Which gene is linked to Marfan syndrome?"
    assert "- associated_gene: (disease)-[:associated_gene]->(gene) 7 edges" in text and "code_interpreter" not in text
    best: dict[str, str] = {}
    for row in found.structured_content["results"]:
        best.setdefault(row["query"], row["node_id"])
    assert best == {"Marfan syndrome": "OMIM:154700", "FBN1": "NCBIGene:2200"}


def test_a_bad_question_is_refused_naming_what_to_send(clinical_tools):
    from mcp.shared.exceptions import MCPError

    async def script(client):
        refusals = []
        for arguments in ({}, {"question": "   "}, {"question": "x" * 2001}, {"question": "q", "top": "3"}):
            with pytest.raises(MCPError) as refused:
                await client.get_prompt("ark", arguments)
            refusals.append(refused.value)
        return refusals

    missing, empty, long, extra = call(clinical_tools, script)
    assert all(r.code == -32602 for r in (missing, empty, long, extra))  # invalid params, not an internal error
    assert "'question' is missing or empty" in missing.message and "'question' is missing or empty" in empty.message
    assert "2,001 characters long; the limit is 2,000" in long.message
    assert "unknown argument(s) 'top'" in extra.message and '{"question": "' in extra.message


def test_ark_mcp_refuses_runs_that_are_not_a_folder(clinical_dir, tmp_path):
    done = subprocess.run([*ARK, "mcp", str(clinical_dir), "--runs", str(tmp_path / "missing")], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and f"--runs {tmp_path / 'missing'}: not a folder" in done.stderr
