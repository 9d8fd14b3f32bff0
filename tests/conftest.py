"""Shared pytest fixtures, and the one temporary ``ARK_HOME`` of the whole test run.

Before any test module is imported, ``ARK_HOME`` points at a fresh temporary folder (removed at the end of the
run) and the LLM settings of the environment (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``, ``ARK_MODEL``) are set
aside, so no test reads or writes the user's own cache, config file or model endpoint; subprocesses inherit the
same home. The built-in HPO graph is built into it once, by the first test that asks for ``hpo_home``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.openai_server import ScriptedOpenAIServer

USER_ENV_KEYS = ("ARK_HOME", "OPENAI_BASE_URL", "OPENAI_API_KEY", "ARK_MODEL")
_saved_env: dict[str, str | None] = {}
SESSION_HOME: Path | None = None
HPO_BUILDS: list[float] = []  # one entry per build of the HPO graph in this run


def pytest_configure(config: pytest.Config) -> None:
    global SESSION_HOME
    _saved_env.update({key: os.environ.get(key) for key in USER_ENV_KEYS})
    for key in USER_ENV_KEYS:
        os.environ.pop(key, None)
    SESSION_HOME = Path(tempfile.mkdtemp(prefix="ark-test-home-"))
    os.environ["ARK_HOME"] = str(SESSION_HOME)
    _count_hpo_builds()


def pytest_unconfigure(config: pytest.Config) -> None:
    for key, value in _saved_env.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    if SESSION_HOME is not None:
        shutil.rmtree(SESSION_HOME, ignore_errors=True)


def _count_hpo_builds() -> None:
    import time

    from ark.loaders import registry

    build = registry.BUILDERS["hpo"]

    def counted():
        HPO_BUILDS.append(time.time())
        return build()

    registry.BUILDERS["hpo"] = counted


def user_environment() -> dict[str, str | None]:
    """The values of ``ARK_HOME`` and the LLM variables the run started with (set aside for its duration)."""
    return dict(_saved_env)


@pytest.fixture(scope="session")
def session_home() -> Path:
    """The temporary ``ARK_HOME`` of the whole test run."""
    assert SESSION_HOME is not None
    return SESSION_HOME


@pytest.fixture(scope="session")
def hpo_home(session_home: Path) -> Path:
    """The run's ``ARK_HOME`` with the built-in HPO graph built (once, however many tests ask)."""
    from ark.loaders import build_named_graph

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ARK_HOME", str(session_home))
        build_named_graph("hpo")
    return session_home


@pytest.fixture
def use_hpo_home(hpo_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point ``ARK_HOME`` at the run's home with HPO built (for tests whose module sets a home per test)."""
    monkeypatch.setenv("ARK_HOME", str(hpo_home))
    return hpo_home


@pytest.fixture
def openai_server() -> Iterator[ScriptedOpenAIServer]:
    """A scripted loopback OpenAI server (tests/support/openai_server.py); `.base_url` ends in /v1."""
    with ScriptedOpenAIServer() as server:
        yield server


def isolate_user_env(monkeypatch: pytest.MonkeyPatch, home: Path, columns: int = 200) -> None:
    """A fresh ``ARK_HOME`` at ``home``, none of the user's LLM variables (:data:`USER_ENV_KEYS`) and a terminal
    ``columns`` wide (rich wraps at the terminal width: keep lines whole)."""
    monkeypatch.setenv("ARK_HOME", str(home))
    for name in USER_ENV_KEYS:
        if name != "ARK_HOME":
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COLUMNS", str(columns))


@pytest.fixture
def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """This test's own ARK_HOME, no LLM variables, a 250-column terminal (a module that wants it for every test
    says ``pytestmark = pytest.mark.usefixtures("isolated_env")``)."""
    isolate_user_env(monkeypatch, tmp_path / "ark-home", columns=250)


@pytest.fixture
def no_llm(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No chat model configured anywhere (a fresh ARK_HOME, no OpenAI variables) and a wide terminal."""
    isolate_user_env(monkeypatch, tmp_path / "ark-home")
