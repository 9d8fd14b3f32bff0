"""An ``ark eval`` while the graph is updated: each question runs on one version, an update made during a question is
picked up by the next, every results line names the version it ran on when that is not the run's start version, and
a run resumed after its graph moved on is refused naming both versions (or resumed with --allow-new-version)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ark.eval.following import FollowedMethod
from ark.graph import KnowledgeGraph, load_graph
from ark.graph.versioning import open_version
from ark.runtime.trajectory_file import read_trajectory_file
from ark.storage.jsonl import read_jsonl
from tests.support.graphs import BROAD, ONE_HOP, SHARED_FINDINGS, TWO_HOP, save_clinical_graph
from tests.support.openai_server import ScriptedOpenAIServer, tool_reply

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = [ONE_HOP, TWO_HOP, SHARED_FINDINGS, BROAD]
NEW_NODE = "X:GLIMMER"


def ark(*args: object) -> subprocess.CompletedProcess:
    """The real ``ark`` command in a child process (this checkout's package)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_API_KEY": "test-key", "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "ark.cli.main", *map(str, args)], env=env, capture_output=True,
                          text=True, timeout=300)


def write_update(tmp_path: Path, graph: KnowledgeGraph) -> tuple[Path, Path, str]:
    """An update that adds a node and deletes the graph's first node (so every later node's index moves down)."""
    nodes = tmp_path / "new.csv"
    nodes.write_text(f"id,name,type\n{NEW_NODE},Glimmer syndrome,disease\n", encoding="utf-8")
    gone = graph.node_id(0)
    delete = tmp_path / "gone.txt"
    delete.write_text(gone + "\n", encoding="utf-8")
    return nodes, delete, gone


def test_an_update_during_an_eval_is_picked_up_between_questions_each_line_on_one_version(tmp_path: Path) -> None:
    folder = save_clinical_graph(tmp_path / "clinical")
    v0 = load_graph(folder)
    nodes, delete, gone = write_update(tmp_path, v0)
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(json.dumps({"id": f"q{i}", "query": text, "answer_ids": [answer]}) + "\n"
                               for i, (text, answer) in enumerate(QUESTIONS)), encoding="utf-8")
    updates: list[subprocess.CompletedProcess] = []

    def respond(body: dict):
        """The first question's first turn applies the update (the question is then in flight on version 0) and
        adds version 0's first node; a later question adds its answer and the new node by the newest version's
        indices. Each agent finishes on its second turn."""
        messages = body["messages"]
        text = " ".join(str(m.get("content") or "") for m in messages)
        if any(m.get("role") == "assistant" for m in messages):
            return tool_reply(("finish", {}))
        question = next(i for i, (q, _) in enumerate(QUESTIONS) if q in text)
        if question == 0:
            updates.append(ark("graph", "update", folder, "--nodes", nodes, "--delete", delete))
            picks = [0, v0.index_of(QUESTIONS[0][1])]
        else:
            newest = load_graph(folder)
            picks = [newest.index_of(QUESTIONS[question][1]), newest.index_of(NEW_NODE)]
        return tool_reply(("add_to_answer", {"answer_nodes": [{"node_index": i} for i in picks]}))

    run = tmp_path / "run"
    with ScriptedOpenAIServer() as server:
        server.responder = respond
        done = ark("eval", folder, "-m", "ark", "--set", "n_agents=1", "--set", "allow_unseen_answers=true",
                   "--base-url", server.base_url, "--model", "test-model", "-q", queries, "--run-dir", run,
                   "--concurrency", "1", "--no-progress")  # the scripted agent answers by index, unseen
    assert updates and updates[0].returncode == 0, updates and updates[0].stderr
    assert done.returncode == 0, done.stderr

    assert json.loads((run / "config.json").read_text())["graph_version"] is None  # started before any update
    rows = {row["id"]: row for row in read_jsonl(run / "results.jsonl")}
    assert "graph_version" not in rows["q0"]  # the question in flight during the update finished on version 0
    assert gone in rows["q0"]["ranked"] and QUESTIONS[0][1] in rows["q0"]["ranked"]
    v1 = open_version(folder, 1)
    for i in (1, 2, 3):
        assert rows[f"q{i}"]["graph_version"] == 1
        assert {QUESTIONS[i][1], NEW_NODE} <= set(rows[f"q{i}"]["ranked"])
    for row in rows.values():  # no line mixes versions: every ranked node is one of its version's
        graph = v1 if row.get("graph_version") == 1 else v0
        assert all(graph.has_node(node) for node in row["ranked"]), row
    trajectories = read_trajectory_file(run / "trajectories.jsonl")
    versions = {record["id"]: record.get("graph_version") for record in trajectories}
    assert versions == {"q0": None, "q1": 1, "q2": 1, "q3": 1}


def test_a_run_resumed_after_its_graph_moved_on_is_refused_naming_both_versions(tmp_path: Path) -> None:
    folder = save_clinical_graph(tmp_path / "clinical")
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(json.dumps({"id": f"q{i}", "query": text, "answer_ids": [answer]}) + "\n"
                               for i, (text, answer) in enumerate(QUESTIONS)), encoding="utf-8")
    run, out = tmp_path / "run", tmp_path / "retrieved.jsonl"
    assert ark("eval", folder, "-m", "bm25", "-q", queries, "--limit", 1, "--run-dir", run,
               "--no-progress").returncode == 0
    assert ark("retrieve", folder, "-m", "bm25", "-q", queries, "--limit", 1, "-o", out,
               "--no-progress").returncode == 0
    nodes, delete, gone = write_update(tmp_path, load_graph(folder))
    assert ark("graph", "update", folder, "--nodes", nodes, "--delete", delete).returncode == 0

    refused = ark("retrieve", folder, "-m", "bm25", "-q", queries, "-o", out, "--no-progress")
    assert refused.returncode == 2 and "--allow-new-version" in refused.stderr, refused.stderr
    resumed = ark("retrieve", folder, "-m", "bm25", "-q", queries, "-o", out, "--no-progress", "--allow-new-version")
    assert resumed.returncode == 0, resumed.stderr
    assert [row.get("graph_version") for row in read_jsonl(out)] == [None, 1, 1, 1]

    refused = ark("eval", folder, "-m", "bm25", "-q", queries, "--run-dir", run, "--no-progress")
    message = " ".join(refused.stderr.split())
    assert refused.returncode == 2, refused.stderr
    assert "version 0" in message and "version 1" in message and "--allow-new-version" in message
    assert len(read_jsonl(run / "results.jsonl")) == 1  # nothing written

    resumed = ark("eval", folder, "-m", "bm25", "-q", queries, "--run-dir", run, "--no-progress",
                  "--allow-new-version")
    assert resumed.returncode == 0, resumed.stderr
    rows = {row["id"]: row for row in read_jsonl(run / "results.jsonl")}
    assert "graph_version" not in rows["q0"] and all(rows[f"q{i}"]["graph_version"] == 1 for i in (1, 2, 3))
    assert json.loads((run / "config.json").read_text())["graph_version"] is None  # the version the run started on
    assert all(gone not in rows[f"q{i}"]["ranked"] for i in (1, 2, 3))


class Counting:
    """A method that names the graph it was built on in each output's first node."""

    concurrent = False

    def __init__(self, graph: KnowledgeGraph) -> None:
        self.graph = graph

    def retrieve(self, text: str, k: int):
        from ark.methods.base import MethodOutput

        return MethodOutput(indices=[self.graph.num_nodes - 1], scores=[1.0])


def test_a_method_that_fails_to_build_on_a_new_version_fails_that_question_and_the_next_tries_again(
        tmp_path: Path) -> None:
    folder = save_clinical_graph(tmp_path / "clinical")
    v0 = load_graph(folder)
    builds = {"fail": True}

    def build(graph: KnowledgeGraph):
        if builds.pop("fail", False):
            raise RuntimeError("index build failed")
        return Counting(graph)

    followed = FollowedMethod(v0, Counting(v0), build)
    nodes, delete, _ = write_update(tmp_path, v0)
    assert ark("graph", "update", folder, "--nodes", nodes, "--delete", delete).returncode == 0
    try:
        followed.retrieve("q", 1)
        raise AssertionError("the failed build was not reported")
    except RuntimeError as error:
        assert "index build failed" in str(error)
    output, graph = followed.retrieve("q", 1)
    assert graph is not None and graph.metadata["graph_version"] == 1 and graph.node_id(output.indices[0]) == NEW_NODE
