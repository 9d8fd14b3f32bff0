"""A full GraphScout trajectory driven by a scripted OpenAI-compatible server on loopback, through the real client:
node_id_retriever -> code_interpreter with Cypher -> the answer in its wrapper."""

from __future__ import annotations

import asyncio
import json

from ark.llm import OpenAIChatClient, resolve_settings
from ark.methods.base import Answer
from ark.methods.graphscout.solver import GraphScout
from ark.methods.graphscout.tools import CODE_INTERPRETER, NODE_ID_RETRIEVER
from tests.support.openai_server import text_reply, tool_reply, turn_script

QUESTION = "How many genes are associated with Loeys-Dietz syndrome?"
CODE = ("rows = cypher('MATCH (d:disease {id: $id})-[:associated_gene]->(g:gene) RETURN g.id AS id, g.name AS name', "
        "{'id': 'OMIM:609192'})\nprint(len(rows), sorted(r['name'] for r in rows))")
SCRIPT = [
    tool_reply((NODE_ID_RETRIEVER, {"queries": ["Loeys-Dietz syndrome"], "topk": 2}), content="Find the disease.",
               prompt_tokens=900, completion_tokens=20),
    tool_reply((CODE_INTERPRETER, {"code": CODE}), prompt_tokens=1000, completion_tokens=60),
    tool_reply((CODE_INTERPRETER, "{\"code\": \"print(\""), prompt_tokens=1100, completion_tokens=10),  # broken
    text_reply("Two genes, TGFBR1 and TGFBR2.\n\\answer{2}", prompt_tokens=1200, completion_tokens=15),
]


def client(server, tmp_path) -> OpenAIChatClient:
    return OpenAIChatClient(resolve_settings(base_url=server.base_url, model="test-model", api_key="k", environ={},
                                             config_path=tmp_path / "absent.toml", use_cache=False,
                                             cache_dir=tmp_path / "llm-cache"))


def test_scripted_server_drives_retriever_code_answer(openai_server, scout, clinical, tmp_path):
    openai_server.responder = turn_script(SCRIPT)
    solver = GraphScout(clinical, client(openai_server, tmp_path), engine=scout.engine, index=scout.index)

    async def run():
        try:
            return await solver.asolve(QUESTION)
        finally:
            await solver.aclose()

    solution = asyncio.run(run())
    assert solution.answer == Answer("2", "number")
    trajectory = solution.trajectory
    assert trajectory.stop_reason == "answer" and trajectory.policy == "openai:test-model"
    assert trajectory.usage.prompt_tokens == 4200 and trajectory.usage.completion_tokens == 105
    requests = openai_server.requests
    assert len(requests) == 4
    first = requests[0]
    assert first["tool_choice"] == "auto"
    assert sorted(t["function"]["name"] for t in first["tools"]) == [CODE_INTERPRETER, NODE_ID_RETRIEVER]
    assert "Relationship tables" in first["messages"][0]["content"] and QUESTION in first["messages"][1]["content"]
    # what the model read back: the retriever's ids, then the output of its Cypher, then a helpful error
    tool_messages = [m for m in requests[3]["messages"] if m["role"] == "tool"]
    assert "OMIM:609192  Loeys-Dietz syndrome  (disease)" in tool_messages[0]["content"]
    assert tool_messages[1]["content"] == "2 ['TGFBR1', 'TGFBR2']"
    assert "Could not read the arguments of code_interpreter" in tool_messages[2]["content"]
    assert all("data" not in m for body in requests for m in body["messages"])  # structure stays on our side
    touched = {node.node_id for node in solution.ranked}
    assert {"OMIM:609192", "NCBIGene:7046", "NCBIGene:7048"} <= touched
    record = solution.to_dict()
    json.dumps(record)
    assert record["agents"][0]["steps"][1]["tool_calls"][0]["result"]["cypher_calls"][0]["rows"] == 2


# The genes are only given to the query (a count is printed, never their names): the model named them from memory.
UNSEEN_CODE = ("print(cypher('MATCH (g:gene) WHERE g.name IN $names RETURN count(g) AS n', "
               "{'names': ['TGFBR1', 'TGFBR2']}))")
UNSEEN_SCRIPT = [
    tool_reply((CODE_INTERPRETER, {"code": UNSEEN_CODE})),
    text_reply("\\answer{TGFBR1, TGFBR2}"),
]


def test_answer_nodes_no_observation_showed_are_not_ranked_as_answers(openai_server, scout, clinical, tmp_path):
    from ark.methods.graphscout.options import GraphScoutOptions

    def solve(options: GraphScoutOptions):
        openai_server.responder = turn_script(UNSEEN_SCRIPT)
        solver = GraphScout(clinical, client(openai_server, tmp_path), options, engine=scout.engine,
                            index=scout.index)

        async def run():
            try:
                return await solver.asolve("Which genes are associated with Loeys-Dietz syndrome?")
            finally:
                await solver.aclose()

        return asyncio.run(run())

    genes = {clinical.index_of("NCBIGene:7046"), clinical.index_of("NCBIGene:7048")}
    checked = solve(GraphScoutOptions())
    assert checked.trajectory.steps[0].tool_calls[0].result["stdout"].strip() == "[{'n': 2}]"
    assert {node.index for node in checked.ranked} == genes  # touched: given to the query
    assert not any(node.in_answer for node in checked.ranked)  # but never shown, so not ranked as the answer
    assert set(checked.unseen) == genes and set(checked.to_record()["unseen"]) == genes
    unchecked = solve(GraphScoutOptions(allow_unseen_answers=True))  # the switch: the answer's names, unchecked
    assert all(node.in_answer for node in unchecked.ranked) and unchecked.unseen == []
    assert "unseen" not in unchecked.to_record()
    assert "allow_unseen_answers" not in GraphScoutOptions().model_dump()  # recorded only when set
