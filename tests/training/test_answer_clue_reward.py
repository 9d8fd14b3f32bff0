"""GraphScout's gated answer-and-clue reward (Eq. 5): every case, the cap, the ablation, bad inputs."""

from __future__ import annotations

import pytest

from ark.training.rewards import DEFAULT_DELTA, answer_clue_reward


def test_no_answer_is_zero_whatever_the_clues():
    result = answer_clue_reward(None, 1.0, missing_reason="the final reply has no wrapper")
    assert (result.reward, result.case) == (0.0, "no_answer")
    assert result.reason == "reward 0: the final reply has no wrapper"
    assert answer_clue_reward(None, None).reward == 0.0


def test_a_good_answer_counts_alone():
    result = answer_clue_reward(0.75, 0.0)
    assert (result.reward, result.case, result.delta) == (0.75, "answer", DEFAULT_DELTA == 0.4 and 0.4)
    assert answer_clue_reward(0.4, 1.0).reward == 0.4  # at delta exactly: the answer regime (>=)


def test_a_weak_answer_gets_clue_credit_capped_at_delta():
    below = answer_clue_reward(0.1, 0.2)
    assert below.case == "clue_bonus" and below.reward == pytest.approx(0.3)
    capped = answer_clue_reward(0.3, 0.5)
    assert capped.case == "clue_bonus" and capped.reward == pytest.approx(0.4)
    assert answer_clue_reward(0.0, 1.0).reward == pytest.approx(0.4)
    assert answer_clue_reward(0.0, 0.0).reward == 0.0
    assert "min(F1 + clue fraction" in capped.reason and capped.to_dict()["clue_fraction"] == 0.5
    assert answer_clue_reward(0.3, 0.5, delta=0.9).reward == pytest.approx(0.8)


def test_without_the_clue_term_the_reward_is_the_answer_f1():
    result = answer_clue_reward(0.1, 1.0, use_clue=False)
    assert (result.reward, result.case) == (0.1, "answer_only")
    assert answer_clue_reward(0.2, None, use_clue=False).reward == 0.2
    assert answer_clue_reward(None, 1.0, use_clue=False).reward == 0.0


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    ((1.5, 0.0), {}, "answer_f1 must be a number in"),
    ((0.5, -0.1), {}, "clue_fraction must be a number in"),
    ((0.5, float("nan")), {}, "clue_fraction must be a number in"),
    ((0.5, None), {}, "clue_fraction is needed"),
    ((0.5, 0.5), {"delta": 0.0}, "delta must be in"),
    ((0.5, 0.5), {"delta": 1.2}, "delta must be in"),
])
def test_bad_inputs(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        answer_clue_reward(*args, **kwargs)
