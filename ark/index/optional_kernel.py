"""The optional compiled kernels of :mod:`ark.index` (numba, the ``fast`` extra), each imported once a process.

A pipelined build asks for a kernel from several threads at once. Without numba each import fails, and CPython
3.11 can then hand a thread that asked at the same moment the module another thread has just begun to import again,
before its ``import numba`` line: a module without its functions (an ``AttributeError`` in the build, seen in CI).
One lock around the first import, and the answer kept, close that window.
"""

from __future__ import annotations

import importlib
import threading
from types import ModuleType

_LOCK = threading.Lock()
_LOADED: dict[str, ModuleType | None] = {}


def optional_kernel(name: str) -> ModuleType | None:
    """The module ``ark.index.<name>``, or None when it cannot be imported (numba missing); imported at most once."""
    with _LOCK:
        if name not in _LOADED:
            try:
                _LOADED[name] = importlib.import_module(f"ark.index.{name}")
            except ImportError:
                _LOADED[name] = None
        return _LOADED[name]
