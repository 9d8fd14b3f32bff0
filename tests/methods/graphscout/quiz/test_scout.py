"""The LLM scout quizzer through the real OpenAI client against the scripted loopback server: an accepted episode
(queries in the real sandbox), a refused report corrected, the answer rules, the tool budget, and a whole quiz."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from ark.llm import LLMSettings, OpenAIChatClient
from ark.methods.graphscout.quiz.cypher import verify_records
from ark.methods.graphscout.quiz.objective import Objective
from ark.methods.graphscout.quiz.scout import ScoutConfig, ScoutQuizzer, scout_quiz
from ark.methods.graphscout.quiz.scout_tools import (
    CypherFailure,
    CypherRowsResult,
    DirectCypher,
    ReportArgs,
    ReportResult,
    ScoutRetrieverResult,
    ScoutToolbox,
)
from ark.runtime.tools import dumped
from ark.storage.jsonl import read_jsonl
from tests.support.graphs import build_index
from tests.support.openai_server import Reply, tool_reply, turn_script

pytest.importorskip("ladybug")

MARFAN = "OMIM:154700"
COUNT_PHENOTYPES = "MATCH (d:disease {id: $d})-[:has_phenotype]->(p:phenotype) RETURN count(DISTINCT p) AS n"
NUMBER = Objective("number", "<h,r,*>", "simple", ("<h,r,*>",), 1)


def client(server) -> OpenAIChatClient:
    return OpenAIChatClient(LLMSettings(base_url=server.base_url, model="scout-model", api_key="k",
                                        temperature=0.0, max_retries=0, cache_dir=None))


def report(answer: str, **changes) -> tuple[str, dict]:
    args = {"question": "How many phenotypes does Marfan syndrome present with?", "answer": answer,
            "answer_type": "number", "clue_ids": [MARFAN], "verification_cypher": COUNT_PHENOTYPES,
            "verification_params": {"d": MARFAN}}
    return "report_question", {**args, **changes}


@pytest.fixture(scope="module")
def index(clinical_graph):
    return build_index(clinical_graph)


def run_episode(quizzer: ScoutQuizzer, seed_id: str, objective: Objective = NUMBER):
    graph = quizzer.graph

    async def go():
        try:
            return await quizzer.episode(objective, graph.index_of(seed_id))
        finally:
            await quizzer.policy.aclose()

    return asyncio.run(go())


def test_an_episode_explores_and_reports_a_question_the_graph_confirms(openai_server, clinical_graph,
                                                                       clinical_engine, index):
    openai_server.responder = turn_script([
        tool_reply(("node_id_retriever", {"queries": ["Marfan syndrome"], "topk": 2})),
        tool_reply(("cypher", {"query": "MATCH (d:disease {id: $d})-[:has_phenotype]->(p) RETURN p.name, p.id",
                               "params": {"d": MARFAN}})),
        tool_reply(report("6")),
    ])
    quizzer = ScoutQuizzer(clinical_graph, client(openai_server), ScoutConfig(runner="sandbox"),
                           engine=clinical_engine, index=index)
    episode = run_episode(quizzer, MARFAN)
    assert episode.accepted is not None and episode.tool_calls == 3
    assert (episode.accepted.answer, episode.accepted.clue_ids) == ("6", [MARFAN])
    first = openai_server.requests[0]
    assert {t["function"]["name"] for t in first["tools"]} == {"node_id_retriever", "cypher", "report_question"}
    system, user = first["messages"][0]["content"], first["messages"][1]["content"]
    assert "has_phenotype" in system and "10 tool calls" in system and "verification query" in system
    assert "answer type: number" in user and "Seed node: Marfan syndrome (id OMIM:154700, type disease)" in user
    steps = episode.trajectory.steps
    retrieved, queried = steps[0].tool_calls[0], steps[1].tool_calls[0]
    assert clinical_graph.index_of(MARFAN) in retrieved.node_indices
    assert "Ectopia lentis" in steps[1].observations[0] and "(6 rows)" in steps[1].observations[0]
    assert clinical_graph.index_of("HP:0001083") in queried.node_indices  # ids in the rows are touched
    record = quizzer.record(episode)
    assert record["quizzer"] == "scout" and record["answer"] == "6" and record["pattern"] == "<h,r,*>"
    assert verify_records([{**record, "id": "s1"}], clinical_engine, graph=clinical_graph)[0].ok
    assert not verify_records([{**record, "answer": "7"}], clinical_engine, graph=clinical_graph)[0].ok


def test_a_wrong_report_is_refused_with_what_the_graph_says_then_corrected(openai_server, clinical_graph,
                                                                          clinical_engine, index):
    openai_server.responder = turn_script([tool_reply(report("5")), tool_reply(report("six"))])
    quizzer = ScoutQuizzer(clinical_graph, client(openai_server), ScoutConfig(runner="direct"),
                           engine=clinical_engine, index=index)
    episode = run_episode(quizzer, MARFAN)
    refusal = episode.trajectory.steps[0].observations[0]
    assert "Not accepted: your verification query gives '6' but you reported '5'" in refusal
    assert "[9 tool calls left]" in refusal
    assert episode.accepted is not None and episode.accepted.answer == "6"  # "six" matches, the graph's text kept


def test_the_budget_ends_an_episode_without_a_question(openai_server, clinical_graph, clinical_engine, index):
    look = ("cypher", {"query": "MATCH (d:disease) RETURN count(d) AS n"})
    openai_server.responder = turn_script([tool_reply(look)] * 5)
    quizzer = ScoutQuizzer(clinical_graph, client(openai_server), ScoutConfig(runner="direct", budget=3),
                           engine=clinical_engine, index=index)
    episode = run_episode(quizzer, MARFAN)
    assert episode.accepted is None and episode.tool_calls == 3 and openai_server.request_count == 3
    assert "[budget] 3 tool calls spent" in episode.trajectory.steps[-1].observations[0]


@pytest.mark.parametrize(("answer_type", "changes", "message"), [
    ("set", {}, "objective asks for a set question, not number"),
    ("number", {"clue_ids": ["HP:nope"]}, "clue id(s) ['HP:nope'] are not nodes"),
    ("number", {"question": "How many phenotypes does OMIM:154700 have?"}, "shows internal id(s)"),
    ("number", {"verification_cypher": "MATCH (d:disease {id: $d}) RETURN d.name AS n"}, "returns a number"),
    ("number", {"verification_cypher": "MATCH (d:disease {id: $d}) RETRUN d"}, "verification query failed"),
    ("number", {"answer_type": "list"}, "answer_type must be one of"),
    ("boolean", {"answer_type": "boolean", "answer": "yes",
                 "verification_cypher": "MATCH (d:disease {id: $d})-[:has_phenotype]->(p) RETURN count(p) > 0"},
     "needs witness_id"),
    ("entity", {"answer_type": "entity", "answer": "Myopia",
                "verification_cypher": "MATCH (d:disease {id: $d})-[:has_phenotype]->(p) RETURN p"},
     "exactly one answer; the verification query gives 6"),
    ("set", {"answer_type": "set", "answer": "x",
             "verification_cypher": "MATCH (p:phenotype) WHERE p.id <> $d RETURN p"}, "add constraints"),
    ("set", {"answer_type": "set", "answer": "FBN1",
             "verification_cypher": "MATCH (d:disease {id: $d})-[:associated_gene]->(g) RETURN g"},
     "at least 2 members"),
])
def test_report_question_enforces_the_answer_rules(clinical_graph, clinical_engine, index, answer_type, changes,
                                                   message):
    box = ScoutToolbox(clinical_graph, DirectCypher(clinical_engine), index, MARFAN, answer_type)
    result = box.execute("report_question", json.dumps({**report("6")[1], **changes}))
    assert not result.ok and message in result.text and box.accepted is None and not box.finished


def test_accepted_sets_and_booleans_keep_the_graph_answer_and_nodes(clinical_graph, clinical_engine, index):
    box = ScoutToolbox(clinical_graph, DirectCypher(clinical_engine), index, "OMIM:609192", "set")
    args = ReportArgs(question="Which genes are associated with Loeys-Dietz syndrome?", answer="tgfbr2; TGFBR1",
                      answer_type="set", clue_ids=["OMIM:609192"], verification_params={"d": "OMIM:609192"},
                      verification_cypher="MATCH (d:disease {id: $d})-[:associated_gene]->(g:gene) RETURN g")
    result = box.execute("report_question", args.model_dump())
    assert result.ok and result.finished and box.finished
    assert (box.accepted.answer, box.accepted.answer_ids) == ("TGFBR1, TGFBR2", ["NCBIGene:7046", "NCBIGene:7048"])
    assert box.accepted.clue_ids == ["OMIM:609192", "NCBIGene:7046", "NCBIGene:7048"]
    yes = ScoutToolbox(clinical_graph, DirectCypher(clinical_engine), index, MARFAN, "boolean")
    result = yes.execute("report_question", {**report("yes")[1], "answer_type": "boolean", "witness_id": "HP:0000545",
                                             "verification_cypher": COUNT_PHENOTYPES})
    assert result.ok and yes.accepted.witness_id == "HP:0000545" and "HP:0000545" in yes.accepted.clue_ids
    assert isinstance(result.data, ReportResult) and dumped(result.data)["accepted"] == vars(yes.accepted)


def test_each_scout_tool_answers_with_its_result_model(clinical_graph, clinical_engine, index):
    box = ScoutToolbox(clinical_graph, DirectCypher(clinical_engine), index, MARFAN, "number")
    found = box.execute("node_id_retriever", {"queries": ["Marfan syndrome"], "topk": 2})
    assert isinstance(found.data, ScoutRetrieverResult) and found.data.results[0].node_id == MARFAN
    rows = box.execute("cypher", {"query": COUNT_PHENOTYPES, "params": {"d": MARFAN}})
    assert isinstance(rows.data, CypherRowsResult) and rows.data.row_count == 1 and not rows.data.truncated
    bad = box.execute("cypher", {"query": "MATCH (n) RETRUN n"})
    assert not bad.ok and isinstance(bad.data, CypherFailure) and bad.data.error == "cypher" and bad.data.message
    assert all(tool.spec.result_model is not None for tool in box.tools.bound)


def test_a_whole_scout_quiz(openai_server, clinical_graph, clinical_engine, index, tmp_path):
    def respond(body):
        user = body["messages"][1]["content"]
        seed_id = re.search(r"\(id (\S+), type", user).group(1)
        node = clinical_graph.index_of(seed_id)
        count = len(set(clinical_graph.neighbors(node).nodes.tolist()))
        return Reply([("report_question", {
            "question": f"How many nodes are directly linked to {clinical_graph.name(node)}?", "answer": str(count),
            "answer_type": "number", "clue_ids": [seed_id],
            "verification_cypher": "MATCH (n {id: $s})-[]-(m) RETURN count(DISTINCT m) AS n",
            "verification_params": {"s": seed_id}})])

    openai_server.responder = respond
    trajectories = tmp_path / "episodes.jsonl"
    config = ScoutConfig(n=6, seed=0, runner="direct", answer_types=("number",), trajectory_path=trajectories)

    async def go():
        policy = client(openai_server)
        try:
            return await scout_quiz(clinical_graph, policy, config, engine=clinical_engine, index=index)
        finally:
            await policy.aclose()

    result = asyncio.run(go())
    questions = result.questions
    assert len(questions) == 6 and {q["answer_type"] for q in questions} == {"number"}
    assert sorted(q["split"] for q in questions).count("train") == 3 and all(q["quizzer"] == "scout" for q in questions)
    assert all(q["id"].startswith("clinical-scoutquiz-s0-") for q in questions)
    assert [v.detail for v in verify_records(questions, clinical_engine, graph=clinical_graph) if not v.ok] == []
    episodes = read_jsonl(trajectories)
    assert len(episodes) == result.attempts and all(e["accepted"] for e in episodes)
    with pytest.raises(ValueError, match="answer_types must be some of"):
        ScoutConfig(answer_types=("list",))
