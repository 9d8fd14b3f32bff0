"""``ark`` commands in-process for tests: a typer app with the given commands, invoked through CliRunner."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer
from typer.testing import CliRunner


def cli_invoker(*registers: Callable[[typer.Typer], Any]) -> Callable[..., Any]:
    """``invoke(*args)`` running the commands each ``register(app)`` adds; the result's ``text`` is its output with
    whitespace collapsed (rich wraps long lines: compare words, not layout)."""
    app = typer.Typer()

    @app.command("noop")
    def noop() -> None:  # a second command keeps a single registered command a subcommand
        pass

    for register in registers:
        register(app)
    runner = CliRunner()

    def invoke(*args: Any) -> Any:
        result = runner.invoke(app, [str(a) for a in args])
        result.text = " ".join(result.output.split())
        return result

    return invoke
