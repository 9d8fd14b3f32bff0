"""LoRA SFT end to end on a tiny model: records, truncation count, resume, adapter checks and merged export."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("trl")
pytest.importorskip("peft")


def test_lora_training_records_resumes_and_exports(teacher_dataset, teacher_samples, tiny_base, tmp_path):
    from ark.llm import LLMError
    from ark.llm.local_backend import LocalChatClient
    from ark.training.sft import SFTSettings, export_merged, train_sft
    from ark.training.tiny_model import TinyModelSpec, build_tiny_model

    settings = SFTSettings(lora_r=4, lora_alpha=8, learning_rate=1e-3, epochs=2, batch_size=4, max_length=64,
                           save_steps=1, eval_steps=1, cpu_threads=1, progress=False)
    out = tmp_path / "run"
    result = train_sft(teacher_dataset, tiny_base, out, settings, validation_path=teacher_dataset)
    assert result.steps == 4 and result.train_samples == len(teacher_samples)
    assert result.truncated_samples == len(teacher_samples)  # every sample is longer than 64 tokens
    assert result.best_validation_loss is not None and result.weights_dir == str(out / "adapter")
    record = json.loads((out / "training_config.json").read_text())
    assert record["settings"]["lora_r"] == 4 and record["settings"]["target_modules"][0] == "q_proj"
    assert record["libraries"]["trl"] and len(record["dataset"]["sha256"]) == 64
    assert record["truncated_samples"] == len(teacher_samples)
    # what the trainer sees per epoch: every sample cut at 64 tokens, of which the assistant's share carries the loss
    assert record["tokens_per_epoch"] == 64 * len(teacher_samples)
    assert 0 < record["trained_tokens_per_epoch"] < record["tokens_per_epoch"]

    resumed = train_sft(teacher_dataset, tiny_base, out, settings.model_copy(update={"epochs": 3}),
                        validation_path=teacher_dataset, resume=True)
    assert resumed.resumed_from is not None and resumed.resumed_from.endswith("checkpoint-4")
    assert resumed.steps == 6

    messages = [{"role": "user", "content": "Find nodes that answer the question: Which genes cause Marfan?"}]
    with_adapter = LocalChatClient(tiny_base, adapter=out / "adapter", max_new_tokens=16)
    merged = LocalChatClient(export_merged(out / "adapter", tmp_path / "merged"), max_new_tokens=16)
    assert with_adapter.generate_text(messages, [])[0] == merged.generate_text(messages, [])[0]

    other = build_tiny_model(tmp_path / "other", samples=teacher_samples[:2],
                             spec=TinyModelSpec(hidden_size=32, head_dim=8, intermediate_size=64, vocab_size=600))
    with pytest.raises(LLMError, match="was trained for base"):
        LocalChatClient(other, adapter=out / "adapter")
    with pytest.raises(LLMError, match="not a LoRA adapter"):
        LocalChatClient(tiny_base, adapter=tmp_path)


@pytest.mark.parametrize("error", ["SFTError", "GRPOTrainingError"])
def test_a_base_folder_without_a_model_is_refused_with_the_trainers_own_error(tmp_path, error):
    from ark.llm.hf_models import load_trainable_base
    from ark.methods.graphscout.training.trainer import GRPOTrainingError
    from ark.training.sft import SFTError

    kind = {"SFTError": SFTError, "GRPOTrainingError": GRPOTrainingError}[error]
    (tmp_path / "notes.txt").write_text("not a model")
    with pytest.raises(kind, match=rf"cannot load a causal LM from base '{tmp_path}'"):
        load_trainable_base(tmp_path, tokenizer=[], device="cpu", bf16=None, error=kind)
