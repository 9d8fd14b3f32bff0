"""The optional compiled kernels of :mod:`ark.index` (numba, the ``fast`` extra), each imported once a process.

A pipelined build asks for a kernel from several threads at once. Without numba each import fails, and CPython
3.11 can then hand a thread that asked at the same moment the module another thread has just begun to import again,
before its ``import numba`` line: a module without its functions (an ``AttributeError`` in the build, seen in CI).
One lock around the first import, and the answer kept, close that window.

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
from types import ModuleType

_LOCK = threading.Lock()
_LOADED: dict[str, ModuleType | None] = {}
BUILD_NUMBA_VARIABLE = "ARK_BUILD_NUMBA"  # 1: a build loads numba for its kernels; 0: never; unset: if imported


def optional_kernel(name: str) -> ModuleType | None:
    """The module ``ark.index.<name>``, or None when it cannot be imported (numba missing); imported at most once."""
    with _LOCK:
        if name not in _LOADED:
            try:
                _LOADED[name] = importlib.import_module(f"ark.index.{name}")
            except ImportError:
                _LOADED[name] = None
        return _LOADED[name]


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
