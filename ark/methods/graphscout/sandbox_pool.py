"""Code sandboxes for GraphScout trajectories: one stateful worker per trajectory at a time, kept warm for the whole
run (or server) and reset between trajectories, all closed at the end.

:meth:`SandboxPool.acquire` hands out an idle :class:`~ark.sandbox.CodeSandbox` (or a new one, its worker started in
the background, so the ~0.35 s start overlaps with the model's first turn); :meth:`SandboxPool.release` resets it
in place (variables, files, processes and modules of the trajectory gone, the worker process kept:
:mod:`ark.sandbox.pristine`) and keeps it for the next trajectory; :meth:`SandboxPool.close` stops every worker and
adds up their CPU time (:attr:`SandboxPool.worker_cpu_s`, outside this process's own accounting; the process-wide
count a run records is :data:`ark.sandbox.usage.SANDBOX_USAGE`). :func:`close_all_pools` closes every pool still
open (a server's, when it stops); it also runs at interpreter exit, so no worker outlives the process unreaped.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
import weakref
from typing import Any

from ark.sandbox import CodeSandbox, SandboxLimits


class SandboxPool:
    """Sandboxes over one Cypher engine with the same limits; safe to use from several threads."""

    def __init__(self, engine: Any, limits: SandboxLimits | None = None, isolation: str = "auto") -> None:
        self.engine = engine
        self.limits = limits or SandboxLimits()
        self.isolation = isolation
        self._idle: list[CodeSandbox] = []
        self._all: list[CodeSandbox] = []
        self._lock = threading.Lock()
        self.created = 0
        self.worker_cpu_s = 0.0  # CPU seconds of the workers closed so far
        _OPEN.add(self)

    def acquire(self, warm: bool = True) -> CodeSandbox:
        """A sandbox for one trajectory (its worker starting in the background when ``warm``)."""
        with self._lock:
            if self._idle:
                sandbox = self._idle.pop()
            else:
                sandbox = CodeSandbox(self.engine, self.limits, isolation=self.isolation)
                self._all.append(sandbox)
                self.created += 1
        if warm and not sandbox.running:
            threading.Thread(target=_start_quietly, args=(sandbox,), daemon=True).start()
        return sandbox

    def release(self, sandbox: CodeSandbox) -> None:
        """Reset ``sandbox`` (nothing of this trajectory survives) and keep it for the next one."""
        sandbox.reset()
        with self._lock:
            if sandbox in self._all and sandbox not in self._idle:
                self._idle.append(sandbox)

    def close(self) -> None:
        """Stop every worker; the pool can still hand out sandboxes afterwards (they start afresh)."""
        with self._lock:
            sandboxes, self._all, self._idle = self._all, [], []
        for sandbox in sandboxes:
            before = sandbox.worker_cpu_s
            sandbox.close()
            self.worker_cpu_s += sandbox.worker_cpu_s - before


_OPEN: weakref.WeakSet[SandboxPool] = weakref.WeakSet()


def close_all_pools() -> int:
    """Close every pool of this process that still has workers (each waited for, its CPU time counted); returns
    how many pools had any."""
    pools = [pool for pool in list(_OPEN) if pool._all]
    for pool in pools:
        pool.close()
    return len(pools)


atexit.register(close_all_pools)


def _start_quietly(sandbox: CodeSandbox) -> None:
    # A worker that cannot start is reported by the first run() instead, as an observation.
    with contextlib.suppress(Exception):
        sandbox.start()


def pool_for(engine: Any, options: Any) -> SandboxPool | None:
    """The sandboxes of a solver with :class:`~ark.methods.graphscout.options.GraphScoutOptions` ``options``
    (``None`` in the retriever-only ablation, ``code_interpreter=false``)."""
    if not options.code_interpreter:
        return None
    box = options.sandbox
    limits = SandboxLimits(timeout_s=box.timeout_s, memory_mb=box.memory_mb, output_chars=box.output_chars,
                           cypher_timeout_s=box.cypher_timeout_s, cypher_max_rows=box.cypher_max_rows)
    return SandboxPool(engine, limits, isolation=box.isolation)
