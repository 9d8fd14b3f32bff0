"""matplotlib for PNG charts, headless (the ``plots`` extra), with one clear error when it is missing."""

from __future__ import annotations

from typing import Any


class ChartsUnavailable(RuntimeError):
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
