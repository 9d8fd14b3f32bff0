"""The worker's file system is a whitelist: the interpreter, the packages the worker imports and the database, never
the home folder, ARK_HOME or the working directory; the private /tmp is mounted first, so an interpreter, a package
or a database installed under /tmp stays visible (a virtual environment under /tmp runs the sandbox)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

from ark.config import ark_home
from ark.sandbox import bwrap_problem
from ark.sandbox.launcher import bwrap_command, whitelist

REPO = Path(__file__).resolve().parents[2]
needs_bwrap = pytest.mark.skipif(bwrap_problem() is not None, reason=f"no bubblewrap sandbox: {bwrap_problem()}")


def test_no_home_ark_home_or_working_directory_is_bound():
    private = [Path.home(), Path.cwd(), ark_home(), REPO]
    for path in whitelist():
        for folder in private:
            assert path != folder and path not in folder.parents, (path, folder)


def test_the_private_tmp_comes_before_anything_bound_below_it(tmp_path):
    database = Path(tempfile.mkdtemp(prefix="ark-db-", dir="/tmp"))
    try:
        command = bwrap_command(8, read_only=[database])
    finally:
        database.rmdir()
    tmpfs = command.index("/tmp")  # "--tmpfs /tmp"
    assert command[tmpfs - 1] == "--tmpfs"
    bound = [i for i, word in enumerate(command) if word == "--ro-bind" and command[i + 2] == str(database)]
    assert bound and bound[0] > tmpfs
    assert "--ro-bind" not in command[:tmpfs] and ["/", "/"] not in [command[i + 1:i + 3] for i in bound]


@needs_bwrap
def test_a_virtual_environment_under_tmp_runs_the_sandbox():
    pytest.importorskip("ladybug")
    root = Path(tempfile.mkdtemp(prefix="ark-venv-", dir="/tmp"))
    root.chmod(0o755)  # as an installed Python's folder is: open to every user
    try:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")], check=True, timeout=120)
        purelib = Path(sysconfig.get_paths(vars={"base": str(root / "venv")})["purelib"])
        # the packages of this environment reached through a .pth file, ARK through PYTHONPATH
        (purelib / "outer.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
        code = ("from ark.graphdb.ladybug_engine import open_ladybug\nfrom ark.sandbox import CodeSandbox\n"
                "from tests.support.graphs import build_clinical_graph\nimport sys\n"
                "engine = open_ladybug(build_clinical_graph())\nwith CodeSandbox(engine) as box:\n"
                "    print(sys.prefix, box.run(\"print(cypher('MATCH (g:gene) RETURN count(g) AS n')[0]['n'])\")"
                ".observation())\nengine.close()")
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        done = subprocess.run([str(root / "venv" / "bin" / "python"), "-c", code], env=env, cwd=root,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        words = done.stdout.split()
        assert words[0].startswith("/tmp/") and words[1:] == ["7"], done.stdout  # not "could not start"
    finally:
        shutil.rmtree(root, ignore_errors=True)
