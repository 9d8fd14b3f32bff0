"""The distillation pipeline end to end: offline teacher → chat dataset → tiny student → the same ARK loop.

A randomly initialised tiny Qwen3 is fully fine-tuned (the test's override of the LoRA recipe: it has nothing to
adapt) on one teacher trajectory per training question, loaded through the local back-end with greedy decoding and
run through ARK. Reproducing the teacher's exact tool calls proves the template, the assistant-only masking, the
tool-call parsing and the loop fit together. A tiny-model pipeline check, not a model result.
"""

from __future__ import annotations

import time

import pytest

pytest.importorskip("trl")

# Memorising eight trajectories from scratch: full fine-tuning, a high learning rate, many epochs, small batches
# (800 updates: about 50 s of CPU on one thread; 400 were enough before the system prompt gained its worked
# examples, and left two of eight trajectories unlearnt after).
STUDENT_RECIPE = {"lora": False, "learning_rate": 1e-2, "epochs": 200, "batch_size": 2, "max_length": 1024,
                  "lr_scheduler": "cosine", "warmup_ratio": 0.05, "save_steps": 10_000, "logging_steps": 50,
                  "cpu_threads": 1, "progress": False, "early_stopping_patience": None}


@pytest.mark.heavy
def test_student_reproduces_the_teachers_tool_calls(clinical_graph, teacher_retrievals, teacher_dataset,
                                                    tiny_base, tmp_path):
    from ark.llm.local_backend import LocalChatClient
    from ark.methods.ark.api import ARK
    from ark.methods.ark.distill.imitation import reproduction_rate, tool_call_sequence, valid_call_rate
    from ark.training.sft import SFTSettings, train_sft
    from tests.training.conftest import QUESTIONS, agent_config

    started = time.perf_counter()
    result = train_sft(teacher_dataset, tiny_base, tmp_path / "student", SFTSettings(**STUDENT_RECIPE))
    trained_s = time.perf_counter() - started
    assert result.truncated_samples == 0 and result.weights_dir.endswith("model")

    student = LocalChatClient(result.weights_dir, temperature=0.0, max_new_tokens=200)
    student_runs = ARK(clinical_graph, llm=student, config=agent_config()).retrieve_many(QUESTIONS, concurrency=1)
    teacher_records = [r.to_dict() for r in teacher_retrievals]
    student_records = [r.to_dict() for r in student_runs]
    rate = reproduction_rate(teacher_records, student_records)
    print(f"\n[tiny-model pipeline check] trained {result.steps} steps in {trained_s:.1f}s "
          f"(final loss {result.log_history[-2].get('loss')}); reproduced {rate:.0%} of {len(QUESTIONS)} "
          f"teacher trajectories; valid calls {valid_call_rate(student_records):.0%}")
    assert rate >= 0.9
    for teacher, record, run, taught in zip(teacher_records, student_records, student_runs, teacher_retrievals,
                                            strict=True):
        if tool_call_sequence(teacher["agents"][0]) == tool_call_sequence(record["agents"][0]):
            assert run.fused_ids == taught.fused_ids  # same calls on the same graph: the same answer
