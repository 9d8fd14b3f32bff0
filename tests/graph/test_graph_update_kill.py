"""kill -9 of a process updating and compacting a graph in a loop, at random points: the graph opens at a version
the manifest names, with that version's content (fingerprint), its files verify, and the next update works."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ark.graph import KnowledgeGraph
from ark.graph.storage import verify_graph
from ark.graph.versions import read_manifest, update_graph
from tests.graph.update_model import ContentModel, random_delta
from tests.support.graphs import save_clinical_graph

KILLS = 6
UPDATER = """
import random, sys
from pathlib import Path
from ark.graph import KnowledgeGraph
from ark.graph.versions import compact_graph, update_graph
from ark.index import open_index
from tests.graph.update_model import ContentModel, random_delta
folder, seed = Path(sys.argv[1]), int(sys.argv[2])
rng = random.Random(seed)
print("ready", flush=True)
for step in range(10_000):
    graph = KnowledgeGraph.load(folder)
    graph = update_graph(folder, random_delta(ContentModel(graph), rng, step), current=graph)
    open_index(graph, "bm25", progress=False)
    if rng.random() < 0.3:
        compact_graph(folder)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs kill -9")
def test_kill_9_during_updates_and_compaction_leaves_a_whole_version(tmp_path: Path) -> None:
    folder = save_clinical_graph(tmp_path / "clinical")
    rng = random.Random(7)
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    seen: set[int] = set()
    for kill in range(KILLS):
        child = subprocess.Popen([sys.executable, "-c", UPDATER, str(folder), str(kill)], stdout=subprocess.PIPE,
                                 text=True, env=env, cwd=root)
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.2, 2.5))
        child.send_signal(signal.SIGKILL)
        child.wait()
        graph = KnowledgeGraph.load(folder)
        manifest = read_manifest(folder)
        if manifest is None:  # killed before the first update landed
            continue
        assert graph.metadata["graph_version"] == manifest["current"]
        recorded = [h["fingerprint"] for h in manifest["history"] if h["version"] == manifest["current"]]
        assert graph.metadata["fingerprint"] == recorded[-1]
        verify_graph(folder)
        seen.add(manifest["current"])
    assert len(seen) >= 2, f"the updater was killed before any update landed: {seen}"
    graph = KnowledgeGraph.load(folder)
    after = update_graph(folder, random_delta(ContentModel(graph), rng, 99), current=graph)
    assert after.metadata["graph_version"] == graph.metadata.get("graph_version", 0) + 1
