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
from typing import Any

Counts = dict[str, Any]
COUNT_KEYS = ("workers_started", "resets_in_place", "workers_ended", "workers_killed")
COUNTED_BY = "kernel: the worker's process tree in /proc as it ends"
_TICK_S = 1.0 / os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 0.01


class SandboxUsage:
    """Sandbox workers started, reset, ended and killed in this process, and their CPU seconds."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counts = {**dict.fromkeys(COUNT_KEYS, 0), "worker_cpu_s": 0.0}

    def add(self, key: str, count: int = 1, cpu_s: float = 0.0) -> None:
        """Count ``count`` events ``key`` (one of :data:`COUNT_KEYS`) and ``cpu_s`` CPU seconds of ended workers."""
        if key not in COUNT_KEYS:
            raise ValueError(f"unknown sandbox count {key!r}; valid: {', '.join(COUNT_KEYS)}")
        with self._lock:
            self._counts[key] += int(count)
            self._counts["worker_cpu_s"] += max(float(cpu_s), 0.0)

    def snapshot(self) -> Counts:
        """The counts now (a copy)."""
        with self._lock:
            return dict(self._counts)

    def since(self, before: Counts) -> Counts:
        """What happened after ``before`` (a :meth:`snapshot`); empty when no worker started, reset or ended."""
        now = self.snapshot()
        out: Counts = {key: now[key] - int(before.get(key, 0)) for key in COUNT_KEYS}
        if not any(out.values()):
            return {}
        out["worker_cpu_s"] = round(now["worker_cpu_s"] - float(before.get("worker_cpu_s", 0.0)), 3)
        out["counted_by"] = COUNTED_BY
        return out


def add_usage(first: Counts, second: Counts) -> Counts:
    """The sum of two :meth:`SandboxUsage.since` counts (a resumed run's earlier attempts and this one)."""
    if not first or not second:
        return dict(first or second)
    out: Counts = {key: int(first.get(key, 0)) + int(second.get(key, 0)) for key in COUNT_KEYS}
    out["worker_cpu_s"] = round(float(first.get("worker_cpu_s", 0.0)) + float(second.get("worker_cpu_s", 0.0)), 3)
    out["counted_by"] = COUNTED_BY
    return out


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
