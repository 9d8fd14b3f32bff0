"""The GRPO rollout environment and reward function on the clinical graph: the real toolbox, sandbox and reward;
no model (the calls are what a model's tool calls become)."""

from __future__ import annotations

import pytest

from tests.support.graphs import build_clinical_graph

pytest.importorskip("ladybug")

QUESTION = {"query": "Which genes are implicated in Marfan syndrome?", "answer": "FBN1", "answer_type": "set",
            "clue_ids": ["OMIM:154700", "NCBIGene:2200"]}


@pytest.fixture(scope="module")
def world():
    from ark.methods.graphscout.options import GraphScoutOptions
    from ark.methods.graphscout.training.environment import ScoutWorld

    made = ScoutWorld(build_clinical_graph(), GraphScoutOptions(system_prompt="Answer with the tools."))
    yield made
    made.close()
    made.engine.close()


def _answer(text: str) -> list[dict]:
    return [{"role": "assistant", "content": f"Done.\n\\answer{{{text}}}"}]


def test_tools_run_and_record_the_nodes_they_touch(world):
    env = world.environment()
    env.reset(**QUESTION)
    seen = env.node_id_retriever(["Marfan syndrome"], topk=1)
    assert "OMIM:154700" in seen
    printed = env.code_interpreter("rows = cypher(\"MATCH (d:disease {id: 'OMIM:154700'})-[:associated_gene]->(g:gene) "
                                   "RETURN g.id AS id\")\nprint(rows)")
    assert "NCBIGene:2200" in printed
    assert [c["name"] for c in env.calls] == ["node_id_retriever", "code_interpreter"]
    touched = {i for c in env.calls for i in c["node_indices"]}
    g = world.graph
    assert {g.index_of("OMIM:154700"), g.index_of("NCBIGene:2200")} <= touched
    env.reset(**QUESTION)  # a new rollout: nothing carried over, the sandbox's variables gone
    assert env.calls == []
    assert "NameError" in env.code_interpreter("print(rows)")


def test_bad_tool_arguments_get_an_observation_not_an_exception(world):
    env = world.environment()
    env.reset(**QUESTION)
    text = env.node_id_retriever([], topk=2)
    assert "non-empty list of 'queries'" in text
    assert env.calls[-1]["ok"] is False and env.crashed is None


def test_tool_schemas_are_the_environment_methods(world):
    pytest.importorskip("transformers")
    names = [s["function"]["name"] for s in world.tool_schemas()]
    assert names == ["node_id_retriever", "code_interpreter"]
    params = world.tool_schemas()[0]["function"]["parameters"]
    assert params["required"] == ["queries"] and params["properties"]["topk"]["type"] == "integer"


def test_retriever_only_ablation_offers_no_code_tool():
    from ark.methods.graphscout.options import GraphScoutOptions
    from ark.methods.graphscout.training.environment import RetrieverEnvironment, ScoutWorld

    world = ScoutWorld(build_clinical_graph(), GraphScoutOptions(code_interpreter=False))
    try:
        env = world.environment()
        assert type(env) is RetrieverEnvironment and not hasattr(env, "code_interpreter")
        assert world.pool is None
    finally:
        world.engine.close()


def test_reward_function_scores_each_rollout(world):
    from ark.methods.graphscout.reward import GraphScoutReward
    from ark.methods.graphscout.training.reward_function import GRPORewardFunction

    reward = GRPORewardFunction(GraphScoutReward(world.graph))
    right, wrong_but_grounded, no_wrapper = world.environment(), world.environment(), world.environment()
    for env in (right, wrong_but_grounded, no_wrapper):
        env.reset(**QUESTION)
    wrong_but_grounded.node_id_retriever(["Marfan syndrome"], topk=1)
    completions = [_answer("FBN1"), _answer("CBS"), [{"role": "assistant", "content": "FBN1"}]]
    scores = reward([None] * 3, completions, environments=[right, wrong_but_grounded, no_wrapper],
                    answer=["FBN1"] * 3, answer_type=["set"] * 3, clue_ids=[QUESTION["clue_ids"]] * 3)
    assert scores[0] == pytest.approx(1.0)
    assert scores[1] == pytest.approx(0.4)  # answer F1 0 + clue fraction 1/2, capped at delta
    assert scores[2] == 0.0
    assert reward.batches[-1]["answered"] == pytest.approx(2 / 3)


def test_a_crashed_sandbox_costs_that_sample_only(world, monkeypatch):
    from ark.methods.graphscout.reward import GraphScoutReward
    from ark.methods.graphscout.training.reward_function import GRPORewardFunction

    crashed, healthy = world.environment(), world.environment()
    crashed.reset(**QUESTION)
    healthy.reset(**QUESTION)

    def die(*_args, **_kwargs):
        raise RuntimeError("sandbox worker died")

    monkeypatch.setattr(crashed._toolbox, "execute", die)
    text = crashed.code_interpreter("print(1)")
    assert "sandbox worker died" in text and crashed.crashed
    assert "1" in healthy.code_interpreter("print(1)")
    scores = GRPORewardFunction(GraphScoutReward(world.graph))(
        [None] * 2, [_answer("FBN1"), _answer("FBN1")], environments=[crashed, healthy], answer=["FBN1"] * 2,
        answer_type=["set"] * 2, clue_ids=[QUESTION["clue_ids"]] * 2)
    assert scores == [0.0, pytest.approx(1.0)]
    crashed.reset(**QUESTION)  # the next rollout on this environment starts clean
    assert crashed.crashed is None and "2" in crashed.code_interpreter("print(2)")
