"""Ctrl-C during a run: say once that the run can be resumed, stop cleanly, and never print asyncio's noise.

:func:`run_interruptibly` runs a coroutine like :func:`asyncio.run`, with its own SIGINT handling (Unix, main
thread): the first Ctrl-C prints :data:`INTERRUPTED` at once and cancels the run, whose ``finally`` blocks close
files and connections before :class:`KeyboardInterrupt` is raised; a second Ctrl-C during that clean-up ends the
process at once with exit code 130 and no traceback. Stopping at once is safe because runs write whole, fsynced
lines (see :mod:`ark.storage.jsonl`): a rerun resumes from what is on disk.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Coroutine
from typing import TypeVar

T = TypeVar("T")

INTERRUPTED = "interrupted — rerun the same command to resume"
EXIT_INTERRUPTED = 130

_announced = False


def announce_interrupt(printer: Callable[[], None] | None = None) -> None:
    """Print the interrupted line, once per process (``printer`` prints it; default: plain stderr)."""
    global _announced
    if _announced:
        return
    _announced = True
    if printer is not None:
        printer()
    else:
        print(INTERRUPTED, file=sys.stderr, flush=True)


def reset_announcement() -> None:
    """Forget that the line was printed (for a process that runs several commands, such as a test session)."""
    global _announced
    _announced = False


def exit_now() -> None:
    """End the process at once (a second Ctrl-C): no clean-up, no traceback."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # exiting anyway
            stream.flush()
    os._exit(EXIT_INTERRUPTED)


def exit_on_next_interrupt() -> None:
    """From now on a Ctrl-C ends the process at once and quietly (a command that is already stopping)."""
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "SIGINT"):
        signal.signal(signal.SIGINT, lambda signum, frame: exit_now())


def run_interruptibly(main: Coroutine[object, None, T]) -> T:
    """:func:`asyncio.run` with the Ctrl-C behaviour of the module doc."""
    import asyncio  # here, not at the top: every command imports this module, few run a loop

    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGINT"):
        return asyncio.run(main)
    with asyncio.Runner() as runner:
        loop = runner.get_loop()
        task = loop.create_task(main)
        interrupted = False

        def on_interrupt() -> None:
            nonlocal interrupted
            if interrupted:
                exit_now()
            interrupted = True
            announce_interrupt()
            task.cancel()

        try:
            loop.add_signal_handler(signal.SIGINT, on_interrupt)
        except (NotImplementedError, RuntimeError, ValueError):  # pragma: no cover - no signal support here
            return loop.run_until_complete(task)
        try:
            return loop.run_until_complete(task)
        except asyncio.CancelledError:
            if interrupted:
                raise KeyboardInterrupt from None
            raise
        # The Runner's close (cancelling what is left) runs with the handler still installed: a second Ctrl-C
        # there exits at once. Closing the loop removes the handler.
