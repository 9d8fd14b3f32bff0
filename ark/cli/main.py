"""Entry point of the ``ark`` command: one typer app whose group class loads each command's module on demand.

Start-up is kept short by typer's and click's documented means only: the app's group class (:class:`ArkGroup`, a
``typer.core.TyperGroup`` given as ``typer.Typer(cls=...)``) overrides ``list_commands`` and ``get_command`` so
that a command's module is imported, and its signature converted, only when that command runs or shows its help
(click's "lazily loading subcommands" pattern); ``ark --help`` lists the commands from the static table
:data:`COMMANDS` (see :mod:`ark.cli.top_help`); commands import their libraries inside their bodies.
"""

from __future__ import annotations

import difflib
import functools
import gc
import importlib
import os
from typing import Any, NamedTuple

import typer
import typer.main
from typer.core import TyperGroup

from ..runtime.interrupts import EXIT_INTERRUPTED, exit_now
from .common import CommandProcess

APP_SETTINGS: dict[str, Any] = {
    "name": "ark",
    "help": "ARK: retrieve evidence from text-rich knowledge graphs with language-model agents.",
    "no_args_is_help": True,
    "pretty_exceptions_show_locals": False,
    "add_completion": False,
}


class Listed(NamedTuple):
    """A command of the ``ark`` app: the module of ``ark.cli`` that registers it, and its help as the listing of
    ``ark --help`` shows it (the first paragraph of the command's help; tests/cli/test_startup.py checks both)."""

    module: str
    help: str


# Every command and group of the app, in the order ``ark --help`` lists them.
COMMANDS: dict[str, Listed] = {
    "ask": Listed("ask_cmd", "Answer QUESTION over GRAPH (default method: the ARK agents, with an LLM if configured, "
                             "else the offline\npolicy). Method options: --set KEY=VALUE, e.g. --set n_agents=5 "
                             "--set max_steps=10."),
    "retrieve": Listed("eval_cmd", 'Run METHOD over a query file and write one line per query: {"id", "ranked", '
                                   '"scores"} (resumable).'),
    "experiment": Listed("experiment_cmd", "Run one of the papers' experiments into a report folder (report.md, "
                                           "PNG plots, results.json); a rerun\nresumes it. Under --preset paper "
                                           "unless --preset none; the method is ark (--set/--config: its base "
                                           "options;\n--model/--base-url/--offline: the model, else the offline "
                                           "policy); --seed also seeds the query subset.\nkhop-growth (SeedER "
                                           "Figure 3a/5, no method): --set hops=3 --set seeds=3 --set "
                                           "seeds_by=dense|bm25."),
    "methods": Listed("methods_cmd", "List the retrieval methods (for --method) and their options (for --set "
                                     "KEY=VALUE)."),
    "quiz": Listed("quiz_cmd", "Generate questions whose answers are computed exactly by graph traversal."),
    "mcp": Listed("serve_cmd", "Serve GRAPH's tools to MCP clients: search, neighbourhoods, nodes, the schema, paths "
                               "between two nodes and\nretrieve (the evidence any method finds); ARK's strategy as the "
                               "prompt 'ark'; the schema, node pages and run\nfolders as resources. Read-only; results "
                               "are capped at --max-rows and --max-chars. See docs/mcp.md."),
    "serve": Listed("serve_cmd", "A local web app over GRAPH: ask with any method and watch each agent's steps as "
                                 "they happen, read the fused\nranking with its evidence, open nodes, browse run "
                                 "folders. JSON API with OpenAPI docs at /docs."),
    "graph": Listed("graph_cmd", "Build, import and inspect knowledge graphs."),
    "eval": Listed("eval_cmd", "Evaluate a retrieval method on a query file (STaRK metrics); `eval compare` "
                               "compares."),
    "trajectory": Listed("trajectory_cmd", "Inspect recorded agent trajectories (JSONL files)."),
    "train": Listed("train_cmd", "Train a method's model: seeder (needs the seeder extra), mfar (dense), "
                                 "graphscout (train, graphdb)."),
    "model": Listed("model_cmd", "Local models: convert a GGUF file to a Hugging Face folder ARK loads."),
    "distill": Listed("distill_cmd", "Distil an agent's tool use into a small local model: export teacher "
                                     "trajectories, train a student, compare the two."),
}


@functools.cache
def module_commands(module_name: str) -> Any:
    """The click group of the commands that module ``ark.cli.<module_name>`` registers (``typer.main.get_group``
    converts them). Once per process: a module's ``register`` may add commands to its own sub-app."""
    scratch = typer.Typer()
    importlib.import_module(f"{__package__}.{module_name}").register(scratch)
    return typer.main.get_group(scratch)


class ArkGroup(TyperGroup):
    """The ``ark`` group: its commands come from :data:`COMMANDS`, each module imported when first needed."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        listed = COMMANDS.get(cmd_name)
        return None if listed is None else module_commands(listed.module).get_command(ctx, cmd_name)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        # typer suggests close names from the commands it holds (none here: they are loaded on demand), so the
        # suggestion is made from the table, in typer's words.
        name = args[0] if args else ""
        if (name and not name.startswith("-") and name not in COMMANDS and not ctx.resilient_parsing
                and getattr(self, "suggest_commands", True)):
            matches = difflib.get_close_matches(name, list(COMMANDS))
            suggestion = f" Did you mean {', '.join(map(repr, matches))}?" if matches else ""
            ctx.fail(f"No such command {name!r}.{suggestion}")
        return super().resolve_command(ctx, args)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if not args and self.no_args_is_help and not ctx.resilient_parsing:
            # `ark` alone: the help page and exit status 2, as typer's NoArgsIsHelpError gives, without importing
            # typer's renderer (typer's error handler imports it even though it prints nothing for this error)
            ctx.get_help()  # format_help prints the page
            ctx.exit(2)
        return super().parse_args(ctx, args)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        from . import top_help  # a command's run never draws this page

        top_help.print_page(self, ctx, {name: listed.help for name, listed in COMMANDS.items()})


def _no_options() -> None:
    """The app's callback: none (its help text comes from APP_SETTINGS)."""


app = typer.Typer(cls=ArkGroup, callback=_no_options, **APP_SETTINGS)


def apply_process_settings() -> None:
    """Settings of the ``ark`` process, made before any command's imports (never at ``import ark.cli``: a program
    importing ARK keeps its own).

    A command's start-up imports create hundreds of thousands of objects, and with the default threshold (700) the
    cyclic garbage collector runs over and over meanwhile (~0.02 s of an offline ``ark ask``); it still runs, less
    often: at most 50,000 new container objects (a few MB) wait for a collection.

    numpy's OpenBLAS starts its worker threads when numpy is imported, and each spins for 2**28 cycles (~0.1 s of a
    core) waiting for work before it sleeps: up to 0.3 s of CPU for every command that opens a graph, and on a busy
    machine wall time too. 2**4 cycles makes them sleep at once; a later BLAS call wakes them (microseconds), with
    the same threads and results. OpenBLAS reads it when it loads (numpy's import); a value the user set wins.
    """
    gc.set_threshold(50_000, *gc.get_threshold()[1:])
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")


def main() -> None:  # pragma: no cover - console entry point
    """Run the app. A command stopped by Ctrl-C leaves at once (its files are closed): the interpreter's own
    shutdown resets the Ctrl-C handler, so a second Ctrl-C during it would kill the process mid-exit."""
    apply_process_settings()
    CommandProcess.is_command = True
    try:
        app()
    except SystemExit as exc:
        if exc.code == EXIT_INTERRUPTED:
            exit_now()
        raise


if __name__ == "__main__":  # pragma: no cover
    main()
