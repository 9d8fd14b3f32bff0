"""The shared training home: rewards, group advantages, chat datasets and resumable checkpoints."""

from __future__ import annotations

import random

import numpy as np
import pytest

from ark.training.datasets import ChatDatasetError, chat_statistics, read_chat_dataset, write_chat_dataset
from ark.training.rewards import recall_any_reward, set_f1_reward
from ark.training.rollouts import Rollout, group_advantages, group_by_question


def test_rewards_follow_the_set_definitions():
    assert recall_any_reward([1, 2, 9], [1, 2, 3, 4]) == 0.5
    assert recall_any_reward([1], []) == 0.0
    assert set_f1_reward([1, 2], [2, 3]) == pytest.approx(0.5)
    assert set_f1_reward([], []) == 1.0 and set_f1_reward([1], []) == 0.0


def test_group_advantages_per_mode():
    rewards = [1.0, 0.0, 0.5, 0.5]
    assert group_advantages(rewards).tolist() == [0.5, -0.5, 0.0, 0.0]
    normalised = group_advantages(rewards, "normalised")
    assert normalised.mean() == pytest.approx(0.0) and normalised.std() == pytest.approx(1.0, rel=1e-4)
    assert group_advantages(rewards, "none").tolist() == rewards
    assert group_advantages(rewards, "greedy", baseline=0.5).tolist() == [0.5, -0.5, 0.0, 0.0]
    with pytest.raises(ValueError, match="valid: centred"):
        group_advantages(rewards, "median")
    with pytest.raises(ValueError, match="baseline"):
        group_advantages(rewards, "greedy")
    groups = group_by_question([Rollout("b", 1.0), Rollout("a", 0.0), Rollout("b", 0.5)])
    assert list(groups) == ["b", "a"] and [r.reward for r in groups["b"]] == [1.0, 0.5]


def _sample(arguments='{"query": "x"}'):
    return {"messages": [{"role": "user", "content": "q"},
                         {"role": "assistant", "content": None,
                          "tool_calls": [{"id": "c", "type": "function",
                                          "function": {"name": "search", "arguments": arguments}}]},
                         {"role": "tool", "tool_call_id": "c", "content": "found"}],
            "tools": "[]"}


def test_chat_dataset_round_trip_and_clear_errors(tmp_path):
    path = tmp_path / "train.jsonl"
    assert write_chat_dataset(path, [_sample(), _sample()]) == 2
    samples = read_chat_dataset(path)
    stats = chat_statistics(samples)
    assert stats["samples"] == 2 and stats["tool_calls"] == {"search": 2} and stats["messages"]["tool"] == 2
    with pytest.raises(ChatDatasetError, match="JSON string"):
        write_chat_dataset(tmp_path / "bad.jsonl", [_sample(arguments={"query": "x"})])
    with pytest.raises(ChatDatasetError, match="no assistant turn"):
        write_chat_dataset(tmp_path / "bad.jsonl", [{"messages": [{"role": "user", "content": "q"}]}])
    assert not (tmp_path / "bad.jsonl").exists()  # nothing half-written
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(ChatDatasetError, match="no samples"):
        read_chat_dataset(tmp_path / "empty.jsonl")


def test_checkpoints_resume_the_same_random_stream(tmp_path):
    torch = pytest.importorskip("torch")
    from ark.training.checkpoints import latest_checkpoint, list_checkpoints, load_checkpoint, save_checkpoint

    model = torch.nn.Linear(3, 2)
    for step in (1, 2, 3):
        save_checkpoint(tmp_path, step, {"model": model.state_dict()}, meta={"best": step / 10}, keep=2)
    assert [s for s, _ in list_checkpoints(tmp_path)] == [2, 3]
    expected = (random.random(), np.random.rand(), torch.rand(1).item())
    payload = load_checkpoint(latest_checkpoint(tmp_path))
    # Restoring the RNG states saved at step 3 replays the draws made after that save.
    assert (random.random(), np.random.rand(), torch.rand(1).item()) == expected
    assert payload["step"] == 3 and payload["meta"] == {"best": 0.3}
    restored = torch.nn.Linear(3, 2)
    restored.load_state_dict(payload["states"]["model"])
    assert torch.equal(restored.weight, model.weight)
    with pytest.raises(FileNotFoundError):
        load_checkpoint(tmp_path / "checkpoint-0000009.pt")
