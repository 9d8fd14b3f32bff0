"""A minimal progress reporter for long index builds (rich when enabled, silent otherwise)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol


class ProgressSink(Protocol):
    def advance(self, n: int) -> None: ...


class _Silent:
    def advance(self, n: int) -> None:
        pass


class _Rich:
    def __init__(self, progress, task) -> None:
        self._progress = progress
        self._task = task

    def advance(self, n: int) -> None:
        self._progress.advance(self._task, n)


@contextmanager
def progress_bar(description: str, total: int | None, enabled: bool) -> Iterator[ProgressSink]:
    """Yield an object with ``advance(n)``; draws a rich progress bar on stderr when ``enabled``."""
    if not enabled:
        yield _Silent()
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
    with Progress(*columns, console=Console(stderr=True), transient=False) as progress:
        yield _Rich(progress, progress.add_task(description, total=total))
