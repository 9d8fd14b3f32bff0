"""Reading GraphScout quiz files: what is missing or malformed is named, with the file and the line."""

from __future__ import annotations

import json

import pytest

from ark.methods.graphscout.quiz.records import read_graphscout_quiz

GOOD = {"id": "q1", "query": "Which genes are associated with Marfan syndrome?", "answer": "FBN1",
        "answer_type": "entity", "answer_ids": ["NCBIGene:2200"], "clue_ids": ["OMIM:154700", "NCBIGene:2200"],
        "pattern": "<h,r,*>", "difficulty": "simple", "hops": 1, "split": "train"}


def write(tmp_path, *records, raw: str = ""):
    path = tmp_path / "quiz.jsonl"
    path.write_text(raw + "".join(json.dumps(r) + "\n" for r in records))
    return path


def test_a_good_file(tmp_path, clinical_graph):
    [question] = read_graphscout_quiz(write(tmp_path, GOOD), clinical_graph)
    assert (question.answer, question.answer_type, question.clue_ids) == ("FBN1", "entity", GOOD["clue_ids"])
    assert (question.pattern, question.difficulty, question.hops, question.split) == ("<h,r,*>", "simple", 1, "train")


def test_a_stark_style_quiz_without_answers_or_clues_says_what_to_do(tmp_path):
    stark = {"id": "hpo-quiz-1", "query": "Which genes ...?", "answer_ids": ["NCBIGene:2200"], "template": "one_hop"}
    with pytest.raises(ValueError, match=r"line 2: missing field\(s\) answer, answer_type, clue_ids.*"
                                         r"--style graphscout"):
        read_graphscout_quiz(write(tmp_path, GOOD, stark))


@pytest.mark.parametrize(("change", "message"), [
    ({"answer": "  "}, "'answer' must be non-empty text"),
    ({"answer": None}, "'answer' must be non-empty text"),
    ({"answer_type": "list"}, "unknown answer_type 'list'; valid: entity, set, number, boolean"),
    ({"clue_ids": []}, "'clue_ids' must be a non-empty list of node ids"),
    ({"clue_ids": "OMIM:154700"}, "'clue_ids' must be a non-empty list"),
    ({"answer_ids": "NCBIGene:2200"}, "'answer_ids' must be a list"),
    ({"query": ""}, "'query' must be a non-empty string"),
])
def test_malformed_fields_are_named(tmp_path, change, message):
    with pytest.raises(ValueError, match="line 1: " + message.replace("(", r"\(").replace(")", r"\)")):
        read_graphscout_quiz(write(tmp_path, {**GOOD, **change}))


def test_bad_json_an_empty_file_and_a_missing_file(tmp_path):
    with pytest.raises(ValueError, match="line 1: not valid JSON"):
        read_graphscout_quiz(write(tmp_path, raw="{oops\n"))
    with pytest.raises(ValueError, match="line 1: expected a JSON object"):
        read_graphscout_quiz(write(tmp_path, raw="[1, 2]\n"))
    with pytest.raises(ValueError, match="has no questions"):
        read_graphscout_quiz(write(tmp_path, raw="\n"))
    with pytest.raises(ValueError, match="does not exist; write one with 'ark quiz GRAPH --style graphscout"):
        read_graphscout_quiz(tmp_path / "missing.jsonl")


def test_ids_of_another_graph_are_refused(tmp_path, clinical_graph):
    with pytest.raises(ValueError, match=r"\['HP:9999999'\] are not in 'clinical'"):
        read_graphscout_quiz(write(tmp_path, {**GOOD, "clue_ids": ["HP:9999999"]}), clinical_graph)
