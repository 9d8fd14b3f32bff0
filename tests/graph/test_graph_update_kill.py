"""kill -9 of a process updating and compacting a graph in a loop, at 20 random points, half of them inside an update
(the delta, the manifest, the BM25 segment) and half inside a compaction: after each, the graph opens at a version the
manifest names, with that version's content (fingerprint), its files verify, and the next update works.

The updater is a fork of the test process (no interpreter start-up per kill, so 20 kills take seconds); it writes
one byte before and after each operation (``u``/``U`` update, ``c``/``C`` compaction) to a pipe, so the test kills
it a random fraction of the way through the operation it aims at, timed by the operations seen before. With the
embedded Cypher engine installed, an update also makes the new version's Cypher database (from the previous
version's), and after each kill the version's database verifies and answers with the version's nodes."""

from __future__ import annotations

import importlib.util
import os
import random
import signal
import statistics
import time
from pathlib import Path

import pytest

from ark.graph import load_graph, verify_graph
from ark.graph.versioning import compact_graph, read_manifest, recompute_fingerprint, update_graph
from ark.index import open_index
from tests.graph.update_model import ContentModel, random_delta
from tests.support.graphs import save_clinical_graph

KILLS = 20
CYPHER = importlib.util.find_spec("ladybug") is not None


def _updater(folder: Path, seed: int, marks: int) -> None:
    """Update and compact ``folder`` forever, marking each operation's start and end on file descriptor ``marks``."""
    rng = random.Random(seed)
    for step in range(10_000):
        graph = load_graph(folder)
        os.write(marks, b"u")
        graph = update_graph(folder, random_delta(ContentModel(graph), rng, 1000 * seed + step), current=graph)
        open_index(graph, "bm25", progress=False)
        if CYPHER:
            from ark.graphdb.versioned import database_after_update

            database_after_update(graph)
        os.write(marks, b"U")
        if rng.random() < 0.5:
            os.write(marks, b"c")
            compact_graph(folder)
            os.write(marks, b"C")


def _kill_once(folder: Path, seed: int, target: bytes, fraction: float, took: dict[bytes, list[float]]) -> bool:
    """Run the updater until it starts a ``target`` operation (once one was timed), kill -9 it ``fraction`` of that
    operation's typical time in; whether it was still inside the operation."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the updater: never returns into pytest
        os.close(read_end)
        try:
            _updater(folder, seed, write_end)
        except BaseException:
            import traceback

            traceback.print_exc()
        finally:
            os._exit(1)  # only a kill should end it
    os.close(write_end)
    started: dict[bytes, float] = {}
    try:
        while (mark := os.read(read_end, 1)) != b"":
            now = time.perf_counter()
            if mark.islower():
                started[mark] = now
                if mark == target and took[target]:
                    time.sleep(fraction * statistics.median(took[target]))
                    os.kill(pid, signal.SIGKILL)
                    break
            else:
                took[mark.lower()].append(now - started[mark.lower()])
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, "the updater failed (see stderr)"
        return target.upper() not in os.read(read_end, 64)
    finally:
        os.close(read_end)


def _check_whole_version(folder: Path) -> int | None:
    graph = load_graph(folder)
    manifest = read_manifest(folder)
    if manifest is None:  # killed before the first update landed
        return None
    assert graph.info.version == manifest.current
    recorded, recomputed = recompute_fingerprint(folder)  # the content hashed from scratch
    assert graph.metadata["fingerprint"] == recorded == recomputed
    verify_graph(folder)
    if CYPHER:
        from ark.graphdb.export import ladybug_database
        from ark.graphdb.ladybug_engine import LadybugEngine
        from ark.graphdb.versioned import verify_databases

        verify_databases(folder)
        with LadybugEngine(ladybug_database(graph).path) as engine:  # the version's, whole (or made now)
            assert engine.query("MATCH (n) RETURN count(n)").rows == [[graph.num_nodes]]
    return manifest.current


@pytest.mark.heavy
@pytest.mark.skipif(not hasattr(signal, "SIGKILL") or not hasattr(os, "fork"), reason="needs kill -9 and fork")
def test_kill_9_during_updates_and_compaction_leaves_a_whole_version(tmp_path: Path) -> None:
    folder = save_clinical_graph(tmp_path / "clinical")
    if CYPHER:
        from ark.graphdb.export import ladybug_database

        ladybug_database(load_graph(folder))  # each update makes its version's from the previous one
    rng = random.Random(7)
    took: dict[bytes, list[float]] = {b"u": [], b"c": []}
    inside = {b"u": 0, b"c": 0}
    versions = set()
    for kill in range(KILLS):
        target = (b"u", b"c")[kill % 2]
        inside[target] += _kill_once(folder, kill, target, rng.random(), took)
        versions.add(_check_whole_version(folder))
    assert len(versions - {None}) >= 5, versions
    assert inside[b"u"] >= 3 and inside[b"c"] >= 3, f"kills inside an operation: {inside}"
    graph = load_graph(folder)
    after = update_graph(folder, random_delta(ContentModel(graph), rng, 99), current=graph)
    assert after.metadata["graph_version"] == graph.metadata.get("graph_version", 0) + 1
