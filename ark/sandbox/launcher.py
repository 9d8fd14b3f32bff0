"""How a worker process is started: the bubblewrap command line, a clean environment, the unprivileged uid.

Isolation with bubblewrap (Debian package ``bubblewrap``)::

    bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp (size-limited) --unshare-net --unshare-pid
          --unshare-ipc --unshare-uts --unshare-cgroup-try --die-with-parent --new-session --chdir /tmp
          [--ro-bind /dev/null <secret file> ...] -- python -I -B worker.py

The whole file system is read-only except a private ``/tmp``; there is no network (a fresh network namespace
with only loopback); the code sees only its own processes (so it cannot signal, trace or read the environment of
the parent); every process of the sandbox dies with it. When the parent runs as root, process limits would not
bind, so the worker drops to a fresh unprivileged uid (a random one per worker, so workers do not share a process
quota) right after opening the database. When the parent is not root, bubblewrap runs in a user namespace and
nested user namespaces are disabled.

Without bubblewrap the worker still gets the rlimits, the uid drop (as root), a clean environment and a private
temp folder, but no read-only file system, no network isolation and no pid namespace: a clearly weaker mode that
:func:`isolation_mode` warns about.
"""

from __future__ import annotations

import functools
import logging
import os
import secrets
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

log = logging.getLogger(__name__)

WORKER = Path(__file__).with_name("worker.py")
ARK_ROOT = Path(__file__).resolve().parents[2]  # the folder holding the ``ark`` package
ISOLATION_MODES = ("auto", "bwrap", "rlimit")
UID_RANGE = (200_000, 2**31 - 2)  # fresh uids for workers started by root (no passwd entries needed)
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"


class SandboxUnavailable(RuntimeError):
    """The requested isolation cannot be provided here."""


@functools.lru_cache(maxsize=1)
def bwrap_problem() -> str | None:
    """None when bubblewrap can build a sandbox here, else why not (checked once per process)."""
    path = shutil.which("bwrap")
    if path is None:
        return "bubblewrap (bwrap) is not installed; install it with: apt-get install bubblewrap"
    probe = [path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-net", "--unshare-pid",
             "--die-with-parent", "--", "/bin/true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=20, env={"PATH": SAFE_PATH})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap failed to start: {exc}"
    if done.returncode != 0:
        return f"bubblewrap cannot create namespaces here: {done.stderr.decode(errors='replace').strip()[:300]}"
    return None


def isolation_mode(requested: str = "auto") -> str:
    """``"bwrap"`` or ``"rlimit"`` for ``requested`` (one of :data:`ISOLATION_MODES`); warns when ``auto`` has to
    fall back to the weaker rlimit-only mode, raises :class:`SandboxUnavailable` when ``bwrap`` cannot be had."""
    if requested not in ISOLATION_MODES:
        raise ValueError(f"unknown sandbox isolation {requested!r}; valid: {', '.join(ISOLATION_MODES)}")
    if requested == "rlimit":
        return "rlimit"
    problem = bwrap_problem()
    if problem is None:
        return "bwrap"
    if requested == "bwrap":
        raise SandboxUnavailable(problem)
    _warn_weak(problem)
    return "rlimit"


@functools.lru_cache(maxsize=1)
def _warn_weak(problem: str) -> None:
    message = (f"code sandbox: {problem}. Falling back to a WEAKER rlimit-only mode: model-written code can read "
               "files, write where this user may, and reach the network.")
    warnings.warn(message, RuntimeWarning, stacklevel=3)
    log.warning(message)


def worker_uid() -> int | None:
    """A fresh unprivileged uid when running as root (None otherwise: the worker keeps this user)."""
    if os.geteuid() != 0:
        return None
    low, high = UID_RANGE
    return low + secrets.randbelow(high - low)


def clean_environment(home: str) -> dict[str, str]:
    """The worker's whole environment: nothing inherited, so no API keys or tokens reach the sandbox."""
    return {"PATH": SAFE_PATH, "HOME": home, "TMPDIR": home, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1", "PYTHONIOENCODING": "utf-8"}


def worker_command() -> list[str]:
    return [sys.executable, "-I", "-B", str(WORKER), str(ARK_ROOT)]


def secret_files() -> list[Path]:
    """Files hidden inside the sandbox (bound to /dev/null): ARK's config (it may hold an API key) and the usual
    credential files of this user."""
    from ark.config import ark_home

    home = Path.home()
    candidates = [ark_home() / "config.toml", home / ".netrc", home / ".pgpass", home / ".git-credentials",
                  home / ".config" / "gh" / "hosts.yml", home / ".docker" / "config.json"]
    return [p for p in candidates if p.is_file()]


def secret_dirs() -> list[Path]:
    home = Path.home()
    return [p for p in (home / ".ssh", home / ".aws", home / ".gnupg", home / ".kube") if p.is_dir()]


def needed_paths(extra: list[Path] | None = None) -> list[Path]:
    """Folders the worker must read after it drops privileges: Python, its packages, ARK and ``extra``."""
    paths = [Path(sys.base_prefix), Path(sys.prefix), Path(sys.executable).resolve().parent, ARK_ROOT]
    paths += [Path(p) for p in sys.path if p and Path(p).is_dir()]
    paths += list(extra or ())
    unique = {p.resolve() for p in paths if p.exists()}
    return sorted(p for p in unique if not any(other in p.parents for other in unique))  # outermost only


def closed_ancestor(path: Path) -> Path | None:
    """The outermost folder above ``path`` that other users cannot enter (e.g. a 0700 /root), or None."""
    for ancestor in reversed(path.parents):
        if ancestor == Path("/"):
            continue
        try:
            if not ancestor.stat().st_mode & 0o001:
                return ancestor
        except OSError:
            return None
    return None


def reopen_closed_folders(paths: list[Path]) -> list[str]:
    """bwrap arguments that let an unprivileged worker reach ``paths`` below folders closed to other users (a
    Python under a 0700 /root): each closed folder is replaced by an empty tmpfs and only ``paths`` are bound
    back, read-only, so everything else in it (credentials) stays out of sight."""
    closed: dict[Path, list[Path]] = {}
    for path in paths:
        ancestor = closed_ancestor(path)
        if ancestor is not None:
            closed.setdefault(ancestor, []).append(path)
    arguments: list[str] = []
    for ancestor in sorted(closed):
        if any(other in ancestor.parents for other in closed):
            continue  # already hidden by an outer tmpfs; its paths are bound below
        arguments += ["--tmpfs", str(ancestor)]
    made: set[Path] = set()
    for ancestor in sorted(closed):
        for path in sorted(set(closed[ancestor])):
            # bwrap would create the folders leading to a mount point as 0700: make them enterable
            for folder in reversed(path.parents):
                if ancestor in folder.parents and folder not in made:
                    arguments += ["--perms", "0755", "--dir", str(folder)]
                    made.add(folder)
            arguments += ["--ro-bind", str(path), str(path)]
    return arguments


def bwrap_command(tmp_size_mb: int, *, hide: list[Path] | None = None,
                  read_only: list[Path] | None = None) -> list[str]:
    """The bubblewrap prefix of the worker command (see the module docstring); ``read_only`` folders (the
    database's) are bound again after ``/tmp`` is replaced, so a database kept under /tmp stays visible."""
    command = [shutil.which("bwrap") or "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
               "--size", str(int(tmp_size_mb) * 2**20), "--tmpfs", "/tmp",
               "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
               "--die-with-parent", "--new-session", "--chdir", "/tmp"]
    if os.geteuid() != 0:
        command += ["--unshare-user", "--disable-userns"]
    else:  # the worker drops to an unprivileged uid: open the way to what it must still read
        command += reopen_closed_folders(needed_paths(read_only))
    for path in read_only or ():
        command += ["--ro-bind", str(path), str(path)]
    for path in secret_files() + list(hide or ()):
        if Path(path).is_file():
            command += ["--ro-bind", "/dev/null", str(path)]
    for path in secret_dirs():
        command += ["--tmpfs", str(path)]
    return [*command, "--"]
