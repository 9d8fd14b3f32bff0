"""The optional compiled kernels of :mod:`ark.index` (numba, the ``fast`` extra), each imported once a process.

A pipelined build asks for a kernel from several threads at once. Without numba each import fails, and CPython
3.11 can then hand a thread that asked at the same moment the module another thread has just begun to import again,
before its ``import numba`` line: a module without its functions (an ``AttributeError`` in the build, seen in CI).
One lock around the first import, and the answer kept, close that window. A kernel's one-time preparation (its
stale disk cache dropped, its machine code loaded) runs under the same lock before the module is handed out, so no
caller ever sees a module half imported or half prepared; :func:`loaded_kernel` hands out only such modules and
never imports (a tool call must not stall on ``import numba``).

A build's kernels (:func:`build_kernel`) are used only where numba is already imported: importing it and loading
the cached machine code of a build's three kernels costs ~150 MB of resident memory (the interpreter with numpy,
Arrow and scipy is ~80 MB), about half the floor of a 1M-document build, to save ~18% of its CPU time (a serial
build at 1M); a process that has searched an index has paid for numba already. ``$ARK_BUILD_NUMBA`` (``1``:
always, ``0``: never) sets it. The files written are the same either way.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from collections.abc import Callable
from types import ModuleType

_LOCK = threading.RLock()  # re-entered by a preparation that asks for another kernel
_LOADED: dict[str, ModuleType | None] = {}
_UNASKED = object()
BUILD_NUMBA_VARIABLE = "ARK_BUILD_NUMBA"  # 1: a build loads numba for its kernels; 0: never; unset: if imported


def optional_kernel(name: str, prepare: Callable[[ModuleType], object] | None = None) -> ModuleType | None:
    """The module ``ark.index.<name>``, or None when it cannot be imported (numba missing); imported at most once,
    and ``prepare``\\ d (called with the module, once, by the first caller) before any caller gets it."""
    kept = _LOADED.get(name, _UNASKED)  # one read, no lock: a name is kept only once imported and prepared
    if kept is not _UNASKED:
        return kept  # type: ignore[return-value]  # a module or None
    with _LOCK:
        if name not in _LOADED:
            try:
                module: ModuleType | None = importlib.import_module(f"ark.index.{name}")
            except ImportError:
                module = None
            if module is not None and prepare is not None:
                prepare(module)
            _LOADED[name] = module
        return _LOADED[name]


def required_kernel(name: str, prepare: Callable[[ModuleType], object] | None = None) -> ModuleType:
    """:func:`optional_kernel` for a caller reached only where numba is installed (a large index's search, after
    :func:`ark.index.bm25_prune.available`): ``ImportError`` when the module cannot be imported."""
    kernel = optional_kernel(name, prepare)
    if kernel is None:
        raise ImportError(f"ark.index.{name} needs numba (the fast extra)")
    return kernel


def loaded_kernel(name: str) -> ModuleType | None:
    """The module ``ark.index.<name>`` if :func:`optional_kernel` has imported and prepared it already, else None;
    never imports."""
    return _LOADED.get(name)


def build_kernels_enabled() -> bool:
    """Whether a build uses its compiled kernels now: ``$ARK_BUILD_NUMBA`` when set (``1`` or ``0``), else
    whether numba is already imported in this process (a build alone does not load it: ~150 MB resident)."""
    setting = os.environ.get(BUILD_NUMBA_VARIABLE, "").strip()
    if setting not in ("", "0", "1"):
        raise ValueError(f"{BUILD_NUMBA_VARIABLE} must be 1 or 0, got {setting!r}")
    return setting == "1" if setting else "numba" in sys.modules


def build_kernel(name: str) -> ModuleType | None:
    """A build step's kernel :func:`optional_kernel` ``(name)`` when :func:`build_kernels_enabled`, else None
    (the Arrow, numpy and scipy paths: the same output)."""
    return optional_kernel(name) if build_kernels_enabled() else None
