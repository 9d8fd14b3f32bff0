"""The sandbox usage record: counted in the process as a typed record, written to a run's files as JSON."""

import json

from ark.sandbox.usage import COUNTED_BY, SandboxCounts, SandboxUsage, add_usage


def test_usage_since_a_snapshot_is_none_until_a_worker_starts_then_what_happened_after_it():
    usage = SandboxUsage()
    usage.add("workers_started")
    before = usage.snapshot()
    assert usage.since(before) is None
    usage.add("resets_in_place", 2)
    usage.add("workers_ended", cpu_s=0.12345)
    assert usage.since(before) == SandboxCounts(0, 2, 1, 0, 0.123)
    assert usage.since() == SandboxCounts(workers_started=1, resets_in_place=2, workers_ended=1, workers_killed=0,
                                          worker_cpu_s=0.123)


def test_recorded_usage_keeps_its_json_form_and_resumed_attempts_add_up():
    first = SandboxCounts(1, 0, 1, 0, 0.5).to_json()
    assert json.dumps(first) == json.dumps({"workers_started": 1, "resets_in_place": 0, "workers_ended": 1,
                                            "workers_killed": 0, "worker_cpu_s": 0.5, "counted_by": COUNTED_BY})
    second = SandboxCounts(2, 0, 0, 1, 0.25).to_json()
    assert add_usage(first, second) == {"workers_started": 3, "resets_in_place": 0, "workers_ended": 1,
                                        "workers_killed": 1, "worker_cpu_s": 0.75, "counted_by": COUNTED_BY}
    assert add_usage({}, second) == second and add_usage(first, {}) == first
