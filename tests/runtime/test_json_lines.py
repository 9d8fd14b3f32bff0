"""One parser for a line of a JSON-lines input file: the same messages for queries, quizzes and graph tables."""

from __future__ import annotations

import pytest

from ark.graph import GraphValidationError
from ark.storage.jsonl import parse_json_object


def test_an_object_line_is_returned_as_a_dict():
    assert parse_json_object('{"id": "q1", "query": "x"}\n', "f.jsonl, line 1") == {"id": "q1", "query": "x"}


@pytest.mark.parametrize(("line", "message"), [
    ('{"id": ', "f.jsonl, line 3: not valid JSON"),
    ('["a", "b"]', "f.jsonl, line 3: expected a JSON object, got list"),
    ("42", "f.jsonl, line 3: expected a JSON object, got int"),
])
def test_a_bad_line_is_named_with_what_is_wrong(line, message):
    with pytest.raises(ValueError, match=message):
        parse_json_object(line, "f.jsonl, line 3")


def test_the_caller_chooses_the_error_type():
    with pytest.raises(GraphValidationError, match="nodes.jsonl, line 2: expected a JSON object, got str"):
        parse_json_object('"text"', "nodes.jsonl, line 2", GraphValidationError)
