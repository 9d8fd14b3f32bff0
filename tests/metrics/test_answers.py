"""Answer metrics (exact match, token F1 by answer type) and the LLM judge against the loopback OpenAI server."""

from __future__ import annotations

import pytest

from ark.llm import LLMSettings, OpenAIChatClient
from ark.metrics import answer_metrics, exact_match, infer_answer_type, mean_answer_metrics, normalize_answer, token_f1
from ark.metrics.answers import item_f1, parse_number
from ark.metrics.judge import JUDGE_LABEL, AnswerJudge, JudgeVerdict, judge_accuracy, parse_verdict
from tests.support.openai_server import http_error, text_reply


@pytest.mark.parametrize(("prediction", "gold", "answer_type"), [
    ("the Marfan-Syndrome.", "Marfan syndrome", "entity"),
    ("  Ehlers–Danlos syndrome, vascular type ", "Ehlers-Danlos Syndrome, Vascular Type", "entity"),
    ("TGFBR2; TGFBR1", "TGFBR1, TGFBR2", "set"),
    ("- TGFBR1\n- TGFBR2", "TGFBR2 and TGFBR1", "set"),
    ("There are 12 genes.", "12", "number"),
    ("1,234", "1234.0", "number"),
    ("twenty-one", "21", "number"),
    ("Yes, it is associated.", "yes", "boolean"),
    ("False", "no", "boolean"),
])
def test_equivalent_answers_match_after_normalisation(prediction, gold, answer_type):
    assert exact_match(prediction, gold, answer_type) == 1.0
    assert token_f1(prediction, gold, answer_type) == 1.0


@pytest.mark.parametrize(("prediction", "gold", "answer_type"), [
    ("Loeys-Dietz syndrome", "Marfan syndrome", "entity"),
    ("TGFBR1", "TGFBR1, TGFBR2", "set"),
    ("13", "12", "number"),
    ("no", "yes", "boolean"),
    (None, "yes", "boolean"),
])
def test_different_answers_do_not_match(prediction, gold, answer_type):
    assert exact_match(prediction, gold, answer_type) == 0.0


def test_token_f1_counts_partial_overlap():
    # "marfan syndrome type 1" vs "marfan syndrome": precision 2/4, recall 2/2 -> 2/3
    assert token_f1("Marfan syndrome type 1", "Marfan syndrome", "entity") == pytest.approx(2 / 3)
    assert token_f1("x", "Marfan syndrome", "entity") == 0.0
    assert token_f1("FBN1, TGFBR1", "TGFBR1, TGFBR2, FBN1", "set") == pytest.approx(0.8)
    assert item_f1("FBN1; TGFBR1", "TGFBR1, TGFBR2, FBN1") == pytest.approx(0.8)


def test_metrics_by_row_and_mean():
    rows = [answer_metrics("TGFBR1", "TGFBR1, TGFBR2", "set"), answer_metrics("12", "12", "number")]
    assert rows[0] == {"exact_match": 0.0, "f1": pytest.approx(2 / 3), "item_f1": pytest.approx(2 / 3)}
    mean = mean_answer_metrics(rows)
    assert mean["exact_match"] == 0.5 and mean["f1"] == pytest.approx((2 / 3 + 1) / 2)
    assert mean["item_f1"] == pytest.approx(2 / 3)  # only the set row has it


def test_types_are_inferred_from_the_gold_answer_when_missing():
    assert infer_answer_type(["a", "b"]) == "set"
    assert infer_answer_type("Yes") == "boolean"
    assert infer_answer_type("1,234") == "number"
    assert infer_answer_type(3) == "number"
    assert infer_answer_type("Aphasia, Primary Progressive") == "entity"  # a comma does not make a set
    assert exact_match("aphasia primary progressive", "Aphasia, Primary Progressive") == 1.0
    with pytest.raises(ValueError, match="valid: entity, set, number, boolean"):
        normalize_answer("x", "date")


def test_numbers_and_sets_have_canonical_forms():
    assert normalize_answer("3.50", "number") == "3.5"
    assert normalize_answer("about -2 items", "number") == "-2"
    assert normalize_answer("no number here", "number") == "no number here"
    assert parse_number("forty two") == 42 and parse_number("none") is None
    assert normalize_answer(["B", "a", "b"], "set") == "a | b"


# ----------------------------------------------------------------------------------------------- judge
def judge_for(server) -> AnswerJudge:
    return AnswerJudge(OpenAIChatClient(LLMSettings(base_url=server.base_url, model="judge-model", api_key="k",
                                                    temperature=0.0, max_retries=0, cache_dir=None)))


def test_judge_verdicts_through_the_real_client(openai_server):
    openai_server.enqueue(text_reply("CORRECT"), text_reply("Incorrect: it names another gene."),
                          text_reply("I am not sure"), http_error(400, "bad request"))
    judge = judge_for(openai_server)
    items = [("Which gene?", "fbn1", "FBN1", "entity"), ("Which gene?", "TGFBR1", "FBN1", "entity"),
             ("How many?", "three", "3", "number"), ("Which gene?", "FBN1", "FBN1")]
    verdicts = [judge.judge_many([item])[0] for item in items]  # one at a time: replies arrive in order
    assert [v.correct for v in verdicts] == [True, False, None, None]
    assert verdicts[3].error and "400" in verdicts[3].error
    body = openai_server.requests[0]
    assert body["temperature"] == 0.0 and "tools" not in body
    user = body["messages"][1]["content"]
    assert "Question: Which gene?" in user and "Reference answer (answer type: entity): FBN1" in user
    assert "Candidate answer: fbn1" in user
    assert judge_accuracy(verdicts) == {"judge_accuracy": 0.5, "judged": 2.0, "unjudged": 2.0}


def test_an_empty_answer_is_wrong_without_asking(openai_server):
    verdict = judge_for(openai_server).judge_many([("Which gene?", "  ", "FBN1")])[0]
    assert verdict == JudgeVerdict(False, "", None) and openai_server.request_count == 0


def test_verdict_parsing_and_label():
    assert parse_verdict("correct.") is True and parse_verdict("INCORRECT") is False
    assert parse_verdict("The answer is incorrect, not correct") is False  # the first verdict word counts
    assert parse_verdict(None) is None
    assert "off by default" in JUDGE_LABEL
