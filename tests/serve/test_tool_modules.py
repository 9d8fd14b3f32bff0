"""The served tools are tool modules like ARK's: each declares a result model beside its argument model, published
as MCP's ``outputSchema``, and every successful call's structured result is that model; ``retrieve`` has a real,
asynchronous handler, which the synchronous path refuses with a clear error."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

from ark.runtime.tools import BoundTool, Refusal, ToolResult, ToolSet, ToolSpec, dumped
from ark.serve.graph_tools import GraphTools, ResultLimits
from ark.serve.questions import ModelSettings, QuestionService
from ark.serve.tools import retrieve
from ark.serve.tools.retrieve import RetrieveResult
from tests.support.graphs import ONE_HOP, build_clinical_graph, build_index


@pytest.fixture(scope="module")
def tools() -> GraphTools:
    graph = build_clinical_graph()
    return GraphTools(graph, build_index(graph), ResultLimits(max_rows=5, max_chars=1500),
                      questions=QuestionService(graph, ModelSettings(offline=True)))


def _specs(tools: GraphTools) -> dict[str, ToolSpec]:
    return {tool.spec.name: tool.spec for tool in tools._tools().bound}


CALLS = {"search_in_graph": {"query": "Marfan"}, "search_in_neighborhood": {"node_index": 0},
         "get_node": {"node": 0}, "graph_schema": {}, "search_in_surroundings": {"node": 0, "hops": 2},
         "find_paths": {"source": 0, "target": 1}, "retrieve": {"question": ONE_HOP[0]}}


def test_every_served_tool_publishes_its_result_model_as_output_schema(tools):
    schemas = {schema["name"]: schema for schema in tools.mcp_schemas()}
    specs = _specs(tools)
    assert set(schemas) == set(CALLS)
    for name, schema in schemas.items():
        model = specs[name].result_model
        assert model is not None, f"{name} declares no result model"
        assert schema["outputSchema"] == model.model_json_schema(by_alias=True)


def test_the_mcp_prompts_answer_tools_publish_their_result_models(tools):
    pytest.importorskip("mcp")  # the mcp extra: the prompts module builds on its Prompt classes
    from ark.serve.mcp_prompts import AnswerTools

    answer = {schema["name"]: schema for schema in AnswerTools(tools.graph, 1500).mcp_schemas()}
    assert all("outputSchema" in schema for schema in answer.values()) and set(answer) == {"add_to_answer", "finish"}


def test_a_successful_call_gives_its_result_model_and_the_written_dict_reads_back(tools):
    specs = _specs(tools)
    for name, arguments in CALLS.items():
        result = asyncio.run(tools.aexecute(name, arguments))
        model = specs[name].result_model
        assert result.ok, (name, result.text)
        assert isinstance(result.data, model), name
        assert model.model_validate(dumped(result.data)) == result.data  # MCP's structuredContent is the model


def test_retrieve_runs_the_method_through_its_handler(tools):
    result = asyncio.run(tools.aexecute("retrieve", {"question": ONE_HOP[0], "limit": 3}))
    assert isinstance(result.data, RetrieveResult) and result.data.llm == "offline"
    assert result.data.ranked[0].id == ONE_HOP[1] and len(result.data.ranked) <= 3
    assert result.node_indices == [row.index for row in result.data.ranked]
    unknown = asyncio.run(tools.aexecute("retrieve", {"question": ONE_HOP[0], "method": "nope"}))
    assert not unknown.ok and isinstance(unknown.data, Refusal) and "nope" in unknown.text


def test_the_synchronous_path_refuses_an_asynchronous_tool_by_name(tools):
    with pytest.raises(TypeError, match="'retrieve' is asynchronous: run it with aexecute"):
        tools.execute("retrieve", {"question": ONE_HOP[0]})


class EchoArgs(BaseModel):
    text: str


def test_a_tool_set_awaits_an_asynchronous_handler_and_counts_its_refusals():
    async def echo(args: EchoArgs) -> ToolResult:
        await asyncio.sleep(0)
        return ToolResult(args.text.upper())

    tools = ToolSet([BoundTool(ToolSpec("echo", "Echo.", EchoArgs), echo)])
    assert asyncio.run(tools.aexecute("echo", '{"text": "hi"}')).text == "HI"
    refused = asyncio.run(tools.aexecute("echo", '{"txt": "hi"}'))
    assert not refused.ok and tools.telemetry.invalid_calls == 1
    with pytest.raises(TypeError, match="asynchronous"):
        tools.execute("echo", '{"text": "hi"}')


def test_retrieve_is_only_offered_with_a_question_service():
    graph = build_clinical_graph()
    bare = GraphTools(graph, build_index(graph))
    assert retrieve.NAME not in bare.names
    assert not bare.execute(retrieve.NAME, {"question": "q"}).ok  # an unknown tool, said so
