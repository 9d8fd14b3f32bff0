"""The parent's checks of the frames a worker sends: a result or a query frame that does not match its schema is
refused with a message naming the field (and becomes a ``protocol`` observation in :class:`CodeSandbox`)."""

from __future__ import annotations

import pytest

from ark.sandbox.protocol import FrameInvalid, check_cypher_frame, check_result_frame

GOOD = {"op": "result", "id": 3, "stdout": "2\n", "error": None, "error_kind": None, "cypher_kind": None,
        "elapsed_s": 0.01, "output_truncated": False,
        "cypher_calls": [{"query": "RETURN 1", "rows": 1, "truncated": False, "ms": 0.5, "node_indices": [4],
                          "strings": ["FBN1"]}]}


def test_a_well_formed_result_frame_passes():
    fields = check_result_frame(GOOD, 3)
    assert fields["stdout"] == "2\n" and fields["elapsed_s"] == 0.01 and fields["cypher_calls"][0]["rows"] == 1


@pytest.mark.parametrize(("change", "field"), [
    ({"elapsed_s": "x"}, "elapsed_s"), ({"elapsed_s": float("nan")}, "elapsed_s"), ({"elapsed_s": -1}, "elapsed_s"),
    ({"elapsed_s": True}, "elapsed_s"), ({"id": 4}, "result of call 3"), ({"id": True}, "result of call 3"),
    ({"op": "cypher"}, "result of call 3"), ({"stdout": 5}, "stdout"), ({"stdout": "x" * 200_001}, "stdout"),
    ({"error": ["x"]}, "error"), ({"error_kind": "root"}, "error_kind"), ({"cypher_kind": "a b"}, "cypher_kind"),
    ({"output_truncated": "no"}, "output_truncated"), ({"cypher_calls": {}}, "cypher_calls"),
    ({"cypher_calls": [{}] * 101}, "cypher_calls"), ({"cypher_calls": [{"rows": 1}]}, "query"),
    ({"cypher_calls": [{"query": "q", "rows": "1"}]}, "rows"), ({"cypher_calls": [{"query": "q", "rows": True}]},
                                                                "rows"),
    ({"cypher_calls": [{"query": "q", "node_indices": ["1"]}]}, "node_indices"),
    ({"cypher_calls": [{"query": "q", "strings": [1]}]}, "strings"),
    ({"cypher_calls": [{"query": "q", "shell": "rm"}]}, "shell"), ({"cypher_calls": [{"query": "q", "ms": "x"}]},
                                                                   "ms"),
])
def test_malformed_result_frames_are_refused_naming_the_field(change, field):
    with pytest.raises(FrameInvalid, match=field):
        check_result_frame({**GOOD, **change}, 3)


@pytest.mark.parametrize("frame", [
    {"op": "cypher", "id": "1", "query": "RETURN 1"}, {"op": "cypher", "id": 1, "query": 5},
    {"op": "cypher", "id": 1, "query": "RETURN 1", "limit": "9"}, {"op": "cypher", "id": 1, "query": "RETURN 1",
                                                                   "params": [1]},
    {"op": "cypher", "id": 1, "query": "RETURN 1", "timeout_s": 1e9}, {"op": "cypher", "id": 1, "query": "x" * 10**6},
])
def test_malformed_query_frames_are_refused(frame):
    with pytest.raises(FrameInvalid):
        check_cypher_frame(frame)
    assert check_cypher_frame({"op": "cypher", "id": 1, "query": "RETURN 1", "params": None, "limit": 5}) == \
        (1, "RETURN 1", None, 5)
