"""ark.storage.locks: one writer per output; a second process is refused, a dead holder never blocks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ark.storage.locks import OutputLocked, lock_path, output_lock

pytest.importorskip("fcntl")
REPO = Path(__file__).resolve().parents[2]


def hold_in_child(output: Path, folder: bool = False) -> subprocess.Popen:
    script = (f"import sys, time; from ark.storage.locks import output_lock\n"
              f"with output_lock({str(output)!r}, folder={folder}):\n"
              f"    print('held', flush=True); time.sleep(60)\n")
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(REPO)})
    assert child.stdout.readline().strip() == "held"
    return child


def test_a_second_process_is_refused_naming_the_holder_and_a_killed_holder_releases(tmp_path):
    out = tmp_path / "results.jsonl"
    child = hold_in_child(out)
    try:
        with pytest.raises(OutputLocked, match=f"results file {out} is being written by process {child.pid}"), \
                output_lock(out, "results file"):
            pass
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    with output_lock(out):  # the dead holder's lock is gone with its process
        pass
    assert lock_path(out) == tmp_path / ".results.jsonl.lock" and not out.exists()


def test_the_lock_is_re_entrant_within_a_process(tmp_path):
    run = tmp_path / "run"
    with output_lock(run, folder=True), output_lock(run, folder=True):
        assert (run / ".lock").read_text().strip() == f"process {os.getpid()}"
    child = hold_in_child(run, folder=True)
    try:
        with pytest.raises(OutputLocked), output_lock(run, "run folder", folder=True):
            pass
    finally:
        child.kill()
        child.wait()
    time.sleep(0.05)
    with output_lock(run, folder=True):
        pass
