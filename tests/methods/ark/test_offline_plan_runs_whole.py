"""The offline policy's steps run whole in the tool loop, on the real HPO graph (slow: ``-m slow``).

The loop runs at most a policy's ``max_tool_calls_per_turn`` calls of one reply (32 unless the policy says
otherwise), a guard against a model's runaway reply. The offline policy's verify step checks 40 to 60 candidates per
anchor type; cut at 32, the candidates after the 32nd lose the support their own neighbourhood shows and can fall
out of the answer. The patient case below (a phenopacket of phenopackets-dev) is one where that happened: its
diagnosis was the 38th candidate checked by the third agent.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow

# PMID_20887961_Patient_2 of phenopackets-dev; its diagnosis is Van den Ende-Gupta syndrome.
PATIENT = ("A female patient presents with posteriorly rotated ears, blepharophimosis, scaphocephaly, convex nasal "
           "ridge, elbow contracture, high palate, micrognathia, hypoplasia of the maxilla, tapered finger, everted "
           "lower lip vermilion. Absent: hypoplastic scapulae, short clavicles, short ribs. Which disease is the "
           "most likely diagnosis?")
DIAGNOSIS = "OMIM:600920"


@pytest.fixture(scope="module")
def retrieval(hpo_ark):
    _, ark = hpo_ark
    return ark.retrieve(PATIENT)


def test_every_call_the_offline_policy_plans_is_run(retrieval):
    notes = [o for t in retrieval.trajectories for step in t.steps for o in step.observations if "were not run" in o]
    assert notes == []
    ran = [len(step.tool_calls) for t in retrieval.trajectories for step in t.steps]
    assert max(ran) > 32  # the verify step's calls, more than the loop's default cap for a model, all ran


def test_the_diagnosis_checked_late_in_the_verify_step_ranks_first(retrieval):
    assert retrieval.ranked[0].node_id == DIAGNOSIS
