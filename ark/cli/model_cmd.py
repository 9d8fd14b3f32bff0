"""``ark model import PATH.gguf``: convert a GGUF model file once to a saved Hugging Face folder (cached under
``$ARK_HOME/models`` by the file's digest) for ``--model hf:FOLDER`` and ``ark distill train --base FOLDER``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .common import console, fail, guarded


def import_command(
    path: Annotated[Path, typer.Argument(help="A GGUF model file (quantized weights are dequantized to floats).")],
) -> None:
    """Convert PATH (a GGUF file) once to a saved Hugging Face folder and print that folder; a second import of the
    same file (by digest) prints the cached folder at once."""
    import importlib.util

    from ..config import ark_home
    from ..llm.gguf_import import GGUFImportError, import_gguf

    for module, install in (("transformers", "pip install 'ark-kg[train]'"), ("gguf", "pip install gguf")):
        if importlib.util.find_spec(module) is None:
            fail(f"ark model import needs the {module!r} package: {install}")
    try:
        folder, converted = import_gguf(path, ark_home())
    except GGUFImportError as exc:
        fail(str(exc))
    console.print("converted" if converted else "already converted", style="dim", end=" ")
    console.print(str(folder), markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    """``ark model`` and its one command, ``import``."""
    group = typer.Typer(help="Local models: convert a GGUF file to a Hugging Face folder ARK loads.",
                        no_args_is_help=True)
    group.command("import")(guarded(import_command))
    app.add_typer(group, name="model")
