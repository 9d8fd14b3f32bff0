"""``ark train``: train a method's model. ``ark train graphscout``: GRPO of the GraphScout solver on a quiz;
``ark train seeder`` (in :mod:`ark.cli.train_seeder_cmd`): SeedER's expansion policy."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from .common import GRAPH_HELP, console, fail, guarded, load_graph

if TYPE_CHECKING:
    from pydantic import BaseModel

train_app = typer.Typer(help="Train a method's model: seeder (needs the seeder extra), mfar (dense), graphscout "
                        "(train, graphdb).",
                        no_args_is_help=True, pretty_exceptions_show_locals=False)

PRESETS = ("paper", "tiny-cpu")


def graphscout(
    graph: str = typer.Argument(..., help=GRAPH_HELP),
    quiz: Path = typer.Option(..., "--quiz", help="GraphScout quiz JSONL ('ark quiz GRAPH --style graphscout')."),
    base: str = typer.Option(..., "--base", help="Base model: a Hugging Face folder or cached id (hf:PATH also "
                             "accepted), with a tool-calling chat template."),
    out: Path = typer.Option(..., "--out", "-o", help="Run folder: model/ (or adapter/), checkpoints/, "
                             "progress.jsonl, training_config.json, training_result.json."),
    seed: int | None = typer.Option(None, "--seed", min=0, help="Seed (default 0)."),
    sets: list[str] = typer.Option([], "--set", help="A training setting, key=value (repeatable); "
                                   "'solver.KEY=value' sets a solver option (e.g. solver.code_interpreter=false). "
                                   "the keys and defaults: docs/methods/graphscout.md, Training."),
    preset: str = typer.Option("paper", "--preset", help="paper: GraphScout Table 3 (a GPU run); tiny-cpu: the "
                               "offline tiny-model proof's settings (pipeline check)."),
    resume: bool = typer.Option(False, "--resume", help="Continue from the newest checkpoint in --out."),
) -> None:
    """GRPO of the GraphScout solver with tool-calling rollouts (sandboxed code + node retriever)."""
    try:
        from ..methods.graphscout.training.settings import TINY_CPU_PRESET, GRPOSettings
    except ImportError as exc:  # pragma: no cover - pydantic is core
        fail(str(exc))
    if preset not in PRESETS:
        fail(f"unknown --preset {preset!r}; valid: {', '.join(PRESETS)}")
    settings, options = _settings(sets, TINY_CPU_PRESET if preset == "tiny-cpu" else {}, seed, GRPOSettings)
    if not quiz.is_file():
        fail(f"--quiz {quiz}: no such file; write one with 'ark quiz {graph} --style graphscout --out {quiz}'")
    missing = _missing_extras()
    if missing:
        fail(f"ark train graphscout needs {', '.join(missing)}: pip install -e \".[train,graphdb]\"")
    base = base.removeprefix("hf:")
    kg = load_graph(graph)
    from ..methods.graphscout.training.data import QuizError
    from ..methods.graphscout.training.trainer import GRPOTrainingError, train_graphscout

    console.print(f"GRPO of the GraphScout solver: base {base}, {settings.steps} steps × "
                  f"{settings.questions_per_step} questions × {settings.group_size} trajectories, lr "
                  f"{settings.learning_rate:g}, KL {settings.kl_coef:g}, clip [{settings.clip_low}, "
                  f"{settings.clip_high}] → {out}")
    try:
        result = train_graphscout(kg, quiz, base, out, settings, options, resume=resume)
    except (QuizError, GRPOTrainingError) as exc:
        fail(str(exc))
    curve = result.reward_curve
    if curve:
        head, tail = curve[: max(1, len(curve) // 5)], curve[-max(1, len(curve) // 5):]
        console.print(f"Mean reward: first steps {sum(head) / len(head):.3f} → last steps {sum(tail) / len(tail):.3f}"
                      f" ({len(curve)} steps logged)")
    console.print(f"{result.steps} steps, {result.questions} questions ({result.dropped_long_prompts} dropped: prompt "
                  f"too long), {result.wall_s:.0f}s. Trained solver: {result.weights_dir}")
    console.print(f"Use it: ark ask {graph} \"...\" --method graphscout --model hf:{result.weights_dir}")


def _settings(sets: list[str], preset: dict, seed: int | None, model: type[BaseModel]):
    from pydantic import ValidationError

    from ..methods.graphscout.options import GraphScoutOptions
    from ..methods.options import parse_set_values
    from ..methods.registry import MethodError

    try:
        values = parse_set_values(sets)
    except MethodError as exc:
        fail(str(exc))
    solver = values.pop("solver", {})
    if not isinstance(solver, dict):
        fail("--set solver=...: give solver options one by one, e.g. --set solver.max_turns=6")
    merged = {**preset, **values}
    if seed is not None:
        merged["seed"] = seed
    try:
        settings = model(**merged)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        fail(f"bad --set: {problems}. Valid keys: {', '.join(model.model_fields)} (and solver.<option>, see "
             f"'ark methods graphscout')")
    try:
        options = GraphScoutOptions(**solver)
    except ValidationError as exc:
        problems = "; ".join(f"solver.{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        fail(f"bad --set: {problems} (see 'ark methods graphscout' for the solver's options)")
    return settings, options


def _missing_extras() -> list[str]:
    import importlib.util

    wanted = {"torch": "train", "transformers": "train", "trl": "train", "datasets": "train", "ladybug": "graphdb"}
    return sorted({f"the {extra} extra ({name})" for name, extra in wanted.items()
                   if importlib.util.find_spec(name) is None})


def register(app: typer.Typer) -> None:
    """Add the ``train`` command group to the ``ark`` app."""
    from .train_baselines_cmd import avatar, mor
    from .train_mfar_cmd import mfar
    from .train_seeder_cmd import seeder

    train_app.command("graphscout")(guarded(graphscout))
    train_app.command("seeder")(guarded(seeder))
    train_app.command("avatar")(guarded(avatar))
    train_app.command("mor")(guarded(mor))
    train_app.command("mfar")(guarded(mfar))
    app.add_typer(train_app, name="train")
