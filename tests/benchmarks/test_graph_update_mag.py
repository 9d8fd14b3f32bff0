"""benchmarks/graph_update.py --graph mag at a tiny scale: the drawn changes form a valid update, and a whole run
prints the update against its target, search latency with 0, 1 and 10 deltas and compaction."""

from __future__ import annotations

import argparse
import random
from pathlib import Path

from ark.graph import load_graph
from ark.graph.versioning import update_graph, version_history
from benchmarks.graph_update_mag import MIX, linked_copy, mag_graph, make_mag_delta, run_mag

SCALE = 0.0005  # 350 papers, 552 authors, 4 institutions, 30 fields, ~10k edges


def test_drawn_changes_are_one_valid_update_in_the_mix(tmp_path: Path) -> None:
    pristine = mag_graph(tmp_path / "work", SCALE, 1)
    folder = tmp_path / "copy"
    linked_copy(pristine, folder)
    base = load_graph(folder)
    delta = make_mag_delta(base, random.Random(0), 400, "t")
    counts = delta.counts()
    assert sum(counts.values()) == 400
    assert counts["nodes_upserted"] == round(400 * (MIX["changed"] + MIX["new"]))
    assert counts["nodes_deleted"] == counts["edges_removed"] == 20
    updated = update_graph(folder, delta)
    assert updated.num_nodes == base.num_nodes + round(400 * MIX["new"]) - 20
    assert [e.kind for e in version_history(folder)][-1] == "delta"
    assert load_graph(pristine).num_nodes == base.num_nodes  # the cached graph is left as it was


def test_a_run_prints_the_update_deltas_and_compaction(tmp_path: Path) -> None:
    from benchmarks.graph_update import search_latency

    args = argparse.Namespace(work=str(tmp_path), scale=SCALE, seed=0, queries=5, changes=300)
    rows = dict(run_mag(args, search_latency))
    assert rows["update: graph + BM25 (target <= 30 s)"].endswith("met")
    for label in ("0 deltas", "1 delta", "10 deltas"):
        assert f"search top-10 / score neighbours, {label} (median ms)" in rows
    assert "compaction of version 10 into a new base" in rows
    assert "300 changes" in next(k for k in rows if k.startswith("the update"))
