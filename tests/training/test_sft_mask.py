"""Loss on assistant tokens only: the trained-token mask covers exactly the assistant's turns."""

from __future__ import annotations

import json
from importlib import resources

import pytest

pytest.importorskip("trl")


def _runs(ids, mask, tokenizer):
    """Decoded text of each maximal run of masked tokens, and the text of the unmasked tokens."""
    runs, current, rest = [], [], []
    for token, bit in zip(ids, mask, strict=True):
        if bit:
            current.append(token)
        else:
            if current:
                runs.append(tokenizer.decode(current))
                current = []
            rest.append(token)
    if current:
        runs.append(tokenizer.decode(current))
    return runs, tokenizer.decode(rest)


def _check_mask_is_the_assistant_turns(sample, tokenizer, template=None):
    from ark.training.sft import trained_token_mask

    ids, mask = trained_token_mask(sample, tokenizer, template)
    runs, unmasked = _runs(ids, mask, tokenizer)
    assistants = [m for m in sample["messages"] if m["role"] == "assistant"]
    assert len(runs) == len(assistants)
    for run, message in zip(runs, assistants, strict=True):
        assert run.rstrip("\n").endswith("<|im_end|>")  # the model is trained to stop
        assert (message.get("content") or "") in run
        for call in message.get("tool_calls") or []:
            assert call["function"]["name"] in run and call["function"]["arguments"] in run
        assert "<tool_response>" not in run and "<|im_start|>" not in run
    for message in sample["messages"]:
        if message["role"] in ("system", "user", "tool"):
            assert message["content"] in unmasked  # system, user and tool text carry no loss
            assert not any(message["content"] in run for run in runs if len(message["content"]) > 20)
    return ids, mask


def test_mask_covers_exactly_the_assistant_turns(teacher_samples, tiny_base):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_base)
    for sample in teacher_samples[:4]:
        _check_mask_is_the_assistant_turns(sample, tokenizer)


def test_mask_with_trls_qwen3_training_template(teacher_samples, tiny_base):
    """A base with the real Qwen3 template (no generation markers) gets TRL's training variant."""
    from transformers import AutoTokenizer

    from ark.training.sft import training_chat_template

    tokenizer = AutoTokenizer.from_pretrained(tiny_base)
    tokenizer.chat_template = resources.files("trl").joinpath("chat_templates/qwen3.jinja").read_text()
    template = training_chat_template(tokenizer)
    assert template != tokenizer.chat_template and "generation" in template
    _check_mask_is_the_assistant_turns(teacher_samples[0], tokenizer, template)


def test_mask_matches_what_trl_trains_on(teacher_samples, tiny_base, tmp_path):
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    from ark.training.sft import trained_token_mask

    tokenizer = AutoTokenizer.from_pretrained(tiny_base)
    trainer = SFTTrainer(model=AutoModelForCausalLM.from_pretrained(tiny_base),
                         args=SFTConfig(output_dir=str(tmp_path), assistant_only_loss=True, report_to="none",
                                        use_cpu=True, max_length=None),
                         train_dataset=Dataset.from_list(teacher_samples[:3]), processing_class=tokenizer)
    for row, sample in zip(trainer.train_dataset, teacher_samples[:3], strict=True):
        ids, mask = trained_token_mask(sample, tokenizer)
        assert row["input_ids"] == ids
        # TRL turns the assistant mask into labels: -100 (no loss) wherever the mask is 0.
        assert [label != -100 for label in row["labels"]] == [bool(bit) for bit in mask]


def test_clear_errors_for_data_and_templates_that_cannot_train(tiny_base, tmp_path):
    from transformers import AutoTokenizer

    from ark.training.sft import SFTError, train_sft, training_chat_template

    no_assistant = tmp_path / "users.jsonl"
    no_assistant.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}) + "\n")
    with pytest.raises(SFTError, match="no assistant turn"):
        train_sft(no_assistant, tiny_base, tmp_path / "out")
    tokenizer = AutoTokenizer.from_pretrained(tiny_base)
    tokenizer.chat_template = "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
    with pytest.raises(SFTError, match="generation"):
        training_chat_template(tokenizer)
