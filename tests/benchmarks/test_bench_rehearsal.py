"""The size rehearsal (benchmarks/bench_rehearsal.py) at a small scale: its generators write files the real
importers read, and one run prints the stages side by side and the extrapolation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.synthetic_rehearsal import PRIME_TYPES, write_grbench, write_prime

REPO = Path(__file__).parents[2]


def test_prime_generator_writes_starks_processed_layout_at_scale(tmp_path):
    pytest.importorskip("torch", reason="STaRK .pt files need torch (the 'stark' extra)")
    from ark.loaders.stark import load_stark_skb

    counts = write_prime(tmp_path, scale=0.01)
    graph = load_stark_skb("prime", tmp_path)
    assert graph.num_nodes == counts["nodes"] == sum(max(2, round(n * 0.01)) for n in PRIME_TYPES.values())
    assert set(graph.node_types) == set(PRIME_TYPES)
    assert len(graph.text(graph.nodes_of_type("disease")[0]).split()) > 200  # PRIME's long texts


@pytest.mark.parametrize("shape", ["amazon", "legal"])
def test_grbench_generator_writes_a_graph_the_streaming_importer_reads(tmp_path, shape):
    pytest.importorskip("ijson")
    from ark.graph import KnowledgeGraph
    from ark.loaders.grbench_import import stream_import_grbench

    counts = write_grbench(tmp_path / "src", shape, scale=0.0002)
    graph = KnowledgeGraph.load(stream_import_grbench(tmp_path / "src", tmp_path / "graph"))
    assert graph.num_nodes == counts["nodes"]
    assert graph.metadata["dropped_edges"] == 0  # every neighbour id names a node
    assert graph.type_counts() == counts["types"]


def test_rehearsal_prints_stages_side_by_side_and_the_extrapolation(tmp_path):
    pytest.importorskip("ijson")
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_rehearsal.py"), "--runs",
                           "amazon:0.0002,amazon:0.0004", "--stages", "generate,import,bm25,search", "--calls", "10",
                           "--workdir", str(tmp_path / "work"), "--keep", "--heavy-nice", "0"],
                          cwd=REPO, capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    table = done.stdout.split("== stages side by side", 1)[1]
    for scale in ("0.0002", "0.0004"):
        for stage in ("generate", "import", "bm25", "search"):
            assert f"amazon:{scale}" in table and stage in table
    assert "search_in_graph: a node's name, size 20" in table
    extrapolated = done.stdout.split("== EXTRAPOLATED", 1)[1]
    assert "313,000,000" in extrapolated and "not measured" in extrapolated
    runs = json.loads((tmp_path / "work" / "summary.json").read_text())["runs"]
    imports = [r for r in runs if r["stage"] == "import"]
    assert all(r["peak_added_disk_gb"] >= r["disk_gb"] > 0 for r in imports)  # the graph, scratch files included


@pytest.mark.slow
def test_rehearsal_asks_one_question_per_template_with_both_offline_methods(tmp_path):
    pytest.importorskip("ijson")
    pytest.importorskip("ladybug", reason="GraphScout's Cypher needs the graphdb extra")
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_rehearsal.py"), "--runs", "amazon:0.0003",
                           "--stages", "generate,import,bm25,cypher,questions", "--questions", "20", "--workdir",
                           str(tmp_path / "work"), "--keep", "--heavy-nice", "0"],
                          cwd=REPO, capture_output=True, text=True, timeout=600, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    stage = json.loads((tmp_path / "work" / "amazon-0.0003" / "questions.json").read_text())
    assert len(stage["templates"]) >= 3 and stage["ark"]["questions"] == stage["graphscout"]["questions"]
    assert "one quiz question per template" in done.stdout
