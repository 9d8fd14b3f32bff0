"""A plugin method written before the method contract carried typed records, returning its trajectories and record
as dicts, keeps working: the output is adapted to typed records (with one DeprecationWarning per process), its
accessors answer, and the run's trajectory file is byte for byte what the plugin's dicts made before."""

from __future__ import annotations

import json
import warnings

import pytest

from ark.eval.runner import run_retrieval
from ark.loaders.queries import Query
from ark.methods import MethodOutput, MethodSpec, NoOptions, Retriever, build_method, registry
from ark.methods import records as method_records
from ark.runtime.records import Trajectory
from ark.runtime.trajectory_file import pack_record
from tests.support.graphs import ONE_HOP, build_clinical_graph

LEGACY = MethodSpec("legacy-dicts", "an old plugin returning dicts", NoOptions,
                    "tests.methods.test_legacy_output:LegacyRetriever")


class LegacyRetriever(Retriever):
    """Returns what ARK's retriever returned before: ``Trajectory.to_dict()`` dicts (one with a key of the
    plugin's own) and the retrieval record as a dict."""

    def __init__(self, graph, options, context):
        self.inner = build_method("ark", graph, {"n_agents": 2})
        self.returned: list[tuple[list[dict], dict]] = []

    def retrieve(self, query: str, k: int) -> MethodOutput:
        typed = self.inner.retrieve(query, k)
        trajectories = [{**t.to_dict(), "plugin_note": f"agent {t.agent_index}"} for t in typed.trajectories]
        record = typed.record.to_record()
        self.returned.append((json.loads(json.dumps(trajectories)), json.loads(json.dumps(record))))
        return MethodOutput(typed.indices, typed.scores, trajectories=trajectories, record=record)


@pytest.fixture()
def legacy(monkeypatch):
    monkeypatch.setitem(registry._REGISTRY, LEGACY.name, LEGACY)  # registered for this test only
    monkeypatch.setattr(method_records, "_warned", False)
    return build_method("legacy-dicts", build_clinical_graph())


def test_dict_outputs_are_adapted_with_one_deprecation_warning_naming_the_plugin(legacy):
    with pytest.warns(DeprecationWarning, match="returned MethodOutput.trajectories or .record as dicts") as caught:
        output = legacy.retrieve(ONE_HOP[0], 10)
    assert caught[0].filename == __file__  # the warning points at the plugin's code
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        legacy.retrieve(ONE_HOP[0], 10)  # once per process
    trajectories, record = legacy.returned[0]
    assert all(isinstance(t, Trajectory) for t in output.trajectories)
    assert [len(t.steps) for t in output.trajectories] == [len(t["steps"]) for t in trajectories]
    assert output.votes() == {n["index"]: n["votes"] for n in record["ranked"]} and output.votes()
    assert output.record.question == ONE_HOP[0] and output.record.policy == record["policy"]
    answered = output.indices[0]
    assert output.evidence(answered) == list(dict.fromkeys(
        t["reasoning"][str(answered)] for t in trajectories if t["reasoning"].get(str(answered))))


def test_the_trajectory_file_of_a_dict_plugin_is_what_its_dicts_wrote_before(legacy, tmp_path):
    results, traj = tmp_path / "results.jsonl", tmp_path / "trajectories.jsonl"
    with pytest.warns(DeprecationWarning):
        run_retrieval(legacy, [Query("q0", ONE_HOP[0], [ONE_HOP[1]])], build_clinical_graph(), results, k=10,
                      trajectories_path=traj, progress=False)
    trajectories, record = legacy.returned[0]
    before = pack_record({"id": "q0", **record, "trajectories": trajectories})  # the runner's line before
    assert traj.read_text() == json.dumps(before, ensure_ascii=False) + "\n"
