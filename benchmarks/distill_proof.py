"""The offline distillation proof on HPO (issue 12): offline teacher -> SFT dataset -> tiny Qwen3 student -> the
same ARK loop, end to end with the documented commands, on CPU; sized to finish within 30 minutes on 2 cores.

    python benchmarks/distill_proof.py [OUT]          (default OUT: benchmarks/out/distill_proof)

Steps (each an ordinary ``ark`` command, except building the tiny base model):
 1. the HPO quiz (benchmarks/recipes/hpo_quiz.sh) and a seeded 100-question subset of its test split;
 2. ``ark distill export``: the offline policy (the teacher) on 200 + 10 training questions, 3 trajectories each
    (agent indices 0..2), 10 questions held out for the validation loss — while ``ark eval`` scores the teacher on
    the test subset in parallel (two cores);
 3. a tiny Qwen3 (hidden 128, 2 layers) built from a config, with a 4,096-token BPE trained on the rendered chats
    (merges never span JSON string bounds or digits, so the student can copy question words and node indices);
 4. ``ark distill train``: full fine-tuning (the issue's override for a randomly initialised model), one epoch at
    lr 5e-3, 1,536-token context (samples cut at the end, counted);
 5. ``ark eval --model hf:STUDENT --temperature 0``: the student on the test subset and on 20 training questions
    (two evaluations in parallel);
 6. ``ark distill report``: teacher vs student on the test subset, and on the training questions (reproduction).

Every figure this prints is a tiny-model pipeline check, not a model result. ARK runs with the options of
``benchmarks/distill_proof.toml`` for teacher and student alike: a one-line system prompt, global searches of at most
5 results, observations at their shortest (short names, no snippets) and 6 steps, so that samples are short (the
offline teacher still checks 40 to 60 candidates on questions with two anchors, so most samples are cut at the
context). Rerunning with the same OUT resumes: finished stages are skipped (and keep their timings), so the quiz,
the teacher's export and its test run are cached between runs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OPTIONS = ROOT / "benchmarks" / "distill_proof.toml"
LABEL = "tiny-model pipeline check, not a model result"
# Pieces the student's BPE never merges across: the start and end of a JSON string value, ": " and digit runs. A
# question's words, a node's index then become the same tokens in the user turn or an observation as in the tool call
# that repeats them, so the student learns to copy tokens instead of re-spelling text (with merges across them it
# wrote runaway strings and no valid call). JSON keys stay merged, which keeps the tool schemas short (~350 tokens).
COPYABLE = (r':\s"?', r'"(?=[,}\]])', r"\d+")
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1", "TOKENIZERS_PARALLELISM": "false",
       "OMP_NUM_THREADS": "1", "TRANSFORMERS_VERBOSITY": "error", "COLUMNS": "120"}


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", nargs="?", type=Path, default=ROOT / "benchmarks" / "out" / "distill_proof")
    parser.add_argument("--questions", type=int, default=200, help="training questions (3 trajectories each)")
    parser.add_argument("--validation", type=int, default=10, help="questions held out for the validation loss")
    parser.add_argument("--test", type=int, default=100, help="seeded subset of the quiz test split")
    parser.add_argument("--student-test", type=int, default=None,
                        help="run the student on only the first N questions of the test subset (the report compares "
                             "over the questions both runs answered); default: all of them")
    parser.add_argument("--reproduce", type=int, default=20, help="training questions the student is run on")
    parser.add_argument("--max-tokens", type=int, default=192, help="most tokens per student turn (the teacher's "
                                                                  "first turn has at most ~200 tokens, 90%% of them "
                                                                  "fit in 192)")
    parser.add_argument("--evaluations", type=int, default=2, help="validation passes during training")
    parser.add_argument("--epochs", type=float, default=1.0)
    parser.add_argument("--learning-rate", type=float, default=5e-3)
    parser.add_argument("--max-length", type=int, default=1536, help="training context in tokens (longer samples "
                                                                    "are cut at the end and counted)")
    parser.add_argument("--vocab", type=int, default=4096, help="BPE vocabulary of the tiny student")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


class Stages:
    """Runs the stages, timing each (wall and the CPU time of its processes) with the load average."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.file = out / "stages.json"
        # A stage skipped on a rerun (already done) keeps the timing of the run that did it.
        self.earlier = {row["stage"]: row for row in json.loads(self.file.read_text())} if self.file.is_file() else {}
        self.rows: list[dict] = []
        self.started = time.perf_counter()

    def command(self, name: str, args: list[str], done: Path | None = None) -> float:
        """Run ``ark ARGS`` (skipped when ``done`` exists); returns the wall time."""
        if done is not None and done.exists():
            print(f"[{name}] already done ({done})", flush=True)
            return 0.0
        log = self.out / "logs" / f"{name}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        print(f"[{name}] ark {' '.join(args)}", flush=True)
        started = time.perf_counter()
        with log.open("w") as handle:
            code = subprocess.run([sys.executable, "-m", "ark.cli.main", *args], stdout=handle,
                                  stderr=subprocess.STDOUT, env=ENV, cwd=ROOT).returncode
        wall = time.perf_counter() - started
        if code != 0:
            sys.exit(f"[{name}] failed with exit code {code}; see {log}:\n" + log.read_text()[-3000:])
        print(f"[{name}] {wall:.0f} s wall", flush=True)
        return wall

    def stage(self, name: str, work) -> None:
        load = os.getloadavg()[0]
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        own = resource.getrusage(resource.RUSAGE_SELF)
        samples, stop = [load], threading.Event()

        def sample_load() -> None:  # the machine is shared: the load over the stage, not only at its ends
            while not stop.wait(5.0):
                samples.append(os.getloadavg()[0])

        sampler = threading.Thread(target=sample_load, daemon=True)
        sampler.start()
        started = time.perf_counter()
        try:
            work()
        finally:
            stop.set()
            sampler.join()
        children_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        own_after = resource.getrusage(resource.RUSAGE_SELF)
        cpu = sum(getattr(after, f) - getattr(before, f) for before, after in ((children, children_after),
                                                                               (own, own_after))
                  for f in ("ru_utime", "ru_stime"))
        row = {"stage": name, "wall_s": round(time.perf_counter() - started, 1), "cpu_s": round(cpu, 1),
               "load_start": round(load, 2), "load_mean": round(sum(samples) / len(samples), 2),
               "load_end": round(os.getloadavg()[0], 2)}
        if row["wall_s"] < 1.0 and name in self.earlier:
            row = self.earlier[name]
        self.rows.append(row)
        self.file.write_text(json.dumps(self.rows + [r for n, r in self.earlier.items()
                                                     if n not in {x["stage"] for x in self.rows}], indent=2) + "\n")

    def parallel(self, *jobs) -> None:
        with ThreadPoolExecutor(len(jobs)) as pool:
            for future in [pool.submit(job) for job in jobs]:
                future.result()


def write_queries(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def read_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def build_base(data: Path, base: Path, vocab: int, seed: int) -> None:
    """The tiny Qwen3 student base: a config (no download) and a BPE trained on the training chats."""
    import torch

    from ark.training.datasets import read_chat_dataset
    from ark.training.tiny_model import TinyModelSpec, build_tiny_model

    if (base / "config.json").is_file():
        print(f"[base] already built ({base})", flush=True)
        return
    torch.set_num_threads(1)
    spec = TinyModelSpec(hidden_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         head_dim=32, intermediate_size=256, vocab_size=vocab, tokenizer_cross_words=True,
                         tokenizer_isolate=COPYABLE)
    build_tiny_model(base, samples=read_chat_dataset(data / "train.jsonl"), spec=spec, seed=seed)
    print(f"[base] built {base}", flush=True)


def main() -> None:
    args = arguments()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    stages = Stages(out)
    quiz, data, base, student = out / "quiz", out / "data", out / "base", out / "student"
    options = ["--config", str(OPTIONS), "--seed", str(args.seed), "--no-progress"]

    def make_quiz() -> None:
        if not (quiz / "splits" / "test.jsonl").is_file():
            subprocess.run(["bash", str(ROOT / "benchmarks" / "recipes" / "hpo_quiz.sh"), str(quiz)], check=True,
                           env={**ENV, "PYTHON": sys.executable}, cwd=ROOT, stdout=subprocess.DEVNULL)

    stages.stage("quiz", make_quiz)
    test_rows = read_lines(quiz / "splits" / "test.jsonl")
    test = write_queries(out / "test-subset.jsonl",
                         sorted(random.Random(args.seed).sample(test_rows, args.test), key=lambda r: r["id"]))

    def export() -> None:
        stages.command("export", ["distill", "export", "hpo", "-q", str(quiz / "splits" / "train.jsonl"), "--out",
                                  str(data), "--max-questions", str(args.questions + args.validation),
                                  "--validation-questions", str(args.validation), "--per-question", "3",
                                  "--offline", *options], done=data / "export.json")

    def teacher_test() -> None:
        stages.command("teacher-test", ["eval", "hpo", "--method", "ark", "--offline", "-q", str(test), "--run-dir",
                                        str(out / "teacher-test"), *options],
                       done=out / "teacher-test" / "summary.json")

    stages.stage("export ‖ teacher on test", lambda: stages.parallel(export, teacher_test))
    stages.stage("tiny base", lambda: build_base(data, base, args.vocab, args.seed))
    recipe = {"lora": "false", "learning_rate": args.learning_rate, "epochs": args.epochs, "batch_size": 1,
              "max_length": args.max_length, "lr_scheduler": "cosine", "warmup_ratio": 0.03, "cpu_threads": 1,
              "logging_steps": 25, "evaluations": args.evaluations, "early_stopping_patience": "null",
              "save_total_limit": 1}
    sets = [item for key, value in recipe.items() for item in ("--set", f"{key}={value}")]
    stages.stage("train", lambda: stages.command(
        "train", ["distill", "train", str(data), "--base", str(base), "--out", str(student), *sets, "--no-progress"],
        done=student / "training_result.json"))

    train_ids = [row["id"] for row in read_lines(data / "questions.jsonl") if row["side"] == "train"]
    by_id = {row["id"]: row for row in read_lines(quiz / "splits" / "train.jsonl")}
    train_subset = write_queries(out / "train-subset.jsonl", [by_id[i] for i in train_ids[:args.reproduce]])
    model = ["--method", "ark", "--model", f"hf:{student / 'model'}", "--temperature", "0", "--max-tokens",
             str(args.max_tokens)]
    student_test_queries = test
    if args.student_test is not None:
        student_test_queries = write_queries(out / "student-test-subset.jsonl", read_lines(test)[:args.student_test])

    def student_test() -> None:
        stages.command("student-test", ["eval", "hpo", *model, "-q", str(student_test_queries), "--run-dir",
                                        str(out / "student-test"), *options],
                       done=out / "student-test" / "summary.json")

    def student_train() -> None:
        stages.command("student-train", ["eval", "hpo", *model, "-q", str(train_subset), "--run-dir",
                                         str(out / "student-train"), *options],
                       done=out / "student-train" / "summary.json")

    stages.stage("student on test ‖ on training questions", lambda: stages.parallel(student_test, student_train))

    def reports() -> None:
        stages.command("report-test", ["distill", "report", str(out / "teacher-test"), str(out / "student-test"),
                                       "--markdown", str(out / "report-test.md")])
        stages.command("report-train", ["distill", "report", str(data), str(out / "student-train"), "--markdown",
                                        str(out / "report-train.md")])

    stages.stage("reports", reports)
    summarize(out, stages, args)


def summarize(out: Path, stages: Stages, args: argparse.Namespace) -> None:
    test = json.loads((out / "report-test.json").read_text())
    train = json.loads((out / "report-train.json").read_text())
    statistics = json.loads((out / "data" / "statistics.json").read_text())
    training = json.loads((out / "student" / "training_config.json").read_text())
    result = json.loads((out / "student" / "training_result.json").read_text())
    teacher, student = test["teacher"], test["student"]
    figures = {
        "label": LABEL,
        "training questions": statistics["train"]["questions"],
        "training samples": statistics["train"]["samples"],
        "validation questions": statistics.get("validation", {}).get("questions", 0),
        "student: BPE vocabulary / hidden size / layers": f"{args.vocab} / 128 / 2",
        "context (tokens)": training["settings"]["max_length"],
        "samples cut at the context": training["truncated_samples"],
        "longest sample (tokens)": training["max_tokens"],
        "tokens per sample the trainer sees (mean)": round(training["tokens_per_epoch"] / result["train_samples"]),
        "of which trained (assistant) tokens (mean)": round(training["trained_tokens_per_epoch"]
                                                            / result["train_samples"]),
        "updates (batch 1)": result["steps"],
        "final training loss": result["train_loss"],
        "best validation loss": result["best_validation_loss"],
        "most tokens per student turn": args.max_tokens,
        "student valid tool calls (test)": student["valid_call_rate"],
        "student valid tool calls (training questions)": train["student"]["valid_call_rate"],
        "student trajectories repeating a teacher trajectory (training questions)": train["trajectory_reproduction"],
        "training questions reproduced agent by agent": train["question_reproduction"],
        "student steps per trajectory / teacher (test)": f"{student['steps_per_trajectory']:.1f} / "
                                                          f"{teacher['steps_per_trajectory']:.1f}",
        "student tool mix (test)": mix(student["tool_mix"]),
        "teacher tool mix (test)": mix(teacher["tool_mix"]),
        "test questions (teacher / student)": f"{teacher['questions']} / {student['questions']}",
        "teacher Hit@1 (test subset)": teacher["metrics"]["hit@1"],
        "student Hit@1 (test subset)": student["metrics"]["hit@1"],
        "student Hit@5 (test subset)": student["metrics"]["hit@5"],
        "student Hit@1 / teacher Hit@1": (student["metrics"]["hit@1"] / teacher["metrics"]["hit@1"]
                                          if teacher["metrics"]["hit@1"] else None),
        "wall time (s)": round(time.perf_counter() - stages.started, 1),
        "CPU time of all processes (s)": round(sum(row["cpu_s"] for row in stages.rows), 1),
        "cores": os.cpu_count(),
    }
    (out / "proof.json").write_text(json.dumps({"figures": figures, "stages": stages.rows}, indent=2) + "\n")
    text = render(figures, stages.rows)
    (out / "proof.md").write_text(text)
    print("\n" + text)
    print(f"Reports: {out / 'report-test.md'}, {out / 'report-train.md'}")


PERCENT_FIGURES = ("valid tool calls", "repeating a teacher", "reproduced agent", "Hit@1", "Hit@5")


def mix(shares: dict[str, float]) -> str:
    """A tool mix as ``name 41%, ...``, largest share first."""
    return ", ".join(f"{name} {100 * share:.0f}%" for name, share in sorted(shares.items(), key=lambda kv: -kv[1]))


def render(figures: dict, stages: list[dict]) -> str:
    """The proof's markdown: figures (shares as percentages, losses with 4 decimals), then the stage timings."""
    lines = [f"# HPO distillation proof ({LABEL})", "", "| figure | value |", "|---|---:|"]
    for key, value in figures.items():
        if isinstance(value, float) and any(part in key for part in PERCENT_FIGURES):
            shown = f"{100 * value:.1f}%"
        elif isinstance(value, float) and "loss" in key:
            shown = f"{value:.4f}"
        else:
            shown = str(value)
        lines.append(f"| {key} | {shown} |")
    lines += ["", "| stage | wall s | CPU s | load average: start / mean / end |", "|---|---:|---:|---:|"]
    lines += [f"| {r['stage']} | {r['wall_s']} | {r['cpu_s']} | {r['load_start']} / {r.get('load_mean', '-')} / "
              f"{r['load_end']} |" for r in stages]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
