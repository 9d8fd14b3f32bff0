"""A distilled student runs its teacher's longest step whole. The offline teacher's verify step on HPO writes one
reply of 40 tool calls (the tool loop's default cap is 32): training records that maximum in the student's folder
(adapter and merged export), loading the student raises its per-turn cap to it, and ``--max-tool-calls-per-turn``
still wins. The student's generation replays the teacher's replies (a tiny model cannot write 40 calls): what is
checked is that the loop runs every call of such a reply."""

from __future__ import annotations

import json

import pytest

from tests.support.graphs import BROAD

pytest.importorskip("trl")
pytest.importorskip("peft")


def teacher_options():
    from ark.methods.ark.options import ArkOptions, ToolConfig

    return ArkOptions(n_agents=1, system_prompt="Find the nodes that answer the question with the tools.",
                      tools=ToolConfig(max_observation_chars=200, snippet_chars=20))


def hermes(message: dict) -> str:
    """An assistant message as the student writes it (Qwen3's ``<tool_call>`` blocks)."""
    return "\n".join(f'<tool_call>\n{{"name": "{call["function"]["name"]}", "arguments": '
                     f'{call["function"]["arguments"]}}}\n</tool_call>' for call in message["tool_calls"])


def test_a_students_run_is_not_cut_where_its_teachers_step_was_longer(use_hpo_home, tmp_path, monkeypatch):
    from ark.cli.common import make_policy
    from ark.llm import Usage
    from ark.llm.hf_models import STUDENT_META, most_tool_calls_per_turn
    from ark.llm.local_backend import LocalChatClient, make_chat_client
    from ark.llm.policy import DEFAULT_MAX_TOOL_CALLS_PER_TURN
    from ark.llm.settings import resolve_settings
    from ark.loaders import open_graph
    from ark.methods.ark.api import ARK
    from ark.training.datasets import record_sft_samples, write_chat_dataset
    from ark.training.sft import SFTSettings, export_merged, train_sft
    from ark.training.tiny_model import TinyModelSpec, build_tiny_model

    graph = open_graph("hpo")
    samples = record_sft_samples(ARK(graph, config=teacher_options()).retrieve(BROAD[0]).to_dict())
    longest = most_tool_calls_per_turn(samples)
    assert longest > DEFAULT_MAX_TOOL_CALLS_PER_TURN  # the teacher's verify step
    dataset = tmp_path / "train.jsonl"
    write_chat_dataset(dataset, samples)
    base = build_tiny_model(tmp_path / "base", samples=samples, seed=0,
                            spec=TinyModelSpec(hidden_size=32, head_dim=8, intermediate_size=64, vocab_size=600))
    settings = SFTSettings(lora_r=4, lora_alpha=8, max_length=2048, epochs=1, cpu_threads=1, progress=False,
                           early_stopping_patience=None)
    run = tmp_path / "run"
    train_sft(dataset, base, run, settings)
    assert json.loads((run / "training_config.json").read_text())["max_tool_calls_per_turn"] == longest
    merged = export_merged(run / "adapter", tmp_path / "merged")
    assert json.loads((merged / STUDENT_META).read_text())["max_tool_calls_per_turn"] == longest

    assert LocalChatClient(base).max_tool_calls_per_turn == DEFAULT_MAX_TOOL_CALLS_PER_TURN  # not trained here
    assert LocalChatClient(base, adapter=run / "adapter").max_tool_calls_per_turn == longest
    configured = resolve_settings(model=f"hf:{merged}", max_tool_calls_per_turn=8, environ={},
                                  config_path=tmp_path / "absent.toml")
    assert make_chat_client(settings=configured).max_tool_calls_per_turn == longest  # raised to the data's need
    monkeypatch.delenv("ARK_MODEL", raising=False)
    assert make_policy(model=f"hf:{merged}", max_tool_calls_per_turn=8).max_tool_calls_per_turn == 8  # the flag wins

    student = LocalChatClient(merged)
    replies = iter(hermes(m) for m in samples[0]["messages"] if m["role"] == "assistant")
    monkeypatch.setattr(student, "generate_text", lambda *a, **k: (next(replies), Usage(1, 1, 2)))
    trajectory = ARK(graph, llm=student, config=teacher_options()).retrieve(BROAD[0]).trajectories[0]
    assert trajectory.error is None and trajectory.stop_reason == "finish"
    assert max(len(step.tool_calls) for step in trajectory.steps) == longest  # the whole step ran
    assert not any("were not run" in text for step in trajectory.steps for text in step.observations)
