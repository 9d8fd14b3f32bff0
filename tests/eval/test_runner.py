"""Resumable retrieval runs: torn lines, interrupted and killed runs, failures, trajectories kept in step."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ark.eval.runner import run_retrieval
from ark.graph import EdgeTable, NodeTable, build_graph
from ark.loaders.queries import Query
from ark.methods.base import MethodOutput, Retriever
from ark.runtime.records import Trajectory
from ark.storage.jsonl import read_jsonl

ROOT = Path(__file__).resolve().parents[2]


def tiny_graph():
    ids = [f"N:{i}" for i in range(10)]
    nodes = NodeTable(ids=ids, types=["disease"] * 10, names=[f"node {i}" for i in range(10)])
    edges = EdgeTable(sources=["N:0"], targets=["N:1"], relations=["related"])
    return build_graph(nodes, edges, metadata={"name": "tiny"})


QUERIES = [Query(id=f"q{i}", query=f"question {i}", answer_ids=[f"N:{i}"]) for i in range(10)]


class EchoRetriever(Retriever):
    """Returns node i for query i, then the others; remembers which queries it was asked."""

    def __init__(self, fail_on: set[str] = frozenset(), interrupt_after: int | None = None) -> None:
        self.asked: list[str] = []
        self.fail_on = fail_on
        self.interrupt_after = interrupt_after

    def retrieve(self, query: str, k: int) -> MethodOutput:
        if self.interrupt_after is not None and len(self.asked) == self.interrupt_after:
            raise KeyboardInterrupt
        self.asked.append(query)
        if query in self.fail_on:
            raise RuntimeError("backend down")
        i = int(query.split()[-1])
        order = [i] + [j for j in range(10) if j != i]
        return MethodOutput(order[:k], [float(10 - r) for r in range(len(order[:k]))])


def ids_in(path: Path) -> list[str]:
    return [r["id"] for r in read_jsonl(path, repair=False)]


def test_writes_one_line_per_query_with_node_ids(tmp_path):
    out = tmp_path / "results.jsonl"
    stats = run_retrieval(EchoRetriever(), QUERIES, tiny_graph(), out, k=3, progress=False)
    assert stats.finished and stats.completed == 10
    first = json.loads(out.read_text().splitlines()[0])
    assert first["id"] == "q0" and first["ranked"] == ["N:0", "N:1", "N:2"] and first["scores"] == [10, 9, 8]


def test_torn_last_line_is_cut_and_redone(tmp_path):
    out = tmp_path / "results.jsonl"
    run_retrieval(EchoRetriever(), QUERIES[:4], tiny_graph(), out, progress=False)
    with out.open("a") as handle:
        handle.write('{"id": "q4", "ranked": ["N:4", "N:')  # a write cut off by a crash
    retriever = EchoRetriever()
    stats = run_retrieval(retriever, QUERIES, tiny_graph(), out, progress=False)
    assert stats.already_done == 4
    assert retriever.asked == [f"question {i}" for i in range(4, 10)]
    assert sorted(ids_in(out)) == sorted(q.id for q in QUERIES)


def test_interrupted_run_resumes_without_losing_or_duplicating(tmp_path):
    out = tmp_path / "results.jsonl"
    with pytest.raises(KeyboardInterrupt):
        run_retrieval(EchoRetriever(interrupt_after=6), QUERIES, tiny_graph(), out, progress=False)
    assert len(ids_in(out)) == 6
    run_retrieval(EchoRetriever(), QUERIES, tiny_graph(), out, progress=False)
    assert sorted(ids_in(out)) == sorted(q.id for q in QUERIES)


def test_killed_process_resumes_to_exactly_one_line_per_query(tmp_path):
    out = tmp_path / "results.jsonl"
    script = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(ROOT)!r}); sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_runner import QUERIES, EchoRetriever, tiny_graph
        from ark.eval.runner import run_retrieval

        class Slow(EchoRetriever):
            def retrieve(self, query, k):
                time.sleep(0.05)
                return super().retrieve(query, k)

        queries = [type(q)(id=f"{{q.id}}-{{n}}", query=q.query, answer_ids=q.answer_ids)
                   for n in range(20) for q in QUERIES]
        run_retrieval(Slow(), queries, tiny_graph(), {str(out)!r}, progress=False)
    """)
    process = subprocess.Popen([sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.time() + 20
    while time.time() < deadline and (not out.exists() or len(out.read_bytes().splitlines()) < 10):
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait()
    done_before = len(ids_in(out))
    assert 10 <= done_before < 200
    queries = [Query(id=f"{q.id}-{n}", query=q.query, answer_ids=q.answer_ids) for n in range(20) for q in QUERIES]
    stats = run_retrieval(EchoRetriever(), queries, tiny_graph(), out, progress=False)
    assert stats.already_done == done_before
    lines = ids_in(out)
    assert len(lines) == len(set(lines)) == 200


def test_failed_queries_are_not_written_and_retried_on_rerun(tmp_path):
    out = tmp_path / "results.jsonl"
    stats = run_retrieval(EchoRetriever(fail_on={"question 3"}), QUERIES, tiny_graph(), out, progress=False)
    assert [qid for qid, _ in stats.failed] == ["q3"] and not stats.finished
    assert "q3" not in ids_in(out)
    retriever = EchoRetriever()
    assert run_retrieval(retriever, QUERIES, tiny_graph(), out, progress=False).finished
    assert retriever.asked == ["question 3"]


class AsyncAgent(Retriever):
    """An async method with trajectories; tracks how many queries run at once."""

    def __init__(self) -> None:
        self.running = 0
        self.peak = 0

    async def aretrieve(self, query: str, k: int) -> MethodOutput:
        import asyncio

        self.running += 1
        self.peak = max(self.peak, self.running)
        await asyncio.sleep(0.01)
        self.running -= 1
        i = int(query.split()[-1])
        return MethodOutput([i], [1.0], trajectories=[Trajectory(query)])


def test_async_methods_run_concurrently_and_keep_trajectories_in_step(tmp_path):
    out, traj = tmp_path / "results.jsonl", tmp_path / "trajectories.jsonl"
    agent = AsyncAgent()
    run_retrieval(agent, QUERIES[:6], tiny_graph(), out, trajectories_path=traj, concurrency=3, progress=False)
    assert 1 < agent.peak <= 3
    # a crash between the trajectory line and the results line leaves an orphan trajectory
    with traj.open("a") as handle:
        handle.write(json.dumps({"id": "q6", "trajectories": []}) + "\n")
    run_retrieval(AsyncAgent(), QUERIES, tiny_graph(), out, trajectories_path=traj, concurrency=3, progress=False)
    assert sorted(ids_in(traj)) == sorted(ids_in(out)) == sorted(q.id for q in QUERIES)


class FailingAgent(Retriever):
    """An async method whose model endpoint is down: every query raises."""

    def __init__(self) -> None:
        self.asked = 0

    async def aretrieve(self, query: str, k: int) -> MethodOutput:
        self.asked += 1
        raise RuntimeError("chat request to http://127.0.0.1:9/v1 failed with HTTP 500")


@pytest.mark.parametrize("method", [EchoRetriever(fail_on={f"question {i}" for i in range(10)}), FailingAgent()])
def test_a_run_whose_queries_keep_failing_stops_early_and_writes_nothing(tmp_path, method):
    out = tmp_path / "results.jsonl"
    stats = run_retrieval(method, QUERIES, tiny_graph(), out, progress=False, concurrency=2,
                          max_consecutive_failures=3)
    assert stats.stopped == "stopped after 3 queries in a row failed" and len(stats.failed) == 3
    assert stats.completed == 0 and ids_in(out) == []
    assert "HTTP 500" in stats.failed[0][1] or "backend down" in stats.failed[0][1]


class PartialAgent(AsyncAgent):
    async def aretrieve(self, query: str, k: int) -> MethodOutput:
        output = await super().aretrieve(query, k)
        output.partial = "1 of 3 agents failed: agent 2: LLMError: down"
        return output


def test_partial_outputs_are_written_and_marked(tmp_path):
    out = tmp_path / "results.jsonl"
    stats = run_retrieval(PartialAgent(), QUERIES[:2], tiny_graph(), out, progress=False)
    assert sorted(stats.partial) == ["q0", "q1"]
    assert all(r["partial"].startswith("1 of 3 agents failed") for r in read_jsonl(out))


def test_a_trajectories_file_in_use_by_another_process_is_refused(tmp_path):
    from ark.storage.locks import OutputLocked

    traj = tmp_path / "shared.trajectories.jsonl"
    script = (f"import time; from ark.storage.locks import output_lock\n"
              f"with output_lock({str(traj)!r}):\n    print('held', flush=True); time.sleep(60)\n")
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert child.stdout.readline().strip() == "held"
        with pytest.raises(OutputLocked, match="trajectories file"):
            run_retrieval(AsyncAgent(), QUERIES, tiny_graph(), tmp_path / "other.jsonl", trajectories_path=traj,
                          progress=False)
    finally:
        child.kill()
        child.wait()
    assert not (tmp_path / "other.jsonl").exists() and not traj.exists()
