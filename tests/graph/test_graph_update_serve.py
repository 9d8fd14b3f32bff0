"""A server's questions while the graph is updated in a loop: each answer comes whole from one version (every
ranked node is that version's), newer versions are picked up between questions, and nothing fails."""

from __future__ import annotations

import asyncio
import random
import threading
from pathlib import Path

from ark.graph import load_graph
from ark.graph.versioning import open_version, update_graph
from ark.index import open_index
from ark.serve.questions import ModelSettings, QuestionService
from tests.graph.update_model import ContentModel, random_delta
from tests.support.graphs import save_clinical_graph

UPDATES = 12
QUESTIONS = ("Marfan syndrome", "seizure", "tall stature", "lens dislocation", "FBN1 gene")


def test_answers_come_from_one_version_while_updates_run(tmp_path: Path) -> None:
    folder = save_clinical_graph(tmp_path / "clinical")
    service = QuestionService(load_graph(folder), ModelSettings(offline=True))
    stop = threading.Event()
    errors: list[BaseException] = []

    def updater() -> None:
        rng, graph = random.Random(3), load_graph(folder)
        try:
            for step in range(1, UPDATES + 1):
                if stop.wait(0.05):
                    return
                graph = update_graph(folder, random_delta(ContentModel(graph), rng, step), current=graph)
                open_index(graph, "bm25", progress=False)  # as ark graph update does
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    async def ask_many() -> list[dict]:
        answers = []
        for k in range(25):
            for method in ("bm25", "ark"):
                answers.append(await service.ask(QUESTIONS[k % len(QUESTIONS)], method, top=10))
        return answers

    thread = threading.Thread(target=updater)
    thread.start()
    try:
        answers = asyncio.run(ask_many())
    finally:
        stop.set()
        thread.join()
    assert not errors, errors
    versions = [a["graph_version"] for a in answers]
    assert versions == sorted(versions) and len(set(versions)) >= 2, versions
    for answer in answers:
        graph = open_version(folder, answer["graph_version"])
        for row in answer["ranked"]:
            assert graph.node_id(row["index"]) == row["id"] and graph.name(row["index"]) == row["name"]
