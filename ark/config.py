"""Where ARK keeps its files: ``ARK_HOME`` (default ``~/.cache/ark``)."""

from __future__ import annotations

import os
from pathlib import Path


def ark_home() -> Path:
    """The cache folder for built graphs, indexes, LLM responses and the config file."""
    return Path(os.environ.get("ARK_HOME", Path.home() / ".cache" / "ark")).expanduser()
