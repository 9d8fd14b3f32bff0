"""Putting a warm sandbox worker back into the state it was ready in, between two questions, without a new process.

The worker takes a :class:`Snapshot` once it is ready (database open, privileges dropped, limits set) and before any
model code ran. :func:`restore` then undoes what one question's code can leave behind in the interpreter:

- the namespace (the caller gives the code a fresh one);
- modules it made (from files it wrote, or built in memory) dropped from ``sys.modules``, and names it bound,
  rebound or deleted in any module that was loaded at the snapshot, ``builtins`` included (each module's
  ``__dict__`` put back as it was). A module installed with Python (standard library, site-packages) that a
  question imported first stays loaded: an extension module cannot be loaded twice in one process (numpy refuses),
  and the next question's ``import`` binds it in its own fresh namespace;
- ``sys.path`` and the import hooks, ``os.environ``, the working directory, signal handlers, trace and profile
  functions, the recursion limit, the garbage collector's switch;
- files in its private temporary folder, and processes it started (killed by the caller).

What cannot be put back is checked instead, and then the worker declines (:func:`restore` returns the reason) and
the parent starts a fresh process, as it did for every question before: a thread the code started (it may still be
running its code), a changed resource limit, a worker that used over half of its CPU-time limit (the limit is per
process, and would otherwise end a later question), a different process id (the code forked and its child answers).
Objects mutated in place (a list held by a standard module, a class attribute) are outside what a snapshot of
bindings sees; the code of one trajectory is not an adversary of the next, and the process limits still hold.
"""

from __future__ import annotations

import gc
import os
import resource
import shutil
import signal
import sys
import threading
from dataclasses import dataclass, field
from typing import Any

_LIMITS = tuple(getattr(resource, name) for name in dir(resource) if name.startswith("RLIMIT_"))
_SIGNALS = tuple(s for s in signal.Signals if s not in (signal.SIGKILL, signal.SIGSTOP))


@dataclass
class Snapshot:
    """The interpreter's state when the worker was ready (see the module doc)."""

    pid: int
    cwd: str
    tmp: str
    keep_files: frozenset[str]
    modules: dict[str, Any]
    module_dicts: dict[str, dict[str, Any]]
    path: list[str]
    meta_path: list[Any]
    path_hooks: list[Any]
    environ: dict[str, str]
    handlers: dict[int, Any]
    limits: dict[int, tuple[int, int]]
    recursion_limit: int
    gc_enabled: bool
    installed: tuple[str, ...]
    cpu_limit_s: float
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def take(cls, tmp: str, keep_files: set[str], cpu_limit_s: float) -> Snapshot:
        modules = dict(sys.modules)
        return cls(
            pid=os.getpid(), cwd=os.getcwd(), tmp=tmp, keep_files=frozenset(keep_files), modules=modules,
            module_dicts={name: dict(vars(module)) for name, module in modules.items() if _has_dict(module)},
            path=list(sys.path), meta_path=list(sys.meta_path), path_hooks=list(sys.path_hooks),
            environ=dict(os.environ), handlers={int(s): signal.getsignal(s) for s in _SIGNALS},
            limits={which: resource.getrlimit(which) for which in _LIMITS},
            recursion_limit=sys.getrecursionlimit(), gc_enabled=gc.isenabled(), installed=_installed_roots(),
            cpu_limit_s=cpu_limit_s)


def _has_dict(module: Any) -> bool:
    return isinstance(getattr(module, "__dict__", None), dict)


def _installed_roots() -> tuple[str, ...]:
    """Folders of installed code: the interpreter's prefixes and the import path's folders at the snapshot (the
    sandbox's temporary folder and working directory are never on it)."""
    roots = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, *sys.path) if p}
    return tuple(sorted(root.rstrip(os.sep) + os.sep for root in roots if root not in ("/", "")))


def _made_by_code(module: Any, installed: tuple[str, ...]) -> bool:
    """Whether a module loaded after the snapshot came from the code (a file outside the installed folders, or no
    file at all) rather than from an installed package."""
    origin = getattr(module, "__file__", None)
    if not isinstance(origin, str):
        spec = getattr(module, "__spec__", None)
        return not (spec is not None and spec.origin in ("built-in", "frozen"))
    return not os.path.realpath(origin).startswith(installed)


def refusal(snapshot: Snapshot) -> str | None:
    """Why this worker cannot be reset in place (the parent then starts a fresh one), or None."""
    if os.getpid() != snapshot.pid:
        return "another process"
    if threading.active_count() > 1:
        return "the code started threads"
    if any(resource.getrlimit(which) != value for which, value in snapshot.limits.items()):
        return "the code changed a resource limit"
    usage = resource.getrusage(resource.RUSAGE_SELF)
    if usage.ru_utime + usage.ru_stime > snapshot.cpu_limit_s / 2:
        return "over half of the CPU-time limit used"
    return None


def restore(snapshot: Snapshot) -> str | None:
    """Put the interpreter back as :class:`Snapshot` saw it; the reason when it cannot be (nothing changed then)."""
    reason = refusal(snapshot)
    if reason is not None:
        return reason
    for name in [name for name in sys.modules if name not in snapshot.modules]:
        if _made_by_code(sys.modules[name], snapshot.installed):
            del sys.modules[name]
    sys.modules.update(snapshot.modules)
    for name, saved in snapshot.module_dicts.items():
        current = vars(snapshot.modules[name])
        if current.keys() != saved.keys() or any(current[key] is not value for key, value in saved.items()):
            current.clear()
            current.update(saved)
    sys.path[:], sys.meta_path[:], sys.path_hooks[:] = snapshot.path, snapshot.meta_path, snapshot.path_hooks
    sys.path_importer_cache.clear()
    if dict(os.environ) != snapshot.environ:
        os.environ.clear()
        os.environ.update(snapshot.environ)
    for number, handler in snapshot.handlers.items():
        if signal.getsignal(number) is not handler and handler is not None:
            signal.signal(number, handler)
    sys.settrace(None)
    sys.setprofile(None)
    sys.setrecursionlimit(snapshot.recursion_limit)
    (gc.enable if snapshot.gc_enabled else gc.disable)()
    os.chdir(snapshot.cwd)
    _empty_folder(snapshot.tmp, snapshot.keep_files)
    gc.collect()
    return None


def _empty_folder(folder: str, keep: frozenset[str]) -> None:
    """Remove everything in ``folder`` but the names in ``keep`` (hidden files and folders included)."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if entry.name in keep:
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)
        except OSError:
            pass
