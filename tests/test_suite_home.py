"""The test run itself: one temporary ARK_HOME for every test, never the user's, with HPO built once."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from ark.config import ark_home
from tests import conftest


def test_every_test_runs_in_the_one_temporary_home(session_home: Path) -> None:
    home = ark_home()
    assert home == session_home and str(home).startswith(tempfile.gettempdir())
    assert home != Path.home() / ".cache" / "ark"
    user_home = conftest.user_environment()["ARK_HOME"]
    assert user_home is None or Path(user_home) != home
    assert not any(os.environ.get(key) for key in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ARK_MODEL"))
    child = subprocess.run([sys.executable, "-c", "from ark.config import ark_home; print(ark_home())"],
                           capture_output=True, text=True, check=True)
    assert child.stdout.strip() == str(session_home)  # subprocesses of tests too


@pytest.mark.slow
def test_the_hpo_graph_is_built_once_into_the_run_home(use_hpo_home: Path) -> None:
    from ark.loaders import open_graph

    graph = open_graph("hpo")
    assert graph.path is not None and use_hpo_home in graph.path.parents
    assert len(conftest.HPO_BUILDS) == 1  # however many tests used it before
