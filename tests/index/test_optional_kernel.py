"""The optional compiled kernels asked for from many threads at once (a pipelined build) without numba: every
thread gets None, and so the Arrow and numpy paths, never a half-imported kernel module; and a build loads numba
only where the process has it already (or is told to)."""

from __future__ import annotations

import importlib.abc
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ark.index import optional_kernel as optional_kernel_module
from ark.index.optional_kernel import (
    BUILD_NUMBA_VARIABLE,
    build_kernel,
    build_kernels_enabled,
    loaded_kernel,
    optional_kernel,
    required_kernel,
)


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


_BUILD = """
import hashlib, pathlib, sys, tempfile
from ark.index import BM25Index
docs = [f"doc {i} alpha beta{i % 7} longerwordnumber{i % 3} the of" for i in range(300)]
out = pathlib.Path(tempfile.mkdtemp()) / "index"
BM25Index.build(docs, chunk_size=40).save(out)
digest = hashlib.sha256(b"".join(p.name.encode() + p.read_bytes() for p in sorted(out.iterdir()))).hexdigest()
print("numba" in sys.modules, digest)
"""


@pytest.mark.parametrize("setting", ["", "1"])
def test_a_build_alone_does_not_load_numba_unless_asked_and_writes_the_same_files(setting, tmp_path):
    """numba and a build's kernels are ~150 MB of resident memory: a process that has not imported numba builds
    without it (unless ``ARK_BUILD_NUMBA=1``), into the same files."""
    if setting:
        pytest.importorskip("numba")
    env = {**os.environ, BUILD_NUMBA_VARIABLE: setting, "TMPDIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", _BUILD], env=env, capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr
    loaded, digest = done.stdout.split()
    assert loaded == ("True" if setting else "False")
    if setting:  # the same files as the build without numba
        plain = subprocess.run([sys.executable, "-c", _BUILD], env={**env, BUILD_NUMBA_VARIABLE: ""},
                               capture_output=True, text=True, timeout=300, cwd=Path(__file__).resolve().parents[2])
        assert plain.stdout.split() == ["False", digest]


def test_a_process_with_numba_imported_builds_with_the_kernels(monkeypatch):
    monkeypatch.delenv(BUILD_NUMBA_VARIABLE, raising=False)
    monkeypatch.setitem(sys.modules, "numba", sys.modules.get("numba", object()))
    assert build_kernels_enabled()
    monkeypatch.setenv(BUILD_NUMBA_VARIABLE, "0")
    assert not build_kernels_enabled() and build_kernel("_split_kernel") is None
    monkeypatch.setenv(BUILD_NUMBA_VARIABLE, "yes")
    with pytest.raises(ValueError, match="ARK_BUILD_NUMBA must be 1 or 0"):
        build_kernels_enabled()


def test_a_kernel_is_prepared_once_and_handed_out_only_prepared(monkeypatch):
    """Threads asking at once for a kernel with a slow preparation (its machine code loaded) all get the module,
    each only after the one preparation has finished; :func:`loaded_kernel` (a tool call's read, which never
    imports) says None until then."""
    monkeypatch.setattr(optional_kernel_module, "_LOADED", {})
    prepared, seen_during = [], []

    def prepare(module) -> None:
        seen_during.append(loaded_kernel("exact"))
        time.sleep(0.05)
        prepared.append(module)

    assert loaded_kernel("exact") is None
    start, answers = threading.Barrier(8), []

    def ask() -> None:
        start.wait()
        module = optional_kernel("exact", prepare)
        answers.append((module, len(prepared)))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    import ark.index.exact as module

    assert answers == [(module, 1)] * 8 and prepared == [module] and seen_during == [None]
    assert loaded_kernel("exact") is module


def test_a_required_kernel_without_numba_is_an_import_error_and_none_is_loaded(monkeypatch):
    """The large index's kernels (asked for only where numba was found) fail loudly, not as None; a tool call's
    optional snippet search stays on the Python path."""
    monkeypatch.setattr(optional_kernel_module, "_LOADED", {})
    monkeypatch.setattr(sys, "meta_path", [_NoNumba(), *sys.meta_path])
    for name in [m for m in sys.modules if m.split(".")[0] == "numba" or m.startswith("ark.index._")]:
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(ImportError, match="needs numba"):
        required_kernel("_seed_kernel")
    assert optional_kernel("_snippet_kernel", lambda kernel: kernel.warm_up()) is None
    assert loaded_kernel("_snippet_kernel") is None
