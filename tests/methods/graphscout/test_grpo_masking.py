"""GRPO through TRL with the rollout environment: the tool loop's output and its loss weights.

The trainer is real (TRL's ``GRPOTrainer`` on a tiny Qwen3 built from a config); only the token generator is
replaced by a scripted one (a tool call, then an answer), so the test knows which tokens the model wrote and which
came from the tools. The loss's gradient with respect to each completion token's log-probability must be zero on
tool-output tokens and non-zero on the model's own tokens.
"""

from __future__ import annotations

import pytest

from tests.support.graphs import build_clinical_graph

pytest.importorskip("ladybug")
pytest.importorskip("trl")

QUESTION = {"query": "Which genes are implicated in Marfan syndrome?", "answer": "FBN1", "answer_type": "set",
            "clue_ids": ["OMIM:154700", "NCBIGene:2200"]}
CALL = ('<tool_call>\n{"name": "node_id_retriever", "arguments": {"queries": ["Marfan syndrome"], "topk": 1}}\n'
        '</tool_call><|im_end|>')
ANSWERS = ("The gene is FBN1.\n\\answer{FBN1}<|im_end|>", "The gene is CBS.\n\\answer{CBS}<|im_end|>")


@pytest.fixture(scope="module")
def trainer_and_world(tmp_path_factory):
    from ark.methods.graphscout.options import GraphScoutOptions
    from ark.methods.graphscout.quiz import GraphScoutQuestion
    from ark.methods.graphscout.training.data import grpo_rows
    from ark.methods.graphscout.training.environment import ScoutWorld
    from ark.methods.graphscout.training.settings import GRPOSettings
    from ark.methods.graphscout.training.trainer import build_trainer, prepare_tool_tokenizer
    from ark.training.tiny_model import TinyModelSpec, build_tiny_model

    folder = tmp_path_factory.mktemp("grpo-mask")
    base = build_tiny_model(folder / "base", texts=[CALL, *ANSWERS, QUESTION["query"]],
                            spec=TinyModelSpec(hidden_size=32, head_dim=8, vocab_size=400), seed=0)
    world = ScoutWorld(build_clinical_graph(), GraphScoutOptions(system_prompt="Answer with the tools."))
    from transformers import AutoTokenizer

    tokenizer = prepare_tool_tokenizer(AutoTokenizer.from_pretrained(str(base)), "tiny base")
    question = GraphScoutQuestion(id="q0", query=QUESTION["query"], answer="FBN1", answer_type="set",
                                  clue_ids=QUESTION["clue_ids"])
    settings = GRPOSettings(group_size=2, questions_per_step=1, micro_batch=2, steps=1, kl_coef=0.0,
                            max_completion_tokens=400, max_turns=3, progress=False, cpu_threads=1)
    trainer, _ = build_trainer(world, grpo_rows([question], world.system_prompt), str(base), tokenizer,
                               folder / "run", settings, world.options)
    yield trainer, world, tokenizer, grpo_rows([question], world.system_prompt)[0]
    world.close()
    world.engine.close()


def _scripted_generator(tokenizer):
    turns = iter([[CALL, CALL], list(ANSWERS)])

    def generate(prompt_ids, *args, **kwargs):
        texts = next(turns)
        return [tokenizer.encode(t, add_special_tokens=False) for t in texts[: len(prompt_ids)]], None

    return generate


def test_tool_outputs_carry_zero_loss_weight(trainer_and_world, monkeypatch):
    import torch

    trainer, world, tokenizer, row = trainer_and_world
    monkeypatch.setattr(trainer, "_generate_single_turn", _scripted_generator(tokenizer))
    trainer.model.train()
    batch = trainer._generate_and_score_completions([dict(row), dict(row)])

    tool_mask, completion_ids = batch["tool_mask"], batch["completion_ids"]
    for sample, answer in enumerate(ANSWERS):
        ids = completion_ids[sample][batch["completion_mask"][sample].bool()]
        mask = tool_mask[sample][: len(ids)]
        written = tokenizer.decode(ids[mask.bool()])
        from_tools = tokenizer.decode(ids[~mask.bool()])
        assert written == CALL + answer.replace("<|im_end|>", "") + "<|im_end|>"
        assert "<tool_response>" in from_tools and "OMIM:154700" in from_tools and "FBN1" not in written[:20]
    # The two rollouts differ in reward (right answer vs clue bonus), so both have non-zero advantages.
    assert batch["advantages"][0] > 0 > batch["advantages"][1]

    shift = torch.zeros(completion_ids.shape, device=completion_ids.device, requires_grad=True)  # CUDA-safe
    original = trainer._get_per_token_logps_and_entropies

    def shifted(*args, **kwargs):
        logps, entropies, aux = original(*args, **kwargs)
        return logps + shift, entropies, aux

    monkeypatch.setattr(trainer, "_get_per_token_logps_and_entropies", shifted)
    monkeypatch.setattr(trainer, "current_gradient_accumulation_steps", 1, raising=False)  # set by the train loop
    trainer.compute_loss(trainer.model, batch).backward()
    weight = shift.grad.abs()
    model_tokens = (batch["completion_mask"] * tool_mask).bool()
    tool_tokens = batch["completion_mask"].bool() & ~tool_mask.bool()
    assert tool_tokens.any() and torch.all(weight[tool_tokens] == 0)
    assert torch.all(weight[model_tokens] > 0)


def test_gradient_checkpointing_follows_the_setting(trainer_and_world):
    """The fixture's settings leave gradient checkpointing off (GRPOSettings' default); TRL's own default is on, so
    the setting must reach TRL's config explicitly."""
    trainer, *_ = trainer_and_world
    assert trainer.args.gradient_checkpointing is False
