"""Records as dicts: a step's dict has the keys and values the files have always had, in fresh containers, and a
retrieval's record without its agents is its full record minus ``agents``."""

from __future__ import annotations

from collections import namedtuple
from dataclasses import asdict

from ark.llm.policy import Usage
from ark.runtime.records import RankedNode, Retrieval, StepRecord, ToolCallRecord, Trajectory

Pair = namedtuple("Pair", "left right")


def _step() -> StepRecord:
    results = {"results": [{"index": 3, "name": "FBN1", "out": ["associated_gene"], "in": []}],
               "page": (1, 2), "pair": Pair([1], {"a": 2}), "nested": {"deep": [[1, 2], {"x": None}]}}
    calls = [ToolCallRecord.of("c1", "search_in_graph", '{"query": "FBN1"}', True, node_indices=[3, 4],
                               result=results),
             ToolCallRecord.of("c2", "finish", "{bad", False, ok=False, error="invalid arguments")]
    return StepRecord.of(0, calls, ["obs 1", "obs 2"], 0.25, 0.0, Usage(3, 4, 7), content="thinking",
                         corrective=None)


def test_a_step_record_is_the_files_dict_in_fresh_containers():
    step = _step()
    call = {"parsed_ok": True, "ok": True, "error": None, "node_indices": [3, 4],
            "result": asdict(step)["tool_calls"][0]["answer"]["result"]}  # asdict: the oracle of a fresh copy
    expected = {"index": 0, "tool_calls": [
        {"id": "c1", "name": "search_in_graph", "arguments": '{"query": "FBN1"}', **call},
        {"id": "c2", "name": "finish", "arguments": "{bad", "parsed_ok": False, "ok": False,
         "error": "invalid arguments", "node_indices": [], "result": None}],
        "observations": ["obs 1", "obs 2"], "wall_s": 0.25, "llm_s": 0.0, "usage": Usage(3, 4, 7).to_dict(),
        "cached": False, "content": "thinking", "corrective": None}
    got = step.to_dict()
    assert got == expected and list(got) == list(expected)
    assert type(got["tool_calls"][0]["result"]["page"]) is tuple
    assert type(got["tool_calls"][0]["result"]["pair"]) is Pair
    result = got["tool_calls"][0]["result"]
    assert result is not step.tool_calls[0].result
    assert result["results"][0] is not step.tool_calls[0].result["results"][0]
    assert result["nested"]["deep"][0] is not step.tool_calls[0].result["nested"]["deep"][0]
    assert got["tool_calls"][0]["node_indices"] is not step.tool_calls[0].node_indices
    assert got["observations"] is not step.observations
    assert StepRecord.from_dict(got).to_dict() == got


def test_a_retrieval_record_without_agents_is_the_full_record_less_agents():
    trajectory = Trajectory("q", steps=[_step()], answer=[3], reasoning={3: "linked"}, finished=True,
                            stop_reason="finish", error="boom")
    ranked = [RankedNode(3, "NCBIGene:2200", "FBN1", "gene", 2, 1.0, 0)]
    retrieval = Retrieval("q", ranked, [trajectory, Trajectory("q")], config={"n": 2}, policy="offline", graph="hpo")
    full, lean = retrieval.to_dict(), retrieval.to_dict(agents=False)
    assert "agents" in full and "partial" in full  # one agent failed
    assert lean == {key: value for key, value in full.items() if key != "agents"}
    assert list(lean) == [key for key in full if key != "agents"]
