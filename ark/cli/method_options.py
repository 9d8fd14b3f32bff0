"""The method options every command shares (``--method``, ``--set``, ``--config``, the model flags), declared once.

:class:`MethodCommand` (``app.command(NAME, cls=method_command(DEFAULT))``) adds their click parameters to a
command's own and hands the command one :class:`MethodSelection` (:func:`method_selection`);
:func:`resolve_choice` validates it against the method's options model and builds the run
context (the chat model, candidate types, seed), failing with one clear line on bad input.
"""

import copy
import functools
import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
import typer.main
from typer.core import TyperCommand, TyperGroup

from .common import err_console, fail, make_policy, spinner

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph
    from ..methods.choice import MethodChoice

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


def _flags(
    *,
    method: Annotated[str | None, typer.Option(
            "--method", "-m", help="Retrieval method (`ark methods` lists them with their options).")] = None,
    sets: Annotated[list[str] | None, typer.Option(
            "--set", "-s", metavar="KEY=VALUE",
            help="A method option, e.g. --set n_agents=5 or --set tools.neighborhood_budget=10 (repeatable).")] = None,
    preset: Annotated[str | None, typer.Option(
            "--preset", help="Options preset under --config and --set: paper = the method's paper's settings (ark, "
                             "seeder, graphscout; `ark methods --show-preset paper` lists them); none = no preset "
                             "(ark experiment's default is paper).")] = None,
    config: Annotated[Path | None, typer.Option(
            "--config", help="TOML file of method options (a table named after the method, or top-level keys); "
                             "--set overrides it.")] = None,
    model: Annotated[str | None, typer.Option(
            help="LLM methods: chat model name (else ARK_MODEL), or hf:PATH for a local Hugging Face model such as a "
                 "distilled student (needs the train extra).")] = None,
    adapter: Annotated[str | None, typer.Option(
            help="LLM methods: a LoRA adapter folder for the --model hf:PATH base (merged in at load time).")] = None,
    temperature: Annotated[float | None, typer.Option(
            min=0.0, max=2.0, help="LLM methods: sampling temperature, 0 = greedy (else the config file's; "
                                   "default 0.7).")] = None,
    max_tokens: Annotated[int | None, typer.Option(
            min=1, help="LLM methods: most tokens per model turn (else the config file's; default 2048).")] = None,
    max_tool_calls_per_turn: Annotated[int | None,
            typer.Option(min=1, max=10_000, help="LLM methods: most tool calls of one model reply that are run; the "
                         "rest get an observation (else the config file's; default 32).")] = None,
    timeout: Annotated[float | None, typer.Option(
            min=0.001, help="LLM methods: seconds one chat request may take, per try (else timeout_s under [llm]; "
                            "default 120). A CPU server reads a first turn's whole prompt before it replies.")] = None,
    max_retries: Annotated[int | None, typer.Option(
            min=0, help="LLM methods: retries of a failed or timed-out chat request, each resending the whole "
                        "prompt (else max_retries under [llm]; default 4).")] = None,
    base_url: Annotated[str | None, typer.Option(
            help="LLM methods: OpenAI-compatible endpoint (else OPENAI_BASE_URL).")] = None,
    offline: Annotated[bool, typer.Option(
            help="LLM methods: use the offline policy even if a model is configured.")] = False,
    candidate_types: Annotated[list[str] | None,
            typer.Option("--candidate-types",
                         help="Only rank (and score against) nodes of these types, e.g. disease. Default: all.")]
    = None,
    seed: Annotated[int, typer.Option(
            help="Seed of a method's random choices (sampling, training); recorded in the run's config.")] = 0,
    allow_partial: Annotated[bool, typer.Option(
            "--allow-partial", help="Multi-agent methods: when some agents fail (their model calls keep failing), "
                                    "fuse the others and mark the result partial instead of failing the question.")]
    = False,
) -> None:
    """The shared method flags, declared as typer reads a command's parameters: :class:`MethodCommand` and
    :class:`MethodGroup` add typer's click parameters of these to a command's own."""


FLAGS = tuple(inspect.signature(_flags).parameters)  # their names, in the order the help lists them
SELECTION = "ark.method_selection"  # ctx.meta: the command line's MethodSelection, from parsing to the command


@functools.cache
def _flag_params(default_method: str | None) -> tuple[Any, ...]:
    """The click parameters of the shared flags (typer's own conversion of :func:`_flags`, through the public
    ``typer.main.get_command``), ``--method`` defaulting to ``default_method``."""
    app = typer.Typer(add_completion=False)
    app.command()(_flags)
    params = [copy.copy(param) for param in typer.main.get_command(app).params]
    for param in params:
        if param.name == "method":
            param.default = default_method
    return tuple(params)


def _take_selection(ctx: Any, rest: list[str]) -> list[str]:
    """Move the shared flags' values out of ``ctx.params`` (the command's function does not take them) into one
    :class:`MethodSelection` in ``ctx.meta``; ``rest``, the words parsing left, unchanged."""
    values = {name: ctx.params.pop(name, None) for name in FLAGS}
    candidate_types = list(values["candidate_types"] or []) or None  # as typer passes a repeatable option
    ctx.meta[SELECTION] = MethodSelection(
        method=values["method"], sets=list(values["sets"] or []), config=values["config"], model=values["model"],
        base_url=values["base_url"], offline=bool(values["offline"]), candidate_types=candidate_types,
        seed=values["seed"] or 0, allow_partial=bool(values["allow_partial"]), preset=values["preset"],
        progress=bool(ctx.params.get("progress")), adapter=values["adapter"], temperature=values["temperature"],
        max_tokens=values["max_tokens"], max_tool_calls_per_turn=values["max_tool_calls_per_turn"],
        timeout=values["timeout"], max_retries=values["max_retries"])
    return rest


# typer calls a command class with its click parameters as keywords (typer.main.get_command_from_info); the
# context and parameter classes are typer's own click (typer._click), not public, so they are typed Any here.
def _with_flags(params: list[Any] | None, default_method: str | None) -> list[Any]:
    return [*(params or []), *_flag_params(default_method)]


class MethodCommand(TyperCommand):
    """A command that also takes the shared method flags (after its own); its function reads them with
    :func:`method_selection`. :func:`method_command` makes one for a default ``--method``."""

    default_method: str | None = None

    def __init__(self, *args: Any, params: list[Any] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, params=_with_flags(params, self.default_method), **kwargs)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return _take_selection(ctx, super().parse_args(ctx, args))


class MethodGroup(TyperGroup):
    """A group whose own callback takes the shared method flags (``ark eval``; ``--method`` has no default), as
    :class:`MethodCommand` does."""

    def __init__(self, *args: Any, params: list[Any] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, params=_with_flags(params, None), **kwargs)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return _take_selection(ctx, super().parse_args(ctx, args))


def method_command(default_method: str | None = None) -> type[MethodCommand]:
    """The command class of a command taking the shared method flags, ``--method`` defaulting to
    ``default_method``: ``app.command(NAME, cls=method_command(...))``."""
    return type("MethodCommand", (MethodCommand,), {"default_method": default_method})


def method_selection(ctx: Any) -> MethodSelection:
    """The shared method flags of this command line (its command's class: :class:`MethodCommand` or
    :class:`MethodGroup`)."""
    selection = ctx.meta.get(SELECTION)
    if not isinstance(selection, MethodSelection):
        raise RuntimeError(f"command {ctx.info_name!r} takes no method flags: give it cls=method_command(...)")
    return selection


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
