"""``ark mcp`` over a graph that changes: the MCP tools pick up a new version between calls (the graph and its BM25
index reopened), each call answering from one version; the retrieve tool answers from the same version."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pyarrow as pa
import pytest

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402

from ark.graph import KnowledgeGraph, load_graph, save_graph  # noqa: E402
from ark.graph.versioning import update_graph  # noqa: E402
from ark.graph.versioning.delta import EDGE_SCHEMA, GraphDelta, empty_edges, empty_nodes  # noqa: E402
from ark.index import open_index  # noqa: E402
from ark.serve.graph_tools import GraphTools  # noqa: E402
from ark.serve.mcp_server import build_mcp_server  # noqa: E402
from ark.serve.questions import ModelSettings, QuestionService  # noqa: E402
from tests.support.graphs import build_clinical_graph  # noqa: E402

NEW = {"id": "HP:9999999", "type": "phenotype", "name": "Zebrine stripes of the skin",
       "text": "Zebrine stripes of the skin: alternating pale and dark bands", "properties": "{}"}


def _add_new_node(folder: Path, graph: KnowledgeGraph) -> None:
    neighbour = graph.node_id(0)
    edges = pa.table({"source": [NEW["id"]], "target": [neighbour], "relation": [graph.relation_types[0]]},
                     schema=EDGE_SCHEMA)
    update_graph(folder, GraphDelta(pa.Table.from_pylist([NEW], schema=empty_nodes().schema), edges, empty_edges(),
                                    pa.array([], pa.string())))


@pytest.mark.parametrize("with_questions", [False, True])
def test_mcp_tools_pick_up_a_new_version_between_calls(tmp_path: Path, with_questions: bool) -> None:
    save_graph(build_clinical_graph(), tmp_path / "g")
    graph = load_graph(tmp_path / "g")
    questions = QuestionService(graph, ModelSettings(offline=True)) if with_questions else None
    tools = GraphTools(graph, open_index(graph, kind="bm25", progress=False), questions=questions)

    async def script(client: Client) -> list:
        before = await client.call_tool("search_in_graph", {"query": "zebrine stripes"})
        missing = await client.call_tool("get_node", {"node": NEW["id"]})
        _add_new_node(tmp_path / "g", graph)
        after = await client.call_tool("search_in_graph", {"query": "zebrine stripes"})
        found = await client.call_tool("get_node", {"node": NEW["id"]})
        return [before, missing, after, found]

    async def go() -> list:
        async with Client(build_mcp_server(tools)) as client:
            return await script(client)

    before, missing, after, found = asyncio.run(go())
    text = [r.content[0].text for r in (before, missing, after, found)]
    assert NEW["id"] not in text[0] and "not found" in text[1]
    assert "Zebrine stripes of the skin" in text[2] and NEW["id"] in text[3], text
    assert tools.graph.metadata["graph_version"] == 1 and tools.index.graph is tools.graph
    if questions is not None:
        assert questions.graph is tools.graph  # one version for the tools and for retrieve
