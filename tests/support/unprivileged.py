"""Running a child process as an ordinary user from a test that runs as root (as CI does).

bubblewrap, still as root, gives the child a view where each folder closed to other users above the interpreter
and the checkout (/root, a ``mktemp -d`` folder) holds only them, then ``setpriv`` drops to a fresh uid.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
USER_ID = 54_321


def closed_above(path: Path) -> Path | None:
    """The outermost folder above ``path`` that other users cannot enter (no search permission for others): /root,
    or a checkout's ``mktemp -d`` folder (mode 0700)."""
    return next((d for d in reversed(path.parents) if d != Path("/") and not os.stat(d).st_mode & 0o001), None)


def unprivileged_prefix(home: Path) -> list[str]:
    """The command prefix that runs the child as an ordinary user (nothing when this is one already)."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root needs setpriv (util-linux) to become an ordinary user")
    paths = list(dict.fromkeys(Path(p).resolve() for p in (sys.base_prefix, sys.prefix, REPO)))
    closed = [(path, top) for path in paths if (top := closed_above(path)) is not None]
    tops = {top for _, top in closed}
    tops = {top for top in tops if not any(other in top.parents for other in tops)}
    view = ["bwrap", "--dev-bind", "/", "/"]
    # a closed folder becomes an empty one open to the user, showing the child only the interpreter and the checkout
    made = set(tops)
    for top in sorted(tops):
        view += ["--tmpfs", str(top)]
    for path, _ in closed:
        for folder in reversed(path.parents):  # bubblewrap would make these 0700, closed to the user
            if any(top in folder.parents for top in tops) and folder not in made:
                view += ["--perms", "0755", "--dir", str(folder)]
                made.add(folder)
        view += ["--ro-bind", str(path), str(path)]
    return [*view, "--", "setpriv", f"--reuid={USER_ID}", f"--regid={USER_ID}", "--clear-groups", "--"]


def checkout_closed() -> Path | None:
    """A folder of the checkout closed to other users (the view opens folders above it, not its own), or None."""
    inside = [REPO, *(d for d in Path(__file__).resolve().parents if REPO in d.parents)]
    return next((d for d in inside if not os.stat(d).st_mode & 0o001), None)
