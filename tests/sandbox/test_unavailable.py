"""When there is no sandbox: ``ark ask --method graphscout`` without bubblewrap exits 1 with one line naming the fix
(unless the weaker rlimit mode is chosen, which warns), and a sandbox that cannot start fails the question with a
non-zero exit instead of answering nothing."""

from __future__ import annotations

import shutil

import pytest
from typer.testing import CliRunner

from ark.cli.main import app
from tests.support.graphs import save_clinical_graph

pytest.importorskip("ladybug")
QUESTION = "How many genes are associated with Loeys-Dietz syndrome?"


@pytest.fixture(scope="module")
def graph_dir(tmp_path_factory):
    return save_clinical_graph(tmp_path_factory.mktemp("graphs") / "clinical")


pytestmark = pytest.mark.usefixtures("isolated_env")  # tests/conftest.py: own ARK_HOME, no LLM variables


@pytest.fixture
def no_bwrap(monkeypatch, tmp_path):
    """A PATH holding the usual programs but not bwrap."""
    import ark.sandbox.launcher as launcher

    folder = tmp_path / "bin"
    folder.mkdir()
    for program in ("sh", "true", "env"):
        found = shutil.which(program)
        if found:
            (folder / program).symlink_to(found)
    monkeypatch.setenv("PATH", str(folder))
    launcher.bwrap_problem.cache_clear()
    launcher._warn_weak.cache_clear()
    yield
    launcher.bwrap_problem.cache_clear()


def test_graphscout_without_bubblewrap_exits_1_with_one_line_naming_the_fix(graph_dir, no_bwrap):
    result = CliRunner().invoke(app, ["ask", str(graph_dir), QUESTION, "--method", "graphscout"])
    assert result.exit_code == 1, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    message = " ".join(result.stderr.split())
    assert "bubblewrap" in message and "apt-get install bubblewrap" in message and "isolation=rlimit" in message
    assert "unprivileged_userns_clone" not in message  # bwrap is missing, not blocked
    assert len(lines) <= 3 and "Traceback" not in result.output  # one message (rich may wrap it)


def test_the_weaker_mode_is_an_explicit_choice_that_warns(graph_dir, no_bwrap):
    with pytest.warns(RuntimeWarning, match="WEAKER"):
        result = CliRunner().invoke(app, ["ask", str(graph_dir), QUESTION, "--method", "graphscout", "--set",
                                          "sandbox.isolation=rlimit"])
    assert result.exit_code == 0, result.output
    assert "Answer (number): 2" in result.stdout


def test_blocked_namespaces_name_the_sysctl(monkeypatch):
    import ark.sandbox.launcher as launcher

    monkeypatch.setattr(launcher.subprocess, "run", lambda *a, **k: type("Done", (), {
        "returncode": 1, "stderr": b"bwrap: setting up uid map: Permission denied"})())
    launcher.bwrap_problem.cache_clear()
    try:
        problem = launcher.bwrap_problem()
    finally:
        launcher.bwrap_problem.cache_clear()
    assert "kernel.unprivileged_userns_clone=1" in problem and "apparmor_restrict_unprivileged_userns=0" in problem


def test_a_sandbox_that_cannot_start_fails_the_question(graph_dir, monkeypatch):
    import ark.sandbox.session as session
    from ark.sandbox import bwrap_problem

    if bwrap_problem() is not None:
        pytest.skip(f"no bubblewrap sandbox: {bwrap_problem()}")
    # an interpreter the sandbox cannot see: what a Python hidden by the private /tmp looked like
    monkeypatch.setattr(session, "worker_command", lambda: ["/nonexistent/python3", "-I", "worker.py"])
    result = CliRunner().invoke(app, ["ask", str(graph_dir), QUESTION, "--method", "graphscout"])
    assert result.exit_code == 1, result.output
    assert "could not start" in " ".join(result.stderr.split()) and "Answer" not in result.stdout


def test_eval_records_a_question_whose_sandbox_cannot_start_as_failed(graph_dir, monkeypatch, tmp_path):
    import json

    import ark.sandbox.session as session
    from ark.sandbox import bwrap_problem

    if bwrap_problem() is not None:
        pytest.skip(f"no bubblewrap sandbox: {bwrap_problem()}")
    monkeypatch.setattr(session, "worker_command", lambda: ["/nonexistent/python3", "-I", "worker.py"])
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"id": "q1", "query": QUESTION, "answer_ids": ["NCBIGene:7046"]}) + "\n")
    run_dir = tmp_path / "run"
    result = CliRunner().invoke(app, ["eval", str(graph_dir), "-m", "graphscout", "-q", str(queries), "--run-dir",
                                      str(run_dir), "--no-progress"])
    assert result.exit_code != 0, result.output
    output = " ".join(result.output.split())
    assert "1 of 1 queries failed" in output and "could not start" in output
    assert (run_dir / "results.jsonl").read_text() == ""  # nothing recorded as an (empty) answer
