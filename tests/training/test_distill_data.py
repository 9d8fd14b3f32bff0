"""Teacher records → train/validation chat files split by question, with statistics."""

from __future__ import annotations

import json

import pytest

from ark.methods.ark.distill.dataset import split_by_question, write_distillation_dataset
from ark.training.datasets import read_chat_dataset


def _record(question, agents=2):
    messages = [{"role": "system", "content": "sys"}, {"role": "user", "content": question},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "c", "type": "function", "function": {"name": "finish", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c", "content": "done"}]
    return {"question": question, "agents": [{"question": question, "messages": messages, "tools": []}
                                             for _ in range(agents)]}


def test_validation_holds_whole_questions_drawn_with_the_seed():
    records = [_record(f"q{i}") for i in range(10)] + [_record("q3")]  # a question may come twice
    train, validation = split_by_question(records, validation_questions=3, seed=1)
    held = {r["question"] for r in validation}
    assert len(held) == 3 and not held & {r["question"] for r in train}
    assert len(train) + len(validation) == len(records)
    assert split_by_question(records, 3, seed=1) == (train, validation)
    with pytest.raises(ValueError, match="leaves no training question"):
        split_by_question(records, validation_questions=10)
    assert split_by_question(records, 0)[1] == []


def test_dataset_files_and_statistics(tmp_path):
    records = [_record(f"q{i}") for i in range(5)]
    stats = write_distillation_dataset(records, tmp_path, validation_questions=1, seed=0)
    train = read_chat_dataset(tmp_path / "train.jsonl")
    validation = read_chat_dataset(tmp_path / "validation.jsonl")
    assert len(train) == 8 and len(validation) == 2  # one sample per agent trajectory, no filtering
    assert train[0]["messages"][0]["role"] == "system" and isinstance(train[0]["tools"], str)
    assert stats["train"]["questions"] == 4 and stats["validation"]["tool_calls"] == {"finish": 2}
    assert json.loads((tmp_path / "statistics.json").read_text()) == stats
    write_distillation_dataset(records, tmp_path / "ref", validation_questions=0, include_system=False)
    assert read_chat_dataset(tmp_path / "ref" / "train.jsonl")[0]["messages"][0]["role"] == "user"
    assert not (tmp_path / "ref" / "validation.jsonl").exists()


def test_token_statistics_count_trained_tokens(teacher_retrievals, tiny_base, tmp_path):
    pytest.importorskip("trl")
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_base)
    records = [r.to_dict() for r in teacher_retrievals]
    stats = write_distillation_dataset(records, tmp_path, validation_questions=2, tokenizer=tokenizer, max_length=150)
    tokens = stats["train"]["tokens"]
    assert 0 < tokens["trained_tokens"] < tokens["tokens"] and tokens["max_tokens"] > 150
    assert 0 < tokens["over_max_length"] <= stats["train"]["samples"]
