"""How a worker process is started: the bubblewrap command line, a clean environment, the unprivileged uid.

Isolation with bubblewrap (Debian package ``bubblewrap``) builds the worker's file system from a whitelist::

    bwrap --tmpfs /tmp (size-limited) --ro-bind <each path below> --dev /dev --remount-ro /dev --proc /proc
          --remount-ro / --unshare-net --unshare-pid --unshare-ipc --unshare-uts --unshare-cgroup-try
          --die-with-parent --new-session --chdir /tmp -- python -I -B worker.py <import roots>

The root is an empty tmpfs holding, read-only, only: the system's programs and shared libraries (``/usr`` and the
``/bin``, ``/lib*`` links or folders), the loader's cache and the time zone from ``/etc``; the interpreter (the
``bin`` and ``lib`` folders of ``sys.base_prefix`` and ``sys.prefix``, by their real paths too); the packages the
worker imports (``ark`` and ``ladybug``): a ``site-packages`` folder is bound whole, a package found anywhere else
(a source checkout, a ``PYTHONPATH`` entry) only its own folder; and the database folder of the session. Nothing
else of the host exists there: not the home folder, not ``ARK_HOME``, not the working directory. ``/tmp`` is a
private, size-limited tmpfs mounted before the binds, so an interpreter or database installed under /tmp stays
visible. There is no network (a fresh network namespace with only loopback); the code sees only its own processes
(so it cannot signal, trace or read the environment of the parent); every process of the sandbox dies with it.
When the parent runs as root, process limits would not bind, so the worker drops to a fresh unprivileged uid (a
random one per worker, so workers do not share a process quota) right after opening the database. When the parent
is not root, bubblewrap runs in a user namespace and nested user namespaces are disabled. The root and ``/dev`` are
tmpfs mounts without a size bound, owned by the user when it is not root: both are remounted read-only once built,
so the size-limited ``/tmp`` is the one place code can write, for every user; ``RLIMIT_FSIZE`` bounds each file too.

Without bubblewrap the sandbox refuses to start (:class:`SandboxUnavailable`, naming the fix) unless the user opts
into the rlimit-only mode (``isolation="rlimit"``): the rlimits, the uid drop (as root), a clean environment and a
private temp folder, but no file system whitelist, no network isolation and no pid namespace; it warns.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import secrets
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

from ark.errors import ArkError

log = logging.getLogger(__name__)

WORKER = Path(__file__).with_name("worker.py")
ARK_ROOT = Path(__file__).resolve().parents[2]  # the folder holding the ``ark`` package
ISOLATION_MODES = ("auto", "bwrap", "rlimit")
UID_RANGE = (200_000, 2**31 - 2)  # fresh uids for workers started by root (no passwd entries needed)
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"


USERNS_FIX = ("where unprivileged user namespaces are disabled, enable them: sysctl -w "
              "kernel.unprivileged_userns_clone=1 (Debian) or sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 "
              "(Ubuntu 24.04+)")
OPT_OUT = "or run model-written code with rlimits only (weaker) with --set sandbox.isolation=rlimit"
# System folders holding the interpreter's shared libraries and the programs code may start.
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32")
# Files of /etc the dynamic loader and the time functions read; nothing else of /etc is visible.
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/alternatives")
PREFIX_PARTS = ("bin", "lib", "lib64", "pyvenv.cfg")  # what of an interpreter's prefix it runs from
WORKER_IMPORTS = ("ark", "ladybug")  # the packages the worker imports (the rest of the standard library aside)


class SandboxUnavailable(RuntimeError, ArkError):
    """The requested isolation cannot be provided here."""


@functools.lru_cache(maxsize=1)
def bwrap_problem() -> str | None:
    """None when bubblewrap can build a sandbox here, else one line saying why not and how to fix it (checked once
    per process)."""
    path = shutil.which("bwrap")
    if path is None:
        return ("bubblewrap (bwrap) is not installed: install it (apt-get install bubblewrap, dnf install "
                f"bubblewrap or pacman -S bubblewrap), {OPT_OUT}")
    probe = [path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-net", "--unshare-pid",
             "--die-with-parent", "--", "/bin/true"]
    if os.geteuid() != 0:
        probe[1:1] = ["--unshare-user"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=20, env={"PATH": SAFE_PATH})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap failed to start ({exc}); {USERNS_FIX}; {OPT_OUT}"
    if done.returncode != 0:
        detail = " ".join(done.stderr.decode(errors="replace").split())[:200]
        return f"bubblewrap cannot create namespaces here ({detail}); {USERNS_FIX}; {OPT_OUT}"
    return None


def isolation_mode(requested: str = "auto") -> str:
    """``"bwrap"`` or ``"rlimit"`` for ``requested`` (one of :data:`ISOLATION_MODES`): ``auto`` and ``bwrap`` need
    bubblewrap and raise :class:`SandboxUnavailable` (one line naming the fix) without it; ``rlimit`` is the weaker
    mode the user opts into, with a warning."""
    if requested not in ISOLATION_MODES:
        raise ValueError(f"unknown sandbox isolation {requested!r}; valid: {', '.join(ISOLATION_MODES)}")
    if requested == "rlimit":
        _warn_weak()
        return "rlimit"
    problem = bwrap_problem()
    if problem is not None:
        raise SandboxUnavailable(f"the code sandbox needs bubblewrap: {problem}")
    return "bwrap"


@functools.lru_cache(maxsize=1)
def _warn_weak() -> None:
    message = ("code sandbox: isolation=rlimit is a WEAKER mode: model-written code can read files, write where "
               "this user may, and reach the network; only its CPU, memory and processes are limited.")
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
    """``python -I -B worker.py <import roots>``: the worker puts the roots first on its ``sys.path``."""
    roots = [str(root) for root, _ in import_locations()]
    return [sys.executable, "-I", "-B", str(WORKER), *dict.fromkeys([str(ARK_ROOT), *roots])]


def _prefixes() -> list[Path]:
    found = [Path(sys.base_prefix), Path(sys.prefix)]
    return list(dict.fromkeys(found + [p.resolve() for p in found]))


def _under(path: Path, folders: list[Path]) -> bool:
    return any(path == folder or folder in path.parents for folder in folders)


def import_locations() -> list[tuple[Path, Path]]:
    """``(sys.path entry, what to bind)`` for each package of :data:`WORKER_IMPORTS` found outside the
    interpreter's prefixes: a ``site-packages`` folder whole, any other entry (a checkout, a ``PYTHONPATH``
    folder) only the package's own folder (and its vendored ``<name>.libs``)."""
    prefixes = _prefixes()
    found: list[tuple[Path, Path]] = []
    for name in WORKER_IMPORTS:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin in (None, "built-in", "frozen"):
            continue
        locations = list(spec.submodule_search_locations or [])
        package = Path(locations[0]) if locations else Path(spec.origin)
        for path in dict.fromkeys([package.absolute(), package.resolve()]):
            entry = path.parent
            if _under(path, prefixes):
                continue
            if entry.name in ("site-packages", "dist-packages"):
                found.append((entry, entry))
                continue
            found.append((entry, path))
            libs = entry / f"{name}.libs"
            if libs.is_dir():
                found.append((entry, libs))
    return found


def whitelist(read_only: list[Path] | None = None) -> list[Path]:
    """Every host path the worker's file system holds (see the module docstring), outermost first."""
    paths = [Path(p) for p in SYSTEM_PATHS + SYSTEM_FILES]
    for prefix in _prefixes():
        paths += [prefix / part for part in PREFIX_PARTS]
    executable = Path(sys.executable)
    paths += [executable.parent, executable.resolve().parent]
    paths += [bound for _, bound in import_locations()]
    paths += [Path(p) for p in read_only or ()]
    unique = {Path(os.path.abspath(p)) for p in paths if os.path.lexists(p)}
    return sorted(p for p in unique if not any(other in p.parents for other in unique if not other.is_symlink()))


def bwrap_command(tmp_size_mb: int, *, hide: list[Path] | None = None,
                  read_only: list[Path] | None = None) -> list[str]:
    """The bubblewrap prefix of the worker command: a private ``/tmp`` first, then the whitelisted paths
    (``read_only``: the database folder) read-only, each folder leading to them enterable by the worker."""
    command = [shutil.which("bwrap") or "bwrap", "--size", str(int(tmp_size_mb) * 2**20), "--tmpfs", "/tmp"]
    made = {Path("/"), Path("/tmp")}
    visible = whitelist(read_only)
    for path in visible:
        for folder in reversed(path.parents):  # bubblewrap would create these as 0700, closed to the worker's uid
            if folder not in made:
                command += ["--perms", "0755", "--dir", str(folder)]
                made.add(folder)
        if path.is_symlink() and str(path) in SYSTEM_PATHS:  # /lib -> usr/lib on a merged /usr
            command += ["--symlink", os.readlink(path), str(path)]
        else:
            command += ["--ro-bind", str(path), str(path)]
        made.add(path)
    for path in hide or ():
        if Path(path).is_file() and _under(Path(path), visible):
            command += ["--ro-bind", "/dev/null", str(path)]
    # The root and /dev are tmpfs mounts bubblewrap makes without a size bound, owned by the user when it is not
    # root (a user namespace): both are made read-only once everything is in place, so /tmp is the one place the
    # code can write, within its size.
    command += ["--dev", "/dev", "--remount-ro", "/dev", "--proc", "/proc", "--remount-ro", "/", "--unshare-net",
                "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent",
                "--new-session", "--chdir", "/tmp"]
    if os.geteuid() != 0:
        command += ["--unshare-user", "--disable-userns"]
    return [*command, "--"]
