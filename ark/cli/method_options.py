"""The method options every command shares (``--method``, ``--set``, ``--config``, the model flags), declared once.

:func:`method_options` adds them to a command's signature (typer reads the signature) and hands the command one
:class:`MethodSelection`; :func:`resolve_choice` validates it against the method's options model and builds the run
context (the chat model, candidate types, seed), failing with one clear line on bad input.
"""

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .common import err_console, fail, make_policy, spinner

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph
    from ..methods.choice import MethodChoice

SELECTION = "selection"


@dataclass
class MethodSelection:
    """The raw method flags of one command line."""

    method: str | None
    sets: list[str]
    config: Path | None
    model: str | None
    base_url: str | None
    offline: bool
    candidate_types: list[str] | None
    seed: int
    allow_partial: bool = False
    progress: bool = False
    adapter: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    max_tool_calls_per_turn: int | None = None
    timeout: float | None = None
    max_retries: int | None = None
    preset: str | None = None


def _parameters(default_method: str | None) -> list[inspect.Parameter]:
    keyword = inspect.Parameter.KEYWORD_ONLY
    return [
        inspect.Parameter("method", keyword, default=default_method, annotation=Annotated[str | None, typer.Option(
            "--method", "-m", help="Retrieval method (`ark methods` lists them with their options).")]),
        inspect.Parameter("sets", keyword, default=None, annotation=Annotated[list[str] | None, typer.Option(
            "--set", "-s", metavar="KEY=VALUE",
            help="A method option, e.g. --set n_agents=5 or --set tools.neighborhood_budget=10 (repeatable).")]),
        inspect.Parameter("preset", keyword, default=None, annotation=Annotated[str | None, typer.Option(
            "--preset", help="Options preset under --config and --set: paper = the method's paper's settings (ark, "
                             "seeder, graphscout; `ark methods --show-preset paper` lists them); none = no preset "
                             "(ark experiment's default is paper).")]),
        inspect.Parameter("config", keyword, default=None, annotation=Annotated[Path | None, typer.Option(
            "--config", help="TOML file of method options (a table named after the method, or top-level keys); "
                             "--set overrides it.")]),
        inspect.Parameter("model", keyword, default=None, annotation=Annotated[str | None, typer.Option(
            help="LLM methods: chat model name (else ARK_MODEL), or hf:PATH for a local Hugging Face model such as a "
                 "distilled student (needs the train extra).")]),
        inspect.Parameter("adapter", keyword, default=None, annotation=Annotated[str | None, typer.Option(
            help="LLM methods: a LoRA adapter folder for the --model hf:PATH base (merged in at load time).")]),
        inspect.Parameter("temperature", keyword, default=None, annotation=Annotated[float | None, typer.Option(
            min=0.0, max=2.0, help="LLM methods: sampling temperature, 0 = greedy (else the config file's; "
                                   "default 0.7).")]),
        inspect.Parameter("max_tokens", keyword, default=None, annotation=Annotated[int | None, typer.Option(
            min=1, help="LLM methods: most tokens per model turn (else the config file's; default 2048).")]),
        inspect.Parameter("max_tool_calls_per_turn", keyword, default=None, annotation=Annotated[int | None,
            typer.Option(min=1, max=10_000, help="LLM methods: most tool calls of one model reply that are run; the "
                         "rest get an observation (else the config file's; default 32).")]),
        inspect.Parameter("timeout", keyword, default=None, annotation=Annotated[float | None, typer.Option(
            min=0.001, help="LLM methods: seconds one chat request may take, per try (else timeout_s under [llm]; "
                            "default 120). A CPU server reads a first turn's whole prompt before it replies.")]),
        inspect.Parameter("max_retries", keyword, default=None, annotation=Annotated[int | None, typer.Option(
            min=0, help="LLM methods: retries of a failed or timed-out chat request, each resending the whole "
                        "prompt (else max_retries under [llm]; default 4).")]),
        inspect.Parameter("base_url", keyword, default=None, annotation=Annotated[str | None, typer.Option(
            help="LLM methods: OpenAI-compatible endpoint (else OPENAI_BASE_URL).")]),
        inspect.Parameter("offline", keyword, default=False, annotation=Annotated[bool, typer.Option(
            help="LLM methods: use the offline policy even if a model is configured.")]),
        inspect.Parameter("candidate_types", keyword, default=None, annotation=Annotated[list[str] | None,
            typer.Option("--candidate-types",
                         help="Only rank (and score against) nodes of these types, e.g. disease. Default: all.")]),
        inspect.Parameter("seed", keyword, default=0, annotation=Annotated[int, typer.Option(
            help="Seed of a method's random choices (sampling, training); recorded in the run's config.")]),
        inspect.Parameter("allow_partial", keyword, default=False, annotation=Annotated[bool, typer.Option(
            "--allow-partial", help="Multi-agent methods: when some agents fail (their model calls keep failing), "
                                    "fuse the others and mark the result partial instead of failing the question.")]),
    ]


def method_options(default_method: str | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a command so it also takes the shared method flags, passed to it as ``selection``."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(command, eval_str=True)
        own = [p for p in signature.parameters.values() if p.name != SELECTION]
        added = _parameters(default_method)

        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            values = {p.name: kwargs.pop(p.name) for p in added}
            selection = MethodSelection(
                method=values["method"], sets=list(values["sets"] or []), config=values["config"],
                model=values["model"], base_url=values["base_url"], offline=values["offline"],
                candidate_types=values["candidate_types"], seed=values["seed"], allow_partial=values["allow_partial"],
                preset=values["preset"],
                progress=bool(kwargs.get("progress")), adapter=values["adapter"], temperature=values["temperature"],
                max_tokens=values["max_tokens"], max_tool_calls_per_turn=values["max_tool_calls_per_turn"],
                timeout=values["timeout"], max_retries=values["max_retries"])
            return command(*args, **kwargs, selection=selection)

        positional = [p for p in own if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        keyword = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own if p not in positional]
        wrapper.__signature__ = signature.replace(parameters=[*positional, *keyword, *added])  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in [*positional, *keyword, *added]}
        del wrapper.__wrapped__  # typer must read the new signature, not the command's own
        return wrapper

    return decorate


def resolve_choice(selection: MethodSelection, graph: "KnowledgeGraph", method: str | None = None) -> "MethodChoice":
    """The validated method choice, or exit with one line naming what is wrong and the valid choices."""
    from ..methods import MethodContext, MethodError
    from ..methods.choice import MethodChoice
    from ..methods.options import merge_options, parse_set_values, read_options_file
    from ..methods.presets import NO_PRESET

    name = method or selection.method
    if not name:
        fail("missing --method (`ark methods` lists them)")
    candidate_types = None
    if selection.candidate_types:
        try:
            candidate_types = [graph.resolve_node_type(t) for t in selection.candidate_types]
        except ValueError as exc:
            fail(str(exc))
    try:
        from ..methods import get_method_spec

        spec = get_method_spec(name)
        file_values = read_options_file(selection.config, name) if selection.config is not None else {}
        values = merge_options(file_values, parse_set_values(selection.sets))
        options = spec.make_options(values, preset=None if selection.preset == NO_PRESET else selection.preset)
    except MethodError as exc:
        fail(str(exc))
    llm = None
    if spec.uses_llm:
        from ..methods.registry import needs_model_message

        if selection.offline and not spec.offline:
            fail(needs_model_message(name))
        llm = make_policy(model=selection.model, base_url=selection.base_url, offline=selection.offline,
                          adapter=selection.adapter, temperature=selection.temperature,
                          max_tokens=selection.max_tokens,
                          max_tool_calls_per_turn=selection.max_tool_calls_per_turn,
                          timeout_s=selection.timeout, max_retries=selection.max_retries,
                          announce_offline=spec.offline)
        if llm is None and not spec.offline:
            fail(needs_model_message(name))
    elif selection.model or selection.base_url or selection.adapter:
        err_console.print(f"[yellow]warning:[/] method {name!r} uses no chat model; --model/--base-url/--adapter "
                          "are ignored")
    context = MethodContext(llm=llm, candidate_types=candidate_types, progress=selection.progress,
                            seed=selection.seed, allow_partial=selection.allow_partial)
    return MethodChoice(name, options, context)


def build_retriever(choice: "MethodChoice", graph: "KnowledgeGraph") -> Any:
    """Build the method (indexes and models are made on first use, under a spinner)."""
    from ..methods import MethodError
    from ..sandbox.launcher import SandboxUnavailable

    try:
        with spinner(f"Preparing {choice.name} (indexes are built on first use) ..."):
            return choice.build(graph)
    except MethodError as exc:
        fail(str(exc))
    except SandboxUnavailable as exc:  # one line naming the fix (install bubblewrap, enable user namespaces)
        fail(str(exc), code=1)
    except (ValueError, FileNotFoundError) as exc:  # options the method refuses once it looks (a missing model)
        fail(f"method {choice.name!r}: {' '.join(str(exc).split())}")
    except ImportError as exc:
        extras = ", ".join(choice.spec.requires) or "the method's extra"
        fail(f"method {choice.name!r} needs an optional dependency: {exc}. Install it with pip install "
             f"'ark-kg[{extras}]'")
