"""The sandbox's file system for an ordinary user: model code can write only to its size-limited ``/tmp``.

For a user that is not root, bubblewrap runs in a user namespace where the root it builds (a tmpfs without a
size bound) and the folders made on it belong to that user: code once wrote 1,500 MB there, past the memory limit.
The test runs the sandbox as an ordinary user (dropping root first when it runs as root, as CI does).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from ark.sandbox import bwrap_problem
from tests.support.unprivileged import REPO, USER_ID, checkout_closed, unprivileged_prefix

pytestmark = pytest.mark.skipif(bwrap_problem() is not None, reason=f"no bubblewrap sandbox: {bwrap_problem()}")

CHILD = REPO / "tests" / "support" / "non_root_write_child.py"
# The root the sandbox builds, a folder made on it on the way to a bound path, /dev and its shm, the user's home
# and the checkout's parents as the sandbox sees them, and /tmp itself (32 MB).
OUTSIDE = ["/", "/dev", "/dev/shm", "/root", "/etc", str(REPO.parent), "/var"]


def _on_bounded_tmp(folder: str) -> bool:
    """A folder under /tmp (a checkout cloned there, as CI's second run has it) lies on the sandbox's own bounded
    /tmp: a write there is a write to /tmp, held to the same size."""
    return folder == "/tmp" or folder.startswith("/tmp/")


def test_an_ordinary_users_sandbox_writes_only_to_its_bounded_tmp(tmp_path):
    closed = checkout_closed()
    if closed and os.geteuid() == 0:
        pytest.skip(f"{closed} is closed to other users (mode {os.stat(closed).st_mode & 0o777:o})")
    base = Path("/var/tmp") if Path("/var/tmp").is_dir() else Path.home()
    home = Path(tempfile.mkdtemp(prefix="ark-write-home-", dir=base))
    try:
        if os.geteuid() == 0:
            os.chown(home, USER_ID, USER_ID)
        env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(REPO),
               "LANG": "C.UTF-8"}
        command = [*unprivileged_prefix(home), sys.executable, str(CHILD), json.dumps([*OUTSIDE, "/tmp"])]
        done = subprocess.run(command, cwd=home, env=env, capture_output=True, text=True, timeout=240)
        assert done.returncode == 0, done.stdout[-1000:] + done.stderr[-3000:]
        outcome = json.loads(done.stdout.strip().splitlines()[-1])
        assert outcome["uid"] != 0 and outcome["error"] is None, outcome
        report = json.loads(outcome["stdout"].strip().splitlines()[-1])
    finally:
        subprocess.run(["rm", "-rf", str(home)], check=False)
    wrote_outside = {folder: entry for folder, entry in report.items()
                     if not _on_bounded_tmp(folder) and entry["written_mb"]}
    assert not wrote_outside, report
    assert all(report[folder]["error"] for folder in OUTSIDE), report
    on_tmp = [entry for folder, entry in report.items() if _on_bounded_tmp(folder)]
    assert all(entry["error"] == "No space left on device" for entry in on_tmp), report
    # one file system: what every folder on it kept adds up to its bound
    assert 8 <= sum(entry["written_mb"] for entry in on_tmp) <= 32, report
