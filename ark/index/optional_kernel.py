"""The optional compiled kernels of :mod:`ark.index` (numba, the ``fast`` extra), each imported once a process.

A pipelined build asks for a kernel from several threads at once. Without numba each import fails, and CPython
3.11 can then hand a thread that asked at the same moment the module another thread has just begun to import again,
before its ``import numba`` line: a module without its functions (an ``AttributeError`` in the build, seen in CI).
One lock around the first import, and the answer kept, close that window. A kernel's one-time preparation (its
stale disk cache dropped, its machine code loaded) runs under the same lock before the module is handed out, so no
caller ever sees a module half imported or half prepared; :func:`loaded_kernel` hands out only such modules and
never imports (a tool call must not stall on ``import numba``).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from types import ModuleType

_LOCK = threading.RLock()  # re-entered by a preparation that asks for another kernel
_LOADED: dict[str, ModuleType | None] = {}
_UNASKED = object()


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
