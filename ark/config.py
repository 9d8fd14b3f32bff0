"""Where ARK keeps its files: ``ARK_HOME`` (default ``~/.cache/ark``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def ark_home(environ: Mapping[str, str] | None = None) -> Path:
    """The folder for built graphs, indexes, LLM responses and the config file: ``$ARK_HOME`` (read from
    ``environ``, default the process environment) or ``~/.cache/ark``."""
    env = os.environ if environ is None else environ
    return Path(env.get("ARK_HOME") or Path.home() / ".cache" / "ark").expanduser()
