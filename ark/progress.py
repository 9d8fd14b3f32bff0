"""Progress bars for long work (a build, an import, an index build, an embedding pass): rich on a terminal,
silent elsewhere.

Every bar shows its description, the bar, done/total counts, the percentage, the time spent and an ETA. Bars go to
the console set by :func:`use_console` (the ``ark`` command sets its stderr console, so the bar's text passes the
same terminal escape as every other line), else a new stderr console. ``enabled=None`` (the default) draws a bar
only when that console is a terminal, so logs, pipes and CI see no bar. Off a terminal nothing of rich's live
display is imported.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

_CONSOLE: list[Any] = []  # the console bars draw on (at most one), set by use_console


class ProgressSink(Protocol):
    """What a long loop reports its progress to."""

    def advance(self, n: int) -> None: ...


class _Silent:
    def advance(self, n: int) -> None:
        pass


class _Rich:
    def __init__(self, progress: Any, task: Any) -> None:
        self._progress = progress
        self._task = task

    def advance(self, n: int) -> None:
        self._progress.advance(self._task, n)


def use_console(console: Any | None) -> None:
    """Draw bars on ``console`` from now on (None: a new stderr console per bar)."""
    _CONSOLE[:] = [console] if console is not None else []


@contextmanager
def console_for_bars(console: Any) -> Iterator[None]:
    """Draw bars on ``console`` inside the block (tests give one with ``force_terminal=True``)."""
    before = list(_CONSOLE)
    use_console(console)
    try:
        yield
    finally:
        _CONSOLE[:] = before


def _console() -> Any:
    if _CONSOLE:
        return _CONSOLE[0]
    from rich.console import Console

    return Console(stderr=True)


@contextmanager
def progress_bar(description: str, total: int | None, enabled: bool | None = None) -> Iterator[ProgressSink]:
    """Yield an object with ``advance(n)``; draws a bar of ``total`` steps when ``enabled`` (None: on a
    terminal). The bar is left on screen, at its final count, when the block ends."""
    if enabled is False:
        yield _Silent()
        return
    console = _console()
    if enabled is None and not (console.is_terminal and not getattr(console, "is_dumb_terminal", False)):
        yield _Silent()
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TaskProgressColumn(),
               TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn()]
    from rich.errors import LiveError

    progress = Progress(*columns, console=console, transient=False)
    try:
        progress.start()
    except LiveError:  # rich before 14 draws one live display at a time: a spinner already holds the terminal
        yield _Silent()
        return
    try:
        yield _Rich(progress, progress.add_task(description, total=total))
    finally:
        progress.stop()
