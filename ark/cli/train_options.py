"""The flags every ``ark train`` command of a trained retriever shares (the graph, ``--out``, ``--set``, ``--seed``,
``--threads``, ``--force``, ``--progress``), declared once as ``Annotated`` types.

Flags whose help is the same everywhere are aliases; those whose help names the command's own keys or defaults
(``--out``'s folder, ``--set``'s keys, what ``--seed`` seeds) are the ``*_option(help)`` factories, so each command
keeps its help while the flag's names, type and bounds live here. :func:`set_torch_threads` is the one place a
command sets torch's CPU threads, failing with the extra to install when torch is missing.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from .common import GRAPH_HELP, fail

GraphArgument = Annotated[str, typer.Argument(help=GRAPH_HELP)]
ForceOption = Annotated[bool, typer.Option("--force", help="Retrain even if --out already holds a trained model.")]
ThreadsOption = Annotated[int, typer.Option("--threads", min=1, help="Torch CPU threads.")]


def out_option(help: str) -> Any:
    """``--out/-o``: the model folder (its default and resume behaviour in ``help``)."""
    return typer.Option("--out", "-o", help=help)


def set_option(help: str) -> Any:
    """``--set/-s KEY=VALUE`` (repeatable): a training setting (the keys in ``help``)."""
    return typer.Option("--set", "-s", help=help)


def seed_option(help: str) -> Any:
    """``--seed N`` (N >= 0): what it seeds in ``help``."""
    return typer.Option("--seed", min=0, help=help)


def threads_option(help: str) -> Any:
    """``--threads N`` (N >= 1) with a command's own help (else :data:`ThreadsOption`)."""
    return typer.Option("--threads", min=1, help=help)


def progress_option(help: str) -> Any:
    """``--progress/--no-progress``: what the command shows in ``help``."""
    return typer.Option("--progress/--no-progress", help=help)


def set_torch_threads(threads: int, needs: str) -> None:
    """Use ``threads`` torch CPU threads; exit naming ``needs`` (what to install) when torch is missing."""
    try:
        import torch
    except ImportError:
        fail(needs)
    torch.set_num_threads(threads)
