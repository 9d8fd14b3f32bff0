"""Entry point of the ``ark`` command: assembles the command groups of the sibling modules."""

from __future__ import annotations

import typer

from . import ask_cmd, eval_cmd, graph_cmd, methods_cmd, quiz_cmd, trajectory_cmd

app = typer.Typer(
    name="ark",
    help="ARK: retrieve evidence from text-rich knowledge graphs with language-model agents.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
)

for module in (graph_cmd, ask_cmd, eval_cmd, methods_cmd, quiz_cmd, trajectory_cmd):
    module.register(app)


def main() -> None:  # pragma: no cover - console entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
