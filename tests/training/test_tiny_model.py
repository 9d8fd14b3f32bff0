"""Tiny Qwen3 models built offline: loadable as ordinary Hugging Face folders, deterministic, tool-capable."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("transformers")


def test_tiny_model_loads_with_auto_classes_and_renders_tool_chats(tiny_base, teacher_samples):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from ark.training.tiny_model import render_chats

    tokenizer = AutoTokenizer.from_pretrained(tiny_base)
    model = AutoModelForCausalLM.from_pretrained(tiny_base)
    assert model.config.model_type == "qwen3" and model.config.vocab_size == len(tokenizer)
    assert tokenizer.eos_token == "<|im_end|>" and model.generation_config.eos_token_id == tokenizer.eos_token_id
    sample = teacher_samples[0]
    text = tokenizer.apply_chat_template(sample["messages"], tools=json.loads(sample["tools"]), tokenize=False)
    assert text == render_chats([sample])[0]
    assert '<tool_call>\n{"name": "search_in_graph", "arguments": {"query": ' in text
    assert "<tool_response>\n" in text and '"name": "search_in_neighborhood"' in text.split("</tools>")[0]
    # The tokenizer reproduces any text byte for byte, including text it never saw.
    for probe in (text, "ünïcode → 12345 {\"x\": [1]}"):
        assert tokenizer.decode(tokenizer(probe, add_special_tokens=False)["input_ids"]) == probe


def test_template_passes_trl_tool_support_and_prefix_checks(tiny_base):
    from transformers import AutoTokenizer
    from trl.chat_template_utils import (
        get_training_chat_template,
        is_chat_template_prefix_preserving,
        supports_tool_calling,
    )

    from ark.llm.hf_models import check_tool_chat_template

    tokenizer = AutoTokenizer.from_pretrained(tiny_base)
    check_tool_chat_template(tokenizer, "tiny")
    assert supports_tool_calling(tokenizer) and is_chat_template_prefix_preserving(tokenizer)
    assert get_training_chat_template(tokenizer) is None  # already has generation markers: TRL swaps nothing


def test_same_inputs_and_seed_give_the_same_model(teacher_samples, tmp_path):
    from safetensors.torch import load_file

    from ark.training.tiny_model import TinyModelSpec, build_tiny_model

    spec = TinyModelSpec(hidden_size=32, head_dim=8, intermediate_size=64, vocab_size=600)
    first = build_tiny_model(tmp_path / "a", samples=teacher_samples[:3], spec=spec, seed=1)
    second = build_tiny_model(tmp_path / "b", samples=teacher_samples[:3], spec=spec, seed=1)
    other = build_tiny_model(tmp_path / "c", samples=teacher_samples[:3], spec=spec, seed=2)
    assert (first / "tokenizer.json").read_text() == (second / "tokenizer.json").read_text()
    weights = [load_file(str(p / "model.safetensors")) for p in (first, second, other)]
    assert all((weights[0][k] == weights[1][k]).all() for k in weights[0])
    assert any((weights[0][k] != weights[2][k]).any() for k in weights[0])
    with pytest.raises(ValueError, match="texts or samples"):
        build_tiny_model(tmp_path / "d", spec=spec)
    with pytest.raises(ValueError, match="vocab_size must be at least"):
        build_tiny_model(tmp_path / "e", texts=["x"], spec=TinyModelSpec(vocab_size=100))


def test_isolated_pieces_make_quoted_text_and_numbers_tokenize_as_standing_alone():
    from ark.training.tiny_model import train_tokenizer

    corpus = ['Find nodes that answer the question: Which genes cause Marfan syndrome?\n'
              '{"query": "Which genes cause Marfan syndrome", "size": 5}\n'
              '[34068] FBN1 (gene)\n{"node_index": 34068}'] * 30
    plain = train_tokenizer(corpus, vocab_size=400, cross_words=True)
    copyable = train_tokenizer(corpus, vocab_size=400, cross_words=True, isolate=(r':\s"?', r'"(?=[,}\]])', r"\d+"))

    def pieces(tokenizer, text, inner):
        """Whether ``inner`` is spelled by whole tokens of ``text`` (the tokens a model could copy)."""
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        wanted = tokenizer(inner, add_special_tokens=False)["input_ids"]
        return any(ids[i:i + len(wanted)] == wanted for i in range(len(ids)))

    call = '{"query": "Which genes cause Marfan syndrome", "size": 5}'
    assert pieces(copyable, call, "Which genes cause Marfan syndrome")
    assert pieces(copyable, "[34068] FBN1 (gene)", "34068") and pieces(copyable, '{"node_index": 34068}', "34068")
    # without isolation the question's words merge with the JSON around them: nothing to copy token for token
    assert not pieces(plain, call, "Which genes cause Marfan syndrome")
    for tokenizer in (plain, copyable):
        assert tokenizer.decode(tokenizer(call, add_special_tokens=False)["input_ids"]) == call
