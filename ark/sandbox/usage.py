"""What the code sandboxes of this process cost, counted by the kernel, for run records.

A sandbox worker is another process tree (bubblewrap, the worker, what the code started), so its CPU time is outside
this process's own accounting (``time.process_time``, ``RUSAGE_SELF``). Every :class:`~ark.sandbox.CodeSandbox` adds
to one process-wide, thread-safe :data:`SANDBOX_USAGE`: workers started, reset in place, ended and killed, and the CPU
seconds of each worker's tree when it ends, read from ``/proc`` just before the worker is asked to leave or killed:
every live process of the tree (bubblewrap, the sandbox's init, the worker, what the code left running) with what each
had reaped (the code's finished processes), and at least what ``wait4`` counts as the outermost process is reaped.
(bubblewrap's outer process never reaps the worker, so ``wait4`` alone misses it.) A worker that crashed on its own
has no tree left to read: it counts what ``wait4`` gives. A run takes a :meth:`~SandboxUsage.snapshot` before it
starts and records :meth:`~SandboxUsage.since` it when it ends (``sandbox_usage`` in the run's settings file).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace

COUNT_KEYS = ("workers_started", "resets_in_place", "workers_ended", "workers_killed")
COUNTED_BY = "kernel: the worker's process tree in /proc as it ends"
_TICK_S = 1.0 / os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 0.01

UsageJSON = dict[str, object]  # the counts and ``counted_by`` as a run's config.json and summary.json hold them


@dataclass(frozen=True)
class SandboxCounts:
    """Sandbox workers started, reset in place, ended and killed, and the CPU seconds of the ended ones' trees."""

    workers_started: int
    resets_in_place: int
    workers_ended: int
    workers_killed: int
    worker_cpu_s: float

    def events(self) -> bool:
        """Whether a worker started, was reset, ended or was killed."""
        return any((self.workers_started, self.resets_in_place, self.workers_ended, self.workers_killed))

    def to_json(self) -> UsageJSON:
        """The record as written to a run's files: the counts, the CPU seconds and how they were counted."""
        return {"workers_started": self.workers_started, "resets_in_place": self.resets_in_place,
                "workers_ended": self.workers_ended, "workers_killed": self.workers_killed,
                "worker_cpu_s": self.worker_cpu_s, "counted_by": COUNTED_BY}

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> SandboxCounts:
        """The counts of :meth:`to_json`'s form (a key missing counts 0)."""
        def number(key: str) -> int | float | str:
            value = data.get(key, 0)
            if not isinstance(value, int | float | str):
                raise TypeError(f"sandbox usage {key!r} is not a number: {value!r}")
            return value

        started, resets, ended, killed = (int(number(key)) for key in COUNT_KEYS)
        return cls(started, resets, ended, killed, float(number("worker_cpu_s")))


NO_USAGE = SandboxCounts(0, 0, 0, 0, 0.0)


class SandboxUsage:
    """Sandbox workers started, reset, ended and killed in this process, and their CPU seconds."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts = NO_USAGE

    def add(self, key: str, count: int = 1, cpu_s: float = 0.0) -> None:
        """Count ``count`` events ``key`` (one of :data:`COUNT_KEYS`) and ``cpu_s`` CPU seconds of ended workers."""
        if key not in COUNT_KEYS:
            raise ValueError(f"unknown sandbox count {key!r}; valid: {', '.join(COUNT_KEYS)}")
        with self._lock:
            counts = self._counts
            self._counts = replace(counts, **{key: getattr(counts, key) + int(count)},
                                   worker_cpu_s=counts.worker_cpu_s + max(float(cpu_s), 0.0))

    def snapshot(self) -> SandboxCounts:
        """The counts now."""
        with self._lock:
            return self._counts

    def since(self, before: SandboxCounts | None = None) -> SandboxCounts | None:
        """What happened after ``before`` (a :meth:`snapshot`; None: since the process started), its CPU seconds
        rounded to the millisecond; None when no worker started, reset or ended."""
        now, before = self.snapshot(), before or NO_USAGE
        out = SandboxCounts(now.workers_started - before.workers_started, now.resets_in_place - before.resets_in_place,
                            now.workers_ended - before.workers_ended, now.workers_killed - before.workers_killed,
                            round(now.worker_cpu_s - before.worker_cpu_s, 3))
        return out if out.events() else None


def add_usage(first: Mapping[str, object], second: Mapping[str, object]) -> UsageJSON:
    """The sum of two recorded usages (:meth:`SandboxCounts.to_json`: a resumed run's earlier attempts and this
    one), in the same form; one of them when the other is empty."""
    if not first or not second:
        return dict(first or second)
    a, b = SandboxCounts.from_json(first), SandboxCounts.from_json(second)
    return SandboxCounts(a.workers_started + b.workers_started, a.resets_in_place + b.resets_in_place,
                         a.workers_ended + b.workers_ended, a.workers_killed + b.workers_killed,
                         round(a.worker_cpu_s + b.worker_cpu_s, 3)).to_json()


SANDBOX_USAGE = SandboxUsage()


def exited(process: subprocess.Popen) -> bool:
    """Whether ``process`` has ended, without reaping it (so :func:`reap` still gets its resource usage)."""
    if process.returncode is not None:
        return True
    try:
        return os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:  # reaped elsewhere
        return True


def tree_cpu_s(pid: int) -> float:
    """CPU seconds of the live process ``pid`` and its descendants (each one's own and what it reaped), from /proc;
    0.0 for what cannot be read."""
    total, todo, seen = 0.0, [pid], set()
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        with contextlib.suppress(OSError, ValueError, IndexError):
            with open(f"/proc/{current}/stat", encoding="ascii", errors="replace") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            total += sum(int(value) for value in fields[11:15]) * _TICK_S  # utime stime cutime cstime
            for task in os.listdir(f"/proc/{current}/task"):
                with contextlib.suppress(OSError), open(f"/proc/{current}/task/{task}/children",
                                                        encoding="ascii") as handle:
                    todo.extend(int(child) for child in handle.read().split())
    return total


def reap(process: subprocess.Popen, timeout_s: float) -> float | None:
    """Wait (at most ``timeout_s``) for the ended ``process`` and return its tree's CPU seconds from ``wait4``;
    None when it was reaped elsewhere or did not end in time. Sets ``process.returncode`` as ``wait`` would."""
    if process.returncode is not None:
        return None
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        except ChildProcessError:
            return None
        if pid == process.pid:
            process.returncode = os.waitstatus_to_exitcode(status)
            return usage.ru_utime + usage.ru_stime
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.002)
