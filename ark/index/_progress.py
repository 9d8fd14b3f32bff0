"""Progress bars of long index builds and embedding passes (:func:`ark.progress.progress_bar`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ..progress import ProgressSink
from ..progress import progress_bar as _bar

__all__ = ["ProgressSink", "progress_bar"]


@contextmanager
def progress_bar(description: str, total: int | None, enabled: bool,
                 auto_from: int | None = None) -> Iterator[ProgressSink]:
    """A bar when ``enabled``; when not, still one on a terminal for work of at least ``auto_from`` items (what
    takes more than a few seconds: a user waiting at a terminal sees the count and the ETA)."""
    automatic = not enabled and auto_from is not None and total is not None and total >= auto_from
    with _bar(description, total, enabled=True if enabled else (None if automatic else False)) as bar:
        yield bar
