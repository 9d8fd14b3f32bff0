"""matplotlib for PNG charts, headless (the ``plots`` extra), with one clear error when it is missing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ark.errors import ArkError


class ChartsUnavailable(RuntimeError, ArkError):
    """matplotlib is not installed."""


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the non-interactive Agg backend; :class:`ChartsUnavailable` without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ChartsUnavailable(
            "charts need matplotlib, which is not installed: pip install 'ark-kg[plots]' (or matplotlib)"
        ) from None
    return plt


def save_png(fig: Any, path: str | Path, dpi: int = 120) -> Path:
    """Write ``fig`` to ``path`` as PNG whole (a temporary file renamed into place) and close it."""
    plt = pyplot()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    tmp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(tmp, dpi=dpi)
    plt.close(fig)
    tmp.replace(path)
    return path
