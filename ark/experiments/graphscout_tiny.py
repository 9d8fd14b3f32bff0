"""GraphScout's training experiments with tiny models (``ark experiment graphscout-ablations|graphscout-tool-failures
GRAPH --queries QUIZ``): Table 2 (ablations) and Table 5 (failed tool calls before and after training).

A tiny Qwen3 is built from a config (no download; its tokenizer trained on the scripted solver's trajectories of the
training questions), warm-started on those trajectories (SFT) and trained with GRPO (``train_graphscout``), as
benchmarks/bench_graphscout_grpo_tiny.py does, at the size ``--set`` gives (:data:`TINY_SETTINGS`). Each trained
variant is a run folder under the runs root, reused by a rerun with the same settings. The models are then scored on
the quiz's test questions (``eval_questions`` of them) through the local back-end: answer F1 and exact match, tool
calls and the failed ones (a call refused, unparsable, or whose code raised). Every number is a tiny-model pipeline
check, not a model result; the scripted solver (no training) is shown beside it for Table 2.

Table 2's rows here: GraphScout (GRPO), w/o Graph Solver (the model before GRPO: the warm start), w/o A_code (trained
and scored without code_interpreter), w/o r_clue (GRPO without the clue term), rw Graph Quizzer (trained on the
random-walk quizzer's questions). Table 5's: the random-initialised base, before GRPO, after GRPO.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .graphscout_paper import TABLE_2, TABLE_5, ablation_row, reported_failures
from .graphscout_table import DOMAINS, paper_domain
from .report import Report, Table

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph

TINY_SETTINGS: dict[str, Any] = {"steps": 4, "questions": 8, "group_size": 4, "eval_questions": 6,
                                 "max_new_tokens": 160, "max_turns": 3, "warm_start_epochs": 20,
                                 "max_completion_tokens": 200}


@dataclass(frozen=True)
class Scored:
    """One model (or the scripted solver) scored on the test questions."""

    label: str
    run_with: str
    n: int
    f1: float
    exact_match: float
    tool_calls: int
    failed_calls: int
    folder: str | None = None

    @property
    def failed_share(self) -> float | None:
        return self.failed_calls / self.tool_calls if self.tool_calls else None


def tiny_settings(pairs: Sequence[str]) -> dict[str, Any]:
    """``--set`` pairs as the tiny experiments' settings; ``ValueError`` names the valid keys for another."""
    from ..methods.options import parse_set_values

    given = parse_set_values(list(pairs))
    unknown = sorted(set(given) - set(TINY_SETTINGS))
    if unknown:
        raise ValueError(f"unknown setting {unknown[0]!r}; valid: {', '.join(TINY_SETTINGS)} (--set KEY=VALUE)")
    settings = {**TINY_SETTINGS, **given}
    if any(not isinstance(v, int) or v < 1 for v in settings.values()):
        raise ValueError(f"every setting is a whole number >= 1, got {settings}")
    if settings["max_turns"] < 3:  # the scripted warm start's trajectories: retrieve, query, answer
        raise ValueError(f"max_turns must be at least 3 (the scripted solver's warm-start trajectories take three "
                         f"turns), got {settings['max_turns']}")
    return settings


class TinyLab:
    """The tiny models of one graph, quiz, settings and seed: their base, their training runs and their scores."""

    def __init__(self, graph: KnowledgeGraph, quiz: Path, runs_root: Path, settings: dict[str, Any], seed: int,
                 preset: str | None, progress: bool) -> None:
        from ..graphdb import open_cypher
        from ..methods import get_method_spec
        from ..methods.graphscout.quiz import read_graphscout_quiz
        from ..methods.graphscout.solver import open_node_index
        from ..methods.graphscout.training.settings import TINY_CPU_PRESET

        self.graph, self.quiz, self.settings, self.seed, self.progress = graph, quiz, settings, seed, progress
        from ..methods.graphscout.options import GraphScoutOptions

        made = get_method_spec("graphscout").make_options({"preset": preset} if preset else {})
        assert isinstance(made, GraphScoutOptions)
        self.options = made.model_copy(update={"system_prompt": TINY_CPU_PRESET["system_prompt"],
                                               "max_turns": settings["max_turns"]})
        questions = read_graphscout_quiz(quiz, graph)
        tests = [q for q in questions if q.split == "test"] or questions
        self.tests = tests[:settings["eval_questions"]]
        key = hashlib.sha256(json.dumps([graph.info.name or str(graph.path), hashlib.sha256(quiz.read_bytes())
                                         .hexdigest(), settings, seed, preset], sort_keys=True).encode()).hexdigest()
        self.folder = runs_root / f"graphscout-tiny-{key[:12]}"
        self.engine = open_cypher(graph, progress=progress)
        self.index = open_node_index(graph, self.options, progress=progress)

    def base(self) -> Path:
        """The random-initialised tiny Qwen3 (built once), its tokenizer trained on scripted trajectories."""
        from ..methods.graphscout.training.data import training_questions, warm_start_samples
        from ..methods.graphscout.training.environment import ScoutWorld
        from ..training.tiny_model import TinyModelSpec, build_tiny_model

        path = self.folder / "base"
        if (path / "config.json").is_file():
            return path
        world = ScoutWorld(self.graph, self.options, engine=self.engine, index=self.index)
        try:
            samples = warm_start_samples(world, training_questions(self.quiz, self.graph, limit=self.settings[
                "questions"], seed=self.seed))
        finally:
            world.close()
        spec = TinyModelSpec(hidden_size=64, head_dim=16, vocab_size=4096, tokenizer_cross_words=True)
        return Path(build_tiny_model(path, samples=samples, spec=spec, seed=self.seed))

    def trained(self, name: str, quiz: Path | None = None, code: bool = True, clue: bool = True) -> dict[str, Any]:
        """GRPO run ``name`` (reused when done): its training_result.json (weights_dir, warm_start_dir, ...)."""
        from ..methods.graphscout.training.settings import TINY_CPU_PRESET, GRPOSettings
        from ..methods.graphscout.training.trainer import RESULT_FILE, train_graphscout

        out = self.folder / name
        if (out / RESULT_FILE).is_file():
            return dict(json.loads((out / RESULT_FILE).read_text(encoding="utf-8")))
        s = self.settings
        settings = GRPOSettings(**{**TINY_CPU_PRESET, "steps": s["steps"], "max_questions": s["questions"],
                                   "group_size": s["group_size"], "micro_batch": s["group_size"] * 2,
                                   "max_turns": s["max_turns"], "warm_start_epochs": s["warm_start_epochs"],
                                   "max_completion_tokens": s["max_completion_tokens"], "seed": self.seed,
                                   "use_clue": clue, "save_steps": max(1, s["steps"]), "progress": self.progress})
        options = self.options.model_copy(update={"code_interpreter": code})
        return train_graphscout(self.graph, quiz or self.quiz, self.base(), out, settings, options,
                                engine=self.engine, index=self.index).to_dict()

    def random_walk_quiz(self) -> Path:
        """The random-walk quizzer's questions on the graph (as many as the training uses, same seed)."""
        from ..methods.graphscout.quiz import GraphScoutQuizConfig, generate_graphscout_quiz
        from ..storage.jsonl import write_jsonl_atomic

        path = self.folder / "quiz-random-walk.jsonl"
        if not path.is_file():
            config = GraphScoutQuizConfig(n=max(8, 2 * self.settings["questions"]), seed=self.seed,
                                          quizzer="random-walk")
            write_jsonl_atomic(path, generate_graphscout_quiz(self.graph, config).questions)
        return path

    def score(self, label: str, weights: str | Path | None, code: bool = True) -> Scored:
        """Score a model folder (None: the scripted solver) on the test questions."""
        import asyncio

        from ..methods.graphscout.solver import GraphScout
        from ..metrics.answers import exact_match, token_f1

        llm = None
        if weights is not None:
            from ..llm.local_backend import LocalChatClient

            llm = LocalChatClient(weights, max_new_tokens=self.settings["max_new_tokens"], seed=self.seed)
        solver = GraphScout(self.graph, llm=llm, options=self.options.model_copy(update={"code_interpreter": code}),
                            engine=self.engine, index=self.index)
        f1 = em = 0.0
        calls = failed = 0

        async def run_all() -> None:
            nonlocal f1, em, calls, failed
            try:
                for question in self.tests:
                    solution = await solver.asolve(question.query)
                    text = solution.answer.text if solution.answer is not None else None
                    f1 += token_f1(text, question.answer, question.answer_type)
                    em += exact_match(text, question.answer, question.answer_type)
                    made = solution.trajectory.tool_calls()
                    calls += len(made)
                    failed += sum(1 for c in made if not c.ok or not c.parsed_ok or _raised(c.result))
            finally:
                await solver.aclose()

        asyncio.run(run_all())
        n = len(self.tests)
        run_with = "scripted solver (offline, not an LLM)" if weights is None else "tiny model (pipeline check)"
        return Scored(label, run_with, n, f1 / n, em / n, calls, failed, None if weights is None else str(weights))

    def close(self) -> None:
        self.engine.close()


def _raised(result: Any) -> bool:
    return isinstance(result, dict) and bool(result.get("error"))


def run_tiny_experiment(name: str, graph: KnowledgeGraph, quiz: Path, runs_root: Path, settings: dict[str, Any], *,
                        seed: int, preset: str | None, out: Path, progress: bool, command: str | None) -> Report:
    """Train (or reuse) the variants experiment ``name`` needs, score them and build the report."""
    lab = TinyLab(graph, quiz, runs_root, settings, seed, preset, progress)
    try:
        full = lab.trained("grpo")
        if name == "graphscout-tool-failures":
            scored = [lab.score("tiny base (random init)", lab.base()),
                      lab.score("w/o train (warm start, before GRPO)", full["warm_start_dir"]),
                      lab.score("w/ train (after GRPO)", full["weights_dir"])]
        else:
            no_code, no_clue = lab.trained("grpo-no-code", code=False), lab.trained("grpo-no-clue", clue=False)
            walk = lab.trained("grpo-random-walk", quiz=lab.random_walk_quiz())
            scored = [lab.score("GraphScout", full["weights_dir"]),
                      lab.score("w/o Graph Solver", full["warm_start_dir"]),
                      lab.score("w/o A_code", no_code["weights_dir"], code=False),
                      lab.score("w/o r_clue", no_clue["weights_dir"]),
                      lab.score("rw Graph Quizzer", walk["weights_dir"]),
                      lab.score("GraphScout", None), lab.score("w/o A_code", None, code=False)]
    finally:
        lab.close()
    domain, same = paper_domain(graph)
    setting = [f"graph: {graph.info.name or graph.path}; quiz: `{quiz}`; scored on {len(lab.tests)} test questions",
               f"tiny models: a Qwen3 of hidden size 64 built from a config, warm start + GRPO at {settings}, seed "
               f"{seed}, preset {preset or 'none'}: pipeline checks, not model results", f"run folders: {lab.folder}",
               f"paper columns: GRBench {domain}" + ("" if same else " (this graph is not a GRBench domain: for "
                                                     "reference only)"),
               *([f"command: `{command}`"] if command else [])]
    build = _failures_report if name == "graphscout-tool-failures" else _ablations_report
    report = build(scored, domain, setting)
    report.runs = [{"label": s.label, "folder": s.folder} for s in scored if s.folder]
    return report


def _failures_report(scored: list[Scored], domain: str, setting: list[str]) -> Report:
    report = Report("graphscout-tool-failures", "GraphScout Table 5: failed tool calls before and after training",
                    setting=setting)
    before, after = reported_failures(domain)
    paper = {"w/o train (warm start, before GRPO)": f"{before:.2f}%", "w/ train (after GRPO)": f"{after:.2f}%"}
    table = Table("table5", "Failed tool calls on the test questions", ["Model", "Run with", "n", "tool calls",
                                                                         "failed", "failed %", f"Paper: {domain}"])
    for s in scored:
        share = "no tool calls" if s.failed_share is None else f"{100 * s.failed_share:.2f}%"
        table.rows.append([s.label, s.run_with, str(s.n), str(s.tool_calls), str(s.failed_calls), share,
                           paper.get(s.label, "—")])
    full = Table("paper", "As reported: GraphScout Table 5, failed tool calls", ["Row", *DOMAINS],
                 [[row, *(f"{v:.2f}%" for v in values)] for row, values in TABLE_5.items()])
    report.tables += [table, full]
    return report


def _ablations_report(scored: list[Scored], domain: str, setting: list[str]) -> Report:
    report = Report("graphscout-ablations", "GraphScout Table 2: ablations", setting=setting)
    column = DOMAINS.index(domain) if domain in ("Healthcare", "Literature") else 0
    table = Table("table2", "Answers on the test questions", ["Row", "Run with", "n", "EM", "F1",
                                                              f"Paper: {domain} F1", f"Paper: {domain} QwenScore"])
    for s in scored:
        qwen, f1 = ablation_row(s.label).reported[column]
        table.rows.append([s.label, s.run_with, str(s.n), f"{s.exact_match:.3f}", f"{s.f1:.3f}", f"{f1:.3f}",
                           f"{qwen:.3f}"])
    full = Table("paper", "As reported: GraphScout Table 2 (QwenScore / F1)", ["Row", "Healthcare", "Literature"],
                 [[row.label, *(f"{q:.3f} / {f:.3f}" for q, f in row.reported)] for row in TABLE_2])
    report.tables += [table, full]
    return report
