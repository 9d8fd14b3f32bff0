"""Entry point of the ``ark`` command: assembles the command groups of the sibling modules."""

from __future__ import annotations

import sys
from typing import Any

import typer
import typer.main

from ..runtime.interrupts import EXIT_INTERRUPTED, exit_now
from . import (
    ask_cmd,
    distill_cmd,
    eval_cmd,
    experiment_cmd,
    graph_cmd,
    methods_cmd,
    quiz_cmd,
    serve_cmd,
    train_cmd,
    trajectory_cmd,
)

APP_SETTINGS: dict[str, Any] = {
    "name": "ark",
    "help": "ARK: retrieve evidence from text-rich knowledge graphs with language-model agents.",
    "no_args_is_help": True,
    "pretty_exceptions_show_locals": False,
    "add_completion": False,
}
app = typer.Typer(**APP_SETTINGS)

COMMAND_MODULES = (graph_cmd, ask_cmd, eval_cmd, experiment_cmd, methods_cmd, quiz_cmd, trajectory_cmd, serve_cmd,
                   train_cmd, distill_cmd)
for module in COMMAND_MODULES:
    module.register(app)


def app_for(argv: list[str]) -> typer.Typer:
    """The app to run ``ark argv``: when ``argv`` starts with a command's name, an app holding only that command
    (or group), which parses and reports exactly as the whole one does for it; otherwise (``--help``, no or an
    unknown command) the whole app. Typer turns every registered command into a click command before parsing,
    reading each signature: ~0.03 s for all of them, which the one command run does not need."""
    if not argv or argv[0].startswith("-"):
        return app
    commands = [c for c in app.registered_commands
                if (c.name or typer.main.get_command_name(c.callback.__name__)) == argv[0]]  # type: ignore[union-attr]
    groups = [g for g in app.registered_groups if g.name == argv[0]]
    if len(commands) + len(groups) != 1:
        return app
    single = typer.Typer(**APP_SETTINGS)
    single.registered_commands = commands
    single.registered_groups = groups
    single.callback()(_no_options)  # a lone command would otherwise become the app itself (no `ark NAME`)
    return single


def _no_options() -> None:
    """The whole app's callback: none (its help text comes from APP_SETTINGS)."""


def main() -> None:  # pragma: no cover - console entry point
    """Run the app. A command stopped by Ctrl-C leaves at once (its files are closed): the interpreter's own
    shutdown resets the Ctrl-C handler, so a second Ctrl-C during it would kill the process mid-exit."""
    try:
        app_for(sys.argv[1:])()
    except SystemExit as exc:
        if exc.code == EXIT_INTERRUPTED:
            exit_now()
        raise


if __name__ == "__main__":  # pragma: no cover
    main()
