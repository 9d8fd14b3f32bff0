"""Distributed runs on Ray (``ark retrieve|eval --ray``): the same results as a local run, one LLM budget per
endpoint across workers, and a worker killed mid-run costs nothing but time.

One local Ray instance (2 CPUs, a small object store) serves the whole module; the executor uses a connected Ray
session as it is, so ``--ray local`` in-process runs on it too. The graph is the small clinical graph saved to a
folder; the model endpoint is the scripted loopback server driven by the real client in every worker.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from typer.testing import CliRunner  # noqa: E402

from ark.cli.main import app  # noqa: E402
from ark.eval import run_eval  # noqa: E402
from ark.eval.ray_runs import RayExecutor  # noqa: E402
from ark.graph import KnowledgeGraph, load_graph  # noqa: E402
from ark.llm import LLMSettings, OpenAIChatClient  # noqa: E402
from ark.loaders.queries import Query  # noqa: E402
from ark.methods import MethodContext  # noqa: E402
from ark.methods.choice import MethodChoice  # noqa: E402
from ark.runtime.trajectory_file import read_trajectory_file  # noqa: E402
from ark.storage.jsonl import read_jsonl  # noqa: E402
from tests.support.graphs import BROAD, ONE_HOP, SHARED_FINDINGS, TWO_HOP, save_clinical_graph  # noqa: E402
from tests.support.openai_server import ScriptedOpenAIServer, http_error, tool_reply  # noqa: E402

QUESTIONS = [ONE_HOP, TWO_HOP, SHARED_FINDINGS, BROAD]
BUDGET = 2  # the endpoint's concurrency: requests in flight across the whole cluster
REQUEST_TIMEOUT_S = 5.0  # the clients' timeout: how long a killed worker's LLM slots stay counted


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A local Ray instance with 2 CPUs (so 2 workers), shut down after the module."""
    ray.init(num_cpus=2, object_store_memory=80 * 2**20, include_dashboard=False, log_to_driver=False,
             _temp_dir=str(tmp_path_factory.mktemp("ray")))
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def graph_dir(tmp_path_factory) -> Path:
    return save_clinical_graph(tmp_path_factory.mktemp("graphs") / "clinical")


@pytest.fixture(scope="module")
def graph(graph_dir) -> KnowledgeGraph:
    return load_graph(graph_dir)


def make_queries(copies: int = 3) -> list[Query]:
    return [Query(f"q{i}", text, [answer]) for i, (text, answer) in enumerate(QUESTIONS * copies)]


def normalized_results(path: Path) -> list[dict]:
    """Result lines by id without their wall time (the one field that differs between two runs)."""
    rows = read_jsonl(path)
    for row in rows:
        row.pop("wall_s")
    return sorted(rows, key=lambda row: row["id"])


def normalized_trajectories(path: Path) -> str:
    """The trajectories file's records by id, timings removed."""
    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if not k.endswith("_s")}  # wall_s, latency_s, ...
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return json.dumps(sorted((strip(r) for r in read_trajectory_file(path)), key=lambda r: r["id"]), sort_keys=True)


def scripted_answers(graph: KnowledgeGraph, delay_s: float):
    """A responder: every agent adds its question's expected node, then finishes (each reply after ``delay_s``)."""
    expected = {text: graph.index_of(answer) for text, answer in QUESTIONS}

    def respond(body: dict):
        messages = body.get("messages", [])
        text = " ".join(str(m.get("content") or "") for m in messages)
        node = next(index for question, index in expected.items() if question in text)
        if any(m.get("role") == "assistant" for m in messages):
            return tool_reply(("finish", {}), delay_s=delay_s)
        return tool_reply(("add_to_answer", {"answer_nodes": [{"node_index": node}]}), delay_s=delay_s)

    return respond


UNCHECKED = {"n_agents": 2, "allow_unseen_answers": True}  # the scripted agents answer without searching


def llm_choice(server: ScriptedOpenAIServer, cache_dir: Path) -> MethodChoice:
    settings = LLMSettings(model="test-model", base_url=server.base_url, concurrency=BUDGET, cache_dir=cache_dir,
                           temperature=0.0, timeout_s=REQUEST_TIMEOUT_S)
    return MethodChoice.make("ark", UNCHECKED, MethodContext(llm=OpenAIChatClient(settings)))


def connections_to(pid: int, port: int) -> set[int]:
    """The local ports of process ``pid``'s TCP connections to ``port`` on this machine (read from Linux /proc)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:  # closed meanwhile
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for row in Path(table).read_text().splitlines()[1:]:
            fields = row.split()  # sl local_address rem_address st ... inode (the 10th)
            if fields[9] in inodes and int(fields[2].rsplit(":", 1)[1], 16) == port:
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


# -------------------------------------------------------------------------------------------------------- tests
def test_ark_eval_with_ray_writes_what_a_local_run_writes(cluster, graph_dir, tmp_path):
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(json.dumps({"id": q.id, "query": q.query, "answer_ids": q.answer_ids}) + "\n"
                               for q in make_queries()))
    common = ["eval", str(graph_dir), "-m", "ark", "--offline", "-q", str(queries), "--no-progress"]
    local = CliRunner().invoke(app, [*common, "--run-dir", str(tmp_path / "local")])
    assert local.exit_code == 0, local.output
    spread = CliRunner().invoke(app, [*common, "--run-dir", str(tmp_path / "ray"), "--ray", "local",
                                      "--ray-workers", "2"])
    assert spread.exit_code == 0, spread.output
    assert "Ray: 2 worker(s) on 1 machine(s)" in spread.stderr

    assert normalized_results(tmp_path / "ray" / "results.jsonl") == normalized_results(
        tmp_path / "local" / "results.jsonl")
    assert len(read_jsonl(tmp_path / "ray" / "results.jsonl")) == 12
    assert normalized_trajectories(tmp_path / "ray" / "trajectories.jsonl") == normalized_trajectories(
        tmp_path / "local" / "trajectories.jsonl")
    summary = [json.loads((tmp_path / run / "summary.json").read_text())["overall"] for run in ("local", "ray")]
    assert summary[0] == summary[1]


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="finds the worker's open requests in Linux /proc")
def test_a_worker_killed_mid_run_leaves_exactly_one_result_per_query_within_one_llm_budget(cluster, graph,
                                                                                          tmp_path):
    with ScriptedOpenAIServer() as server:
        server.responder = scripted_answers(graph, delay_s=0.2)
        local = run_eval(graph, llm_choice(server, tmp_path / "cache-local"), make_queries(), tmp_path / "local",
                         concurrency=4, progress=False)
        server.max_in_flight = 0
        killed: list[int] = []
        open_at_kill: list[int] = []  # the victim's requests the endpoint was working on when it was killed

        def kill_a_worker_mid_run(note: str) -> None:
            if killed or not executor.worker_info:
                return
            victim = executor.worker_info[0]["pid"]
            killed.append(victim)

            def kill_when_busy() -> None:
                deadline = time.monotonic() + 120
                while time.monotonic() < deadline:  # until the endpoint is working on one of its requests
                    mine = connections_to(victim, server.port) & server.open_request_ports()
                    if mine:
                        open_at_kill.extend(mine)
                        break
                    time.sleep(0.005)
                os.kill(victim, signal.SIGKILL)

            threading.Thread(target=kill_when_busy, daemon=True).start()

        executor = RayExecutor(llm_choice(server, tmp_path / "cache-ray"), graph=str(graph.path), workers=2,
                               concurrency=4, status=kill_a_worker_mid_run)
        spread = run_eval(graph, executor.choice, make_queries(), tmp_path / "ray", concurrency=4, progress=False,
                          executor=executor)
    assert killed and [lost["pid"] for lost in executor.lost_workers] == killed
    assert open_at_kill  # it died with requests open at the endpoint: what the budget must keep counting
    assert not spread.stats.failed and spread.stats.completed == 12
    lines = read_jsonl(spread.folder.results)
    assert sorted(line["id"] for line in lines) == sorted(q.id for q in make_queries())  # exactly one each
    assert normalized_results(spread.folder.results) == normalized_results(local.folder.results)
    assert spread.summary["overall"] == local.summary["overall"]
    assert len({info["pid"] for info in executor.worker_info}) == 3  # two workers, then one replacement
    # 2 workers x 4 queries x 2 agents want 16 requests at once; the endpoint (its own count is the oracle) never
    # sees more than its budget: the killed worker's requests stay open there after it died, so its slots stay
    # counted for the request timeout before other workers get them.
    assert server.max_in_flight == BUDGET and executor.budget_peaks == {server.base_url: BUDGET}


@pytest.mark.slow  # two runs, each starting its worker
def test_questions_that_fail_on_workers_are_not_written_and_a_rerun_completes_them(cluster, graph, tmp_path):
    with ScriptedOpenAIServer() as server:
        server.responder = lambda body: http_error(500, "the model server is down")
        settings = LLMSettings(model="test-model", base_url=server.base_url, max_retries=0, cache_dir=None)
        choice = MethodChoice.make("ark", UNCHECKED, MethodContext(llm=OpenAIChatClient(settings)))
        queries = make_queries(1)[:2]
        failed = run_eval(graph, choice, queries, tmp_path / "run", progress=False,
                          executor=RayExecutor(choice, graph=str(graph.path), workers=1))
        assert sorted(qid for qid, _ in failed.stats.failed) == ["q0", "q1"]
        assert all("HTTP 500" in error and server.base_url in error for _, error in failed.stats.failed)
        assert read_jsonl(failed.folder.results) == [] and failed.summary == {}

        server.responder = scripted_answers(graph, delay_s=0.0)  # the endpoint recovers
        rerun = run_eval(graph, choice, queries, tmp_path / "run", progress=False,
                         executor=RayExecutor(choice, graph=str(graph.path), workers=1))
    assert not rerun.stats.failed and rerun.stats.completed == 2
    assert sorted(line["id"] for line in read_jsonl(rerun.folder.results)) == ["q0", "q1"]
    assert rerun.summary["overall"]["hit@1"] == 1.0


@pytest.mark.slow  # a real process that starts its own Ray instance
def test_ctrl_c_stops_a_ray_run_and_its_ray_instance_and_a_rerun_resumes(cluster, graph_dir, tmp_path):
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(json.dumps({"id": q.id, "query": q.query, "answer_ids": q.answer_ids}) + "\n"
                               for q in make_queries(15)))
    out, ray_dir = tmp_path / "r.jsonl", Path(tempfile.mkdtemp(prefix="ark-ray-test-"))  # short socket paths
    command = ["retrieve", str(graph_dir), "-m", "ark", "--offline", "-q", str(queries), "-o", str(out),
               "--no-progress", "--ray", "local"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "RAY_TMPDIR": str(ray_dir)}
    run = subprocess.Popen([sys.executable, "-m", "ark.cli.main", *command], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.time() + 240
    while time.time() < deadline and run.poll() is None and (not out.exists() or len(read_jsonl(out)) < 3):
        time.sleep(0.1)
    os.killpg(run.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the whole foreground group
    _, stderr = run.communicate(timeout=120)
    assert run.returncode == 130, stderr
    assert stderr.strip().splitlines()[-1] == "interrupted — rerun the same command to resume"
    written = [line["id"] for line in read_jsonl(out)]
    assert 3 <= len(written) < 60 and len(set(written)) == len(written)
    time.sleep(2)  # Ray's own processes end just after the command
    ray_processes = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert str(ray_dir) not in ray_processes
    shutil.rmtree(ray_dir, ignore_errors=True)

    rerun = CliRunner().invoke(app, command)  # in-process: on this module's Ray instance
    assert rerun.exit_code == 0, rerun.output
    assert f"{60 - len(written)} new, {len(written)} already done" in rerun.stderr
    assert sorted(line["id"] for line in read_jsonl(out)) == sorted(q.id for q in make_queries(15))


def test_a_graph_that_differs_on_a_worker_is_refused_with_one_line(cluster, graph, tmp_path):
    from ark.eval.ray_runs import RayRunError

    executor = RayExecutor(MethodChoice.make("bm25"), graph=str(graph.path), fingerprint="not-this-graph",
                           workers=1)
    with pytest.raises(RayRunError, match="fingerprint"):
        run_eval(graph, executor.choice, make_queries(1), tmp_path / "run", progress=False, executor=executor)


def test_what_ray_workers_embed_is_counted_in_the_run_config(cluster, graph_dir, tmp_path):
    from tests.support.embeddings_server import EmbeddingsServer, token_count

    REMOTE = "openai:test-embedder"  # the model the loopback embeddings server serves
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(json.dumps({"id": q.id, "query": q.query, "answer_ids": q.answer_ids}) + "\n"
                               for q in make_queries(copies=1)))
    with EmbeddingsServer() as server:
        spread = CliRunner().invoke(app, ["eval", str(graph_dir), "-m", "dense", "--set", f"embedder={REMOTE}",
                                          "--set", f"embedder_base_url={server.base_url}", "-q", str(queries),
                                          "--no-progress", "--run-dir", str(tmp_path / "ray"), "--ray", "local",
                                          "--ray-workers", "2"])
        sent = [text for request in server.requests for text in request["input"]]
    assert spread.exit_code == 0, spread.output
    assert {text for text, _ in QUESTIONS} <= set(sent)  # the workers embedded the questions
    config = json.loads((tmp_path / "ray" / "config.json").read_text())
    assert config["embedding_usage"] == {REMOTE: {"texts": len(sent), "tokens": sum(map(token_count, sent)),
                                                  "counted_by": "endpoint"}}


def test_ray_workers_run_on_the_newest_version_and_lines_name_it(cluster, tmp_path):
    from ark.graph.versioning import open_version
    from tests.eval.test_eval_versions import NEW_NODE, write_update

    folder = save_clinical_graph(tmp_path / "clinical")
    driver = load_graph(folder)
    nodes, delete, gone = write_update(tmp_path, driver)
    assert CliRunner().invoke(app, ["graph", "update", str(folder), "--nodes", str(nodes), "--delete",
                                    str(delete)]).exit_code == 0  # after the driver opened version 0
    choice = MethodChoice.make("bm25")
    executor = RayExecutor(choice, graph=str(folder), path=str(folder),
                           fingerprint=driver.metadata["fingerprint"], workers=1)
    queries = [Query("q0", "Glimmer syndrome", [NEW_NODE]), *make_queries(1)]
    outcome = run_eval(driver, choice, queries, tmp_path / "run", progress=False, executor=executor)
    assert not outcome.stats.failed
    rows = read_jsonl(tmp_path / "run" / "results.jsonl")
    assert {row["graph_version"] for row in rows} == {1}
    assert next(row for row in rows if row["id"] == "q0")["ranked"][0] == NEW_NODE
    newest = open_version(folder, 1)
    assert all(newest.has_node(node) for row in rows for node in row["ranked"]) and gone not in str(rows)
