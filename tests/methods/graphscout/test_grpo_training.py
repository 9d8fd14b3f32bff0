"""``train_graphscout`` end to end on the clinical graph with tiny Qwen3 models built from a config (no download):
GRPO raising a warm-started model's reward, checkpoints and resume, the run's records, the trained solver answering
through the local back-end, and clear errors for bad input. Every figure is a tiny-model pipeline check."""

from __future__ import annotations

import json

import pytest

from tests.support.graphs import build_clinical_graph

pytest.importorskip("ladybug")
pytest.importorskip("trl")


@pytest.fixture(scope="module")
def clinical():
    return build_clinical_graph()


@pytest.fixture(scope="module")
def quiz(clinical, tmp_path_factory):
    """A GraphScout quiz of the clinical graph (the deterministic quizzer, seed 0)."""
    from ark.methods.graphscout.quiz import GraphScoutQuizConfig, generate_graphscout_quiz
    from ark.storage.jsonl import write_jsonl_atomic

    path = tmp_path_factory.mktemp("quiz") / "quiz.jsonl"
    write_jsonl_atomic(path, generate_graphscout_quiz(clinical, GraphScoutQuizConfig(n=40, seed=0)).questions)
    return path


@pytest.fixture(scope="module")
def tiny_base(clinical, quiz, tmp_path_factory):
    """A randomly initialised tiny Qwen3 whose tokenizer was trained on the scripted solver's trajectories."""
    from ark.methods.graphscout.options import GraphScoutOptions
    from ark.methods.graphscout.training.data import training_questions, warm_start_samples
    from ark.methods.graphscout.training.environment import ScoutWorld
    from ark.methods.graphscout.training.settings import TINY_CPU_PRESET
    from ark.training.tiny_model import TinyModelSpec, build_tiny_model

    world = ScoutWorld(clinical, GraphScoutOptions(system_prompt=TINY_CPU_PRESET["system_prompt"], max_turns=3))
    try:
        samples = warm_start_samples(world, training_questions(quiz, clinical))
    finally:
        world.close()
        world.engine.close()
    spec = TinyModelSpec(hidden_size=64, head_dim=16, vocab_size=4096, tokenizer_cross_words=True)
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "base", samples=samples, spec=spec, seed=0)


def _settings(**overrides):
    from ark.methods.graphscout.training.settings import TINY_CPU_PRESET, GRPOSettings

    return GRPOSettings(**{**TINY_CPU_PRESET, "progress": False, **overrides})


@pytest.mark.slow
def test_grpo_raises_a_warm_started_tiny_models_reward(clinical, quiz, tiny_base, tmp_path):
    """Fixed seed: 16 questions × 8 trajectories, 2 questions per step, 40 steps after a 40-epoch scripted warm start
    (``LEARNING_CHECK``); the mean training reward of the last 20% of the steps beats the first 20% by at least 0.1
    (tiny-model pipeline check; benchmarks/bench_grpo_learning_check.py runs it over seeds and thread counts)."""
    import time

    from ark.llm.local_backend import LocalChatClient
    from ark.methods.graphscout.options import GraphScoutOptions
    from ark.methods.graphscout.solver import GraphScout
    from ark.methods.graphscout.training.settings import LEARNING_CHECK, GRPOSettings
    from ark.methods.graphscout.training.trainer import train_graphscout

    started = time.perf_counter()
    settings = GRPOSettings(**{**LEARNING_CHECK, "progress": False, "seed": 0})
    result = train_graphscout(clinical, quiz, tiny_base, tmp_path / "run", settings)
    curve = result.reward_curve
    window = round(0.2 * len(curve))
    first, last = sum(curve[:window]) / window, sum(curve[-window:]) / window
    print(f"\n[tiny-model pipeline check] GRPO {result.steps} steps in {time.perf_counter() - started:.0f}s: mean "
          f"reward first {window} steps {first:.3f} → last {window} steps {last:.3f}; "
          f"curve {[round(r, 3) for r in curve]}")
    assert result.steps == 40 and len(curve) == 40
    assert last - first >= 0.1

    run = tmp_path / "run"
    config = json.loads((run / "training_config.json").read_text())
    assert config["quiz"]["sha256"] and config["libraries"]["trl"] and config["settings"]["group_size"] == 8
    assert config["warm_start_dir"].endswith("warm_start/model")
    # The trained solver answers through the local back-end, as `--model hf:RUN/model --method graphscout` does.
    solver = GraphScout(clinical, llm=LocalChatClient(result.weights_dir, max_new_tokens=200),
                        options=GraphScoutOptions(
                            system_prompt=config["solver_options"]["system_prompt"], max_turns=3))
    try:
        solution = solver.solve("Which genes are implicated in Marfan syndrome?")
    finally:
        solver.close()
        solver.engine.close()
    assert solution.trajectory.steps  # it ran the loop (what it answers is a tiny model's business)


def test_checkpoints_and_resume(clinical, quiz, tiny_base, tmp_path):
    from ark.methods.graphscout.training.trainer import train_graphscout

    small = {"warm_start": False, "questions_per_step": 1, "group_size": 2, "micro_batch": 2, "max_questions": 4,
             "max_completion_tokens": 64, "save_steps": 1, "save_total_limit": 3}
    first = train_graphscout(clinical, quiz, tiny_base, tmp_path / "run", _settings(steps=2, **small))
    assert first.steps == 2 and first.resumed_from is None
    saved = sorted(p.name for p in (tmp_path / "run" / "checkpoints").glob("checkpoint-*"))
    assert saved == ["checkpoint-1", "checkpoint-2"]
    again = train_graphscout(clinical, quiz, tiny_base, tmp_path / "run", _settings(steps=3, **small), resume=True)
    assert again.resumed_from.endswith("checkpoint-2") and again.steps == 3
    lines = [json.loads(x) for x in (tmp_path / "run" / "progress.jsonl").read_text().splitlines()]
    assert [x["step"] for x in lines] == [1, 2, 3]  # the resumed run appends; nothing is repeated
    assert (tmp_path / "run" / "model" / "config.json").is_file()


def test_a_quiz_without_answers_or_clues_is_refused(clinical, tmp_path, tiny_base):
    from ark.methods.graphscout.training.data import QuizError
    from ark.methods.graphscout.training.trainer import train_graphscout

    stark_style = tmp_path / "stark.jsonl"
    stark_style.write_text(json.dumps({"id": "q1", "query": "Which genes?", "answer_ids": ["NCBIGene:2200"]}) + "\n")
    with pytest.raises(QuizError, match="missing field.*answer.*clue_ids.*--style graphscout"):
        train_graphscout(clinical, stark_style, tiny_base, tmp_path / "run", _settings(steps=1))


def test_a_base_without_tool_call_support_is_refused(clinical, quiz, tiny_base, tmp_path):
    from transformers import AutoTokenizer

    from ark.methods.graphscout.training.trainer import GRPOTrainingError, train_graphscout

    plain = tmp_path / "plain"
    tokenizer = AutoTokenizer.from_pretrained(str(tiny_base))
    tokenizer.chat_template = ("{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
                               "{% if add_generation_prompt %}assistant: {% endif %}")
    tokenizer.save_pretrained(str(plain))
    with pytest.raises(GRPOTrainingError, match="no tool support"):
        train_graphscout(clinical, quiz, plain, tmp_path / "run", _settings(steps=1))


def test_lora_run_writes_an_adapter_the_local_backend_loads(clinical, quiz, tiny_base, tmp_path):
    from ark.llm.local_backend import LocalChatClient
    from ark.methods.graphscout.training.trainer import train_graphscout

    small = {"warm_start": False, "questions_per_step": 1, "group_size": 2, "micro_batch": 2, "max_questions": 2,
             "max_completion_tokens": 48, "lora": True, "lora_r": 4, "lora_alpha": 8}
    result = train_graphscout(clinical, quiz, tiny_base, tmp_path / "run", _settings(steps=1, **small))
    adapter = tmp_path / "run" / "adapter"
    assert result.weights_dir == str(adapter) and (adapter / "adapter_config.json").is_file()
    assert json.loads((adapter / "ark_adapter.json").read_text())["base"] == str(tiny_base)
    client = LocalChatClient(tiny_base, adapter=adapter, max_new_tokens=4)
    assert client.generate_text([{"role": "user", "content": "hi"}], [])[1].completion_tokens >= 1
