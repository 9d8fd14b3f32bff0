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
    from ark.graph import load_graph
    from ark.loaders.grbench_import import stream_import_grbench

    counts = write_grbench(tmp_path / "src", shape, scale=0.0002)
    graph = load_graph(stream_import_grbench(tmp_path / "src", tmp_path / "graph"))
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
    projected = done.stdout.split("== PROJECTED amazon at 9,000,000 nodes / 313,000,000 edges", 1)[1]
    assert "not measured at this size" in projected
    for stage in ("generate", "import", "bm25", "search"):
        assert f"\n{stage} " in projected
    assert "GB of source file" in projected and "GB of node text" in projected  # the rates it used
    summary = json.loads((tmp_path / "work" / "summary.json").read_text())
    imports = [r for r in summary["runs"] if r["stage"] == "import"]
    assert all(r["peak_added_disk_gb"] >= r["disk_gb"] > 0 for r in imports)  # the graph, scratch files included
    assert all(r["text_bytes"] > 0 for r in imports)
    assert {r["from"] for r in summary["projected"]["amazon"]} == {"amazon:0.0004"}  # the largest run's rates
    again = subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_rehearsal.py"), "--runs", "",
                            "--measured", str(tmp_path / "work" / "summary.json")],
                           cwd=REPO, capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert again.returncode == 0, again.stderr
    assert again.stdout.split("== PROJECTED", 1)[1] == done.stdout.split("== PROJECTED", 1)[1]  # from the records


def _records(fmt, scale, nodes, source_bytes, text_bytes, **stages):
    """Stage records as run_stage writes them: generate's counts, import's text bytes, the figures per stage."""
    records = [{"format": fmt, "scale": scale, "stage": "generate", "nodes": nodes, "neighbor_entries": 2 * nodes,
                "bytes": source_bytes, "cpu_s": 1.0, "peak_rss_gb": 0.05, "disk_gb": source_bytes / 1e9}]
    for stage, (cpu_s, rss, disk) in stages.items():
        records.append({"format": fmt, "scale": scale, "stage": stage, "cpu_s": cpu_s, "peak_rss_gb": rss,
                        "disk_gb": disk, "peak_added_disk_gb": disk, "text_bytes": text_bytes})
    return records


def test_projection_scales_cpu_and_disk_by_the_largest_runs_rates_and_memory_by_its_line(monkeypatch):
    from benchmarks.rehearsal_extrapolate import MACHINE, project

    small = _records("legal", 0.01, 1_000_000, 500e6, 200e6, **{"import": (10.0, 0.5, 1.0), "bm25": (20.0, 1.0, 0.4)})
    large = _records("legal", 0.02, 2_000_000, 1e9, 400e6, **{"import": (30.0, 0.7, 2.0), "bm25": (40.0, 1.4, 0.8)})
    rows = {r["stage"]: r for r in project([large, small], nodes=20_000_000, edges=40_000_000)}
    assert rows["import"]["from"] == "legal:0.02"
    assert rows["import"]["cpu_s"] == pytest.approx(300.0)  # 30 CPU-s a GB of source, 10 GB at the target
    assert rows["import"]["disk_gb"] == pytest.approx(20.0)
    assert rows["import"]["peak_rss_gb"] == pytest.approx(0.7 + 0.2 * 18)  # the line through 1M and 2M nodes
    assert rows["bm25"]["cpu_s"] == pytest.approx(400.0)  # per byte of node text, 4 GB at the target
    assert rows["bm25"]["peak_rss_gb"] == pytest.approx(1.4 + 2 * 3.6)  # 0.4 GB more per 0.2 GB of text
    assert rows["bm25"]["fits"] == "yes"
    assert rows["bm25"]["disk_peak_gb"] == pytest.approx(10.0 + 20.0 + 8.0)  # source + graph + the index
    bigger = {r["stage"]: r for r in project([large, small], nodes=40_000_000, edges=80_000_000)}
    assert bigger["bm25"]["disk_peak_gb"] == pytest.approx(20.0 + 40.0 + 16.0)
    assert bigger["bm25"]["fits"] == "no: disk 76 GB > 64"
    assert bigger["bm25"]["peak_rss_gb"] == pytest.approx(1.4 + 2 * 7.6)
    monkeypatch.setitem(MACHINE, "disk_gb", 100.0)
    roomier = {r["stage"]: r for r in project([large, small], nodes=40_000_000, edges=80_000_000)}
    assert roomier["bm25"]["fits"] == "yes, over the 16 GB goal"  # 16.6 GB: fits 24 GB, not the goal
    huge = {r["stage"]: r for r in project([large], nodes=400_000_000, edges=800_000_000)}
    assert huge["bm25"]["peak_rss_gb"] == pytest.approx(1.4 * 200)  # one run: in proportion, an upper bound
    assert huge["bm25"]["fits"].startswith("no: memory 280 GB > 24, disk")


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
