"""The optional compiled kernels asked for from many threads at once (a pipelined build) without numba: every
thread gets None, and so the Arrow and numpy paths, never a half-imported kernel module."""

from __future__ import annotations

import importlib.abc
import sys
import threading
import time

from ark.index import optional_kernel as optional_kernel_module
from ark.index.optional_kernel import optional_kernel


class _NoNumba(importlib.abc.MetaPathFinder):
    """Finds no numba, slowly (a real search of sys.path takes a while), and counts the attempts."""

    def __init__(self) -> None:
        self.attempts = 0

    def find_spec(self, name, path, target=None):
        if name.split(".")[0] != "numba":
            return None
        self.attempts += 1
        time.sleep(0.01)
        raise ModuleNotFoundError("No module named 'numba'", name="numba")


def test_threads_asking_at_once_without_numba_all_get_none(monkeypatch):
    finder = _NoNumba()
    monkeypatch.setattr(optional_kernel_module, "_LOADED", {})
    monkeypatch.setattr(sys, "meta_path", [finder, *sys.meta_path])
    for name in [m for m in sys.modules if m.split(".")[0] == "numba" or m.startswith("ark.index._")]:
        monkeypatch.delitem(sys.modules, name)
    start, answers = threading.Barrier(8), []

    def ask() -> None:
        start.wait()
        answers.append(optional_kernel("_split_kernel"))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == [None] * 8
    assert finder.attempts == 1  # imported once; later askers read the answer kept
    assert optional_kernel("_split_kernel") is None and finder.attempts == 1
