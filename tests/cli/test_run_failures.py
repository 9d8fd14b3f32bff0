"""Runs that never lie, as a user meets them: failing model endpoints, two writers, unwritable outputs, Ctrl-C,
half-given model settings, first-use builds off a terminal.

The model endpoint is the scripted loopback server (tests/support/openai_server.py) driven by the real client; the
graph is the small clinical graph saved to a folder. Commands run in-process through typer's CliRunner, or as real
processes where the test needs signals, locks or a read-only file system.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ark.cli.main import app
from ark.runtime.trajectory_file import read_trajectory_file
from ark.storage.jsonl import read_jsonl
from tests.support.graphs import ONE_HOP, TWO_HOP, build_small_graph, save_clinical_graph
from tests.support.openai_server import ScriptedOpenAIServer, http_error, tool_reply, turn_script

REPO = Path(__file__).resolve().parents[2]
FBN1_INDEX = 25  # NCBIGene:2200 in the clinical graph
ANSWERING = [tool_reply(("add_to_answer", {"answer_nodes": [{"node_index": FBN1_INDEX}]})),
             tool_reply(("finish", {}))]


@pytest.fixture(scope="module")
def graph_dir(tmp_path_factory) -> Path:
    return save_clinical_graph(tmp_path_factory.mktemp("graphs") / "clinical")


@pytest.fixture
def queries(tmp_path) -> Path:
    path = tmp_path / "q.jsonl"
    rows = [{"id": "a", "query": ONE_HOP[0], "answer_ids": [ONE_HOP[1]]},
            {"id": "b", "query": TWO_HOP[0], "answer_ids": [TWO_HOP[1]]}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(autouse=True)
def own_home(tmp_path, monkeypatch):
    """A home per test: replies cached by one test must not answer another's requests."""
    monkeypatch.setenv("ARK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", "80")  # errors must stay one line even on a narrow terminal


def ark(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


def error_lines(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.strip()]


def model_flags(server: ScriptedOpenAIServer) -> list[str]:
    """The scripted agents answer FBN1 straight away: the paper's unchecked answers (these tests are about failures)."""
    return ["--model", "test-model", "--base-url", server.base_url, "--set", "n_agents=2", "--set",
            "allow_unseen_answers=true", "--no-progress"]


# ----------------------------------------------------------------------------------------- failing endpoint
def test_a_dead_endpoint_fails_the_run_records_nothing_and_a_rerun_completes_it(graph_dir, queries, tmp_path,
                                                                               openai_server):
    openai_server.responder = lambda body: http_error(500, "the model server is down")
    out = tmp_path / "r.jsonl"
    result = ark("retrieve", graph_dir, "-m", "ark", "-q", queries, "-o", out, *model_flags(openai_server))
    assert result.exit_code == 1, result.output
    [line] = error_lines(result)
    assert line.startswith("error: 2 of 2 queries failed and were not written")
    assert openai_server.base_url in line and "HTTP 500" in line and "the model server is down" in line
    assert read_jsonl(out) == [] and read_trajectory_file(tmp_path / "r.trajectories.jsonl") == []

    openai_server.responder = turn_script(ANSWERING)  # the endpoint recovers
    again = ark("retrieve", graph_dir, "-m", "ark", "-q", queries, "-o", out, *model_flags(openai_server))
    assert again.exit_code == 0, again.output
    assert "2 new, 0 already done" in again.stderr
    assert {r["id"]: r["ranked"] for r in read_jsonl(out)} == {"a": [ONE_HOP[1]], "b": [ONE_HOP[1]]}


def test_eval_with_a_dead_endpoint_exits_non_zero_without_a_table_and_resumes(graph_dir, queries, tmp_path,
                                                                              openai_server):
    openai_server.responder = lambda body: http_error(503, "overloaded")
    run = tmp_path / "run"
    result = ark("eval", graph_dir, "-m", "ark", "-q", queries, "--run-dir", run, *model_flags(openai_server))
    assert result.exit_code == 1, result.output
    [line] = error_lines(result)
    assert "2 of 2 queries failed" in line and openai_server.base_url in line and "HTTP 503" in line
    assert "Hit@1" not in result.stdout and not (run / "summary.json").exists()
    openai_server.responder = turn_script(ANSWERING)
    again = ark("eval", graph_dir, "-m", "ark", "-q", queries, "--run-dir", run, *model_flags(openai_server))
    assert again.exit_code == 0, again.output
    assert json.loads((run / "summary.json").read_text())["overall"]["hit@1"] == 0.5


def test_one_failing_agent_fails_its_question_unless_partial_results_are_allowed(graph_dir, queries, tmp_path,
                                                                                openai_server):
    def one_agent_fails(body):
        return http_error(400, "context too long", retry_after_ms=None) if body["seed"] == 1 else \
            turn_script(ANSWERING)(body)

    openai_server.responder = one_agent_fails
    out = tmp_path / "r.jsonl"
    flags = [*model_flags(openai_server)]
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "config.toml").write_text("[llm]\nseed = 0\n")  # agent i sends seed i
    result = ark("retrieve", graph_dir, "-m", "ark", "-q", queries, "-o", out, *flags)
    assert result.exit_code == 1 and "agent 1 of 2 failed" in result.stderr and read_jsonl(out) == []

    partial = ark("retrieve", graph_dir, "-m", "ark", "-q", queries, "-o", out, *flags, "--allow-partial")
    assert partial.exit_code == 0, partial.output
    assert "2 query(ies) are partial" in " ".join(partial.stderr.split())
    lines = read_jsonl(out)
    assert [r["ranked"] for r in lines] == [[ONE_HOP[1]]] * 2
    assert all(r["partial"].startswith("1 of 2 agents failed: agent 1") for r in lines)


# ----------------------------------------------------------------------------------------- two writers
def test_a_second_process_writing_the_same_output_is_refused_and_nothing_doubles(graph_dir, queries, tmp_path):
    out = tmp_path / "r.jsonl"
    with ScriptedOpenAIServer() as server:
        # The model holds the first process's first call until the second process has finished, so the first
        # holds the lock however slowly the second starts on a loaded machine (a fixed delay made this flaky).
        second_done = threading.Event()
        script = turn_script([tool_reply(("search_in_graph", {"query": "marfan"})), *ANSWERING])

        def held_until_the_second_finishes(body: dict):
            second_done.wait(timeout=100)
            return script(body)

        server.responder = held_until_the_second_finishes
        command = [sys.executable, "-m", "ark.cli.main", "retrieve", str(graph_dir), "-m", "ark", "-q",
                   str(queries), "-o", str(out), *model_flags(server)]
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        first = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 60
        while time.time() < deadline and server.request_count == 0:
            time.sleep(0.02)
        assert server.request_count > 0, "the first process never reached the model"
        try:
            second = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
        finally:
            second_done.set()
        first_out, first_err = first.communicate(timeout=120)
    assert second.returncode == 1, second.stderr
    assert f"results file {out} is being written by process {first.pid}" in " ".join(second.stderr.split())
    assert first.returncode == 0, first_err
    ids = [r["id"] for r in read_jsonl(out)]
    assert sorted(ids) == ["a", "b"]
    assert sorted(r["id"] for r in read_trajectory_file(tmp_path / "r.trajectories.jsonl")) == ["a", "b"]


def test_a_results_file_doubled_by_an_older_version_is_repaired_on_resume(graph_dir, queries, tmp_path):
    out = tmp_path / "r.jsonl"
    assert ark("retrieve", graph_dir, "-m", "bm25", "-q", queries, "-o", out, "--no-progress").exit_code == 0
    out.write_text(out.read_text() * 2)  # what two unlocked writers left behind
    again = ark("retrieve", graph_dir, "-m", "bm25", "-q", queries, "-o", out, "--no-progress")
    assert again.exit_code == 0 and "0 new, 2 already done" in again.stderr
    assert [r["id"] for r in read_jsonl(out)] == ["a", "b"]


# ----------------------------------------------------------------------------------------- unwritable outputs
UNWRITABLE = {
    "below a file": lambda tmp: tmp / "a-file" / "out.jsonl",
    "under /proc": lambda tmp: Path("/proc/ark-test/out.jsonl"),
}


def _commands(graph_dir: Path, queries: Path, target: Path, tmp_path: Path) -> dict[str, list]:
    scored = tmp_path / "scored"
    return {
        "retrieve": ["retrieve", graph_dir, "-m", "bm25", "-q", queries, "-o", target, "--no-progress"],
        "eval": ["eval", graph_dir, "-m", "bm25", "-q", queries, "--run-dir", target.parent / "run",
                 "--no-progress"],
        "quiz": ["quiz", graph_dir, "--n", "5", "--out", target],
        "ask --trajectories": ["ask", graph_dir, ONE_HOP[0], "--offline", "--trajectories", target],
        "graph import": ["graph", "import", "parquet", tmp_path / "src", "--out", target.parent / "g"],
        "eval compare --markdown": ["eval", "compare", scored, scored, "--markdown", target],
        "trajectory export": ["trajectory", "export", tmp_path / "t.jsonl", "--out", target],
    }


@pytest.mark.parametrize("where", list(UNWRITABLE))
def test_every_writer_reports_an_unwritable_output_on_one_line(graph_dir, queries, tmp_path, where):
    from tests.support.graphs import write_folder

    (tmp_path / "a-file").write_text("not a folder")
    write_folder(tmp_path / "src", "csv")
    scored = tmp_path / "scored"
    assert ark("eval", graph_dir, "-m", "bm25", "-q", queries, "--run-dir", scored, "--no-progress").exit_code == 0
    assert ark("ask", graph_dir, ONE_HOP[0], "--offline", "--trajectories", tmp_path / "t.jsonl").exit_code == 0
    target = UNWRITABLE[where](tmp_path)
    for name, command in _commands(graph_dir, queries, target, tmp_path).items():
        result = ark(*command)
        assert result.exit_code == 2, (name, result.output)
        assert isinstance(result.exception, SystemExit), (name, result.exception)
        lines = error_lines(result)
        assert len(lines) == 1 and lines[0].startswith("error: cannot write"), (name, result.stderr)
        assert "Traceback" not in result.output


def _read_only_mount_works() -> bool:
    if shutil.which("unshare") is None or not sys.platform.startswith("linux"):
        return False
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs -o ro tmpfs /mnt && ! touch /mnt/x"],
                           capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(not _read_only_mount_works(), reason="needs unshare and mount (a private read-only tmpfs)")
def test_a_read_only_file_system_is_one_line_for_retrieve_eval_and_quiz(graph_dir, queries, tmp_path):
    folder = tmp_path / "read-only"
    folder.mkdir()
    python = sys.executable
    script = (f"mount -t tmpfs -o ro tmpfs {folder} && cd {folder} && "
              f"{python} -m ark.cli.main retrieve {graph_dir} -m bm25 -q {queries} -o {folder}/r.jsonl "
              f"--no-progress; echo rc=$?; "
              f"{python} -m ark.cli.main eval {graph_dir} -m bm25 -q {queries} --no-progress; echo rc=$?; "
              f"{python} -m ark.cli.main quiz {graph_dir} --n 5 --out {folder}/q.jsonl; echo rc=$?")
    done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=180,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.stdout.split() == ["rc=2", "rc=2", "rc=2"], done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 3 and all("Read-only file system" in line for line in lines), done.stderr
    assert "runs/" in lines[1]  # ark eval's default run folder, in the read-only working directory


# ----------------------------------------------------------------------------------------- model settings
def test_a_model_without_a_key_or_endpoint_names_the_cause_instead_of_running_offline(graph_dir, monkeypatch):
    result = ark("ask", graph_dir, ONE_HOP[0], "--model", "gpt-4.1")
    assert result.exit_code == 2, result.output
    [line] = error_lines(result)
    assert "model 'gpt-4.1' (from --model) has no endpoint" in line and "OPENAI_API_KEY" in line
    assert "offline policy" not in result.stdout and "No LLM configured" not in result.output

    monkeypatch.setenv("ARK_MODEL", "gpt-4.1")
    from_env = ark("ask", graph_dir, ONE_HOP[0])
    assert from_env.exit_code == 2 and "(from ARK_MODEL)" in from_env.stderr
    monkeypatch.delenv("ARK_MODEL")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    no_model = ark("ask", graph_dir, ONE_HOP[0])
    assert no_model.exit_code == 2 and "has no model" in no_model.stderr
    assert ark("ask", graph_dir, ONE_HOP[0], "--offline").exit_code == 0


# ----------------------------------------------------------------------------------------- Ctrl-C
def _interrupted_run(graph_dir: Path, queries: Path, out: Path, signals: int,
                     gap_s: float = 0.01) -> tuple[int, str, int]:
    with ScriptedOpenAIServer() as server:
        server.responder = turn_script([tool_reply(("search_in_graph", {"query": "marfan"}), delay_s=2.0),
                                        *ANSWERING])
        process = subprocess.Popen(
            [sys.executable, "-m", "ark.cli.main", "retrieve", str(graph_dir), "-m", "ark", "-q", str(queries),
             "-o", str(out), *model_flags(server)],
            env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 60
        while time.time() < deadline and server.request_count == 0:
            time.sleep(0.02)
        for _ in range(signals):
            process.send_signal(signal.SIGINT)
            time.sleep(gap_s)
        _, stderr = process.communicate(timeout=60)
        return process.returncode, stderr, server.request_count


def test_ctrl_c_says_how_to_resume_and_a_second_one_prints_no_noise(graph_dir, queries, tmp_path):
    out = tmp_path / "r.jsonl"
    code, stderr, _ = _interrupted_run(graph_dir, queries, out, signals=1)
    assert code == 130, stderr
    assert stderr.strip().splitlines() == ["interrupted — rerun the same command to resume"]
    for gap_s in (0.01, 0.1):  # the second Ctrl-C during the clean-up, or while the process exits
        code, stderr, _ = _interrupted_run(graph_dir, queries, out, signals=2, gap_s=gap_s)
        assert code == 130, stderr
        assert stderr.strip().splitlines() == ["interrupted — rerun the same command to resume"]
    assert read_jsonl(out) == []  # nothing half-written; a rerun starts both questions again


# ----------------------------------------------------------------------------------------- first-use build
def test_a_first_use_graph_build_prints_progress_off_a_terminal(monkeypatch, tmp_path):
    from ark.loaders import registry

    monkeypatch.setitem(registry.BUILDERS, "small", build_small_graph)
    result = ark("graph", "info", "small")
    assert result.exit_code == 0, result.output
    assert "Building graph 'small' into" in result.stderr and "(first use; once" in result.stderr
    assert "Graph 'small' built in" in result.stderr or "built in" in result.stderr
    assert not ark("graph", "info", "small").stderr  # built once: later uses are quiet
