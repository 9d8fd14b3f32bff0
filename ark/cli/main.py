"""Entry point of the ``ark`` command: assembles the command groups of the sibling modules."""

from __future__ import annotations

import typer

from ..runtime.interrupts import EXIT_INTERRUPTED, exit_now
from . import ask_cmd, distill_cmd, eval_cmd, graph_cmd, methods_cmd, quiz_cmd, serve_cmd, train_cmd, trajectory_cmd

app = typer.Typer(
    name="ark",
    help="ARK: retrieve evidence from text-rich knowledge graphs with language-model agents.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
)

for module in (graph_cmd, ask_cmd, eval_cmd, methods_cmd, quiz_cmd, trajectory_cmd, serve_cmd, train_cmd, distill_cmd):
    module.register(app)


def main() -> None:  # pragma: no cover - console entry point
    """Run the app. A command stopped by Ctrl-C leaves at once (its files are closed): the interpreter's own
    shutdown resets the Ctrl-C handler, so a second Ctrl-C during it would kill the process mid-exit."""
    try:
        app()
    except SystemExit as exc:
        if exc.code == EXIT_INTERRUPTED:
            exit_now()
        raise


if __name__ == "__main__":  # pragma: no cover
    main()
