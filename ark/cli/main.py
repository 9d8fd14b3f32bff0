"""Entry point of the ``ark`` command: assembles the command groups of the sibling modules."""

from __future__ import annotations

import copy
import functools
import importlib
import sys
from typing import Any

import typer
import typer.main
from typer.models import CommandInfo, TyperInfo

from ..runtime.interrupts import EXIT_INTERRUPTED, exit_now
from . import lazy_rich
from .common import CommandProcess

APP_SETTINGS: dict[str, Any] = {
    "name": "ark",
    "help": "ARK: retrieve evidence from text-rich knowledge graphs with language-model agents.",
    "no_args_is_help": True,
    "pretty_exceptions_show_locals": False,
    "add_completion": False,
}

# The modules of ``ark.cli`` that register commands, in the order of the whole app, with the names of the commands
# and groups each registers (tests/cli/test_startup.py checks the names against what the modules register). A
# command line naming one of them imports only that module: the others' imports (rich tables, option models, ...)
# are not paid for by a command that does not use them.
COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "graph_cmd": ("graph",),
    "ask_cmd": ("ask",),
    "eval_cmd": ("retrieve", "eval"),
    "experiment_cmd": ("experiment",),
    "methods_cmd": ("methods",),
    "quiz_cmd": ("quiz",),
    "trajectory_cmd": ("trajectory",),
    "serve_cmd": ("mcp", "serve"),
    "train_cmd": ("train",),
    "distill_cmd": ("distill",),
}


@functools.cache
def registrations(module_name: str) -> tuple[list[CommandInfo], list[TyperInfo]]:
    """The commands and groups that module ``ark.cli.<module_name>`` registers (its ``register`` runs once per
    process: registering twice would add a group's subcommands twice)."""
    scratch = typer.Typer()
    importlib.import_module(f"{__package__}.{module_name}").register(scratch)
    return scratch.registered_commands, scratch.registered_groups


def whole_app() -> typer.Typer:
    """The ``ark`` app with every command."""
    whole = typer.Typer(**APP_SETTINGS)
    for module_name in COMMAND_MODULES:
        commands, groups = registrations(module_name)
        whole.registered_commands.extend(commands)
        whole.registered_groups.extend(groups)
    return whole


@functools.cache
def _the_whole_app() -> typer.Typer:
    return whole_app()


def __getattr__(name: str) -> Any:
    if name == "app":  # built on first use: ``ark NAME ...`` never builds it (see app_for)
        return _the_whole_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def help_app() -> typer.Typer:
    """The whole app as its own help shows it: every command and group with its name, help text and options of its
    listing, none of their parameters. typer converts every command's signature before printing the top-level help
    (~140 M instructions, most of ``ark --help``); its listing reads none of them. Used only where the top-level help
    (or its usage error) is all the command line can lead to: see :func:`app_for`."""
    lite = typer.Typer(**APP_SETTINGS)
    whole = _the_whole_app()
    lite.registered_commands = [_listing_only(command) for command in whole.registered_commands]
    lite.registered_groups = [_group_listing_only(group) for group in whole.registered_groups]
    return lite


def _listing_only(command: CommandInfo) -> CommandInfo:
    real = command.callback

    def stand_in() -> None:  # pragma: no cover - never invoked: the help is printed and the app exits
        raise RuntimeError("the help app runs no command")

    stand_in.__name__, stand_in.__doc__ = real.__name__, real.__doc__  # type: ignore[union-attr]
    listed = copy.copy(command)
    listed.callback = stand_in
    return listed


def _group_listing_only(group: TyperInfo) -> TyperInfo:
    real = group.typer_instance
    stand_in = typer.Typer()
    stand_in.info = real.info  # type: ignore[union-attr]
    stand_in.registered_callback = real.registered_callback  # type: ignore[union-attr]
    listed = copy.copy(group)
    listed.typer_instance = stand_in
    return listed


def app_for(argv: list[str]) -> typer.Typer:
    """The app to run ``ark argv``: when ``argv`` starts with a command's name, an app holding only that command
    (or group), which parses and reports exactly as the whole one does for it; otherwise (``--help``, no or an
    unknown command) the whole app. Only the module of that command is imported, and typer, which turns every
    registered command into a click command before parsing (reading each signature), converts just that one. No
    arguments, or ``--help`` first, can only print the top-level help (or a usage error): :func:`help_app`."""
    if not argv or argv[0] == "--help":
        return help_app()
    if argv[0].startswith("-"):
        return _the_whole_app()
    module_name = next((m for m, names in COMMAND_MODULES.items() if argv[0] in names), None)
    if module_name is None:
        return _the_whole_app()
    commands, groups = registrations(module_name)
    single = typer.Typer(**APP_SETTINGS)
    single.registered_commands = [c for c in commands if _command_name(c) == argv[0]]
    single.registered_groups = [g for g in groups if g.name == argv[0]]
    single.callback()(_no_options)  # a lone command would otherwise become the app itself (no `ark NAME`)
    return single


def _command_name(command: CommandInfo) -> str:
    return command.name or typer.main.get_command_name(command.callback.__name__)  # type: ignore[union-attr]


def _no_options() -> None:
    """The whole app's callback: none (its help text comes from APP_SETTINGS)."""


def main() -> None:  # pragma: no cover - console entry point
    """Run the app. A command stopped by Ctrl-C leaves at once (its files are closed): the interpreter's own
    shutdown resets the Ctrl-C handler, so a second Ctrl-C during it would kill the process mid-exit."""
    lazy_rich.install()  # help and usage errors without markdown-it and pygments (see the module)
    CommandProcess.is_command = True
    try:
        app_for(sys.argv[1:])()
    except SystemExit as exc:
        if exc.code == EXIT_INTERRUPTED:
            exit_now()
        raise


if __name__ == "__main__":  # pragma: no cover
    main()
