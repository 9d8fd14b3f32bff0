"""Graphs that change: random sequences of updates, deletions and compactions on the fixture graphs give the same
graph, the same BM25 rankings and scores and the same tool results as a graph rebuilt from scratch."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from ark.graph import load_graph, save_graph
from ark.graph.versioning import compact_graph, update_graph, version_history
from ark.index import segments
from tests.graph.update_model import ContentModel, compare, random_delta
from tests.support.graphs import build_clinical_graph, build_conditions_graph, build_drug_graph

FIXTURES = (build_clinical_graph, build_conditions_graph, build_drug_graph)
SEQUENCES = 6  # seeded sequences (hypothesis is not installed); about 1 minute on a loaded 2-core machine
STEPS = 4


def run_sequence(folder: Path, seed: int, steps: int = STEPS) -> list[str]:
    """One random sequence of updates (and sometimes a compaction); the differences found after each step."""
    rng = random.Random(seed)
    graph = FIXTURES[seed % len(FIXTURES)]()
    save_graph(graph, folder)
    model = ContentModel(graph)
    problems = []
    for step in range(1, steps + 1):
        delta = random_delta(model, rng, step)
        update_graph(folder, delta)
        model.apply(delta)
        if rng.random() < 0.25:
            compact_graph(folder)
        updated = load_graph(folder)
        problems += [f"seed {seed} step {step}: {p}" for p in compare(updated, model.rebuild(), rng)]
    return problems


@pytest.mark.parametrize("seed", range(SEQUENCES))
def test_updates_equal_a_rebuild(tmp_path: Path, seed: int) -> None:
    assert run_sequence(tmp_path / "graph", seed) == []
    history = version_history(tmp_path / "graph")
    assert [h.version for h in history if h.is_update] == list(range(1, STEPS + 1))


def test_the_comparison_catches_a_wrong_merge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A merge that keeps the stale documents of changed nodes (older segments not masked) is caught."""

    def stale_maps(parts, ids):
        maps = real(parts, ids)
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        first = pc.fill_null(pc.index_in(pa.array(parts[0].node_ids, pa.string()), value_set=ids.combine_chunks()),
                             -1)
        maps[0] = np.asarray(first.to_numpy(zero_copy_only=False), dtype=np.int64)
        return maps

    real = segments.doc_maps
    monkeypatch.setattr(segments, "doc_maps", stale_maps)
    import ark.index.versioned as versioned

    monkeypatch.setattr(versioned, "doc_maps", stale_maps)
    assert run_sequence(tmp_path / "graph", seed=1, steps=2)


def test_the_comparison_catches_unmerged_statistics(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A merge whose document frequencies still count one replaced or deleted document is caught."""
    real = segments.SegmentedBM25._weights
    monkeypatch.setattr(segments.SegmentedBM25, "_weights", lambda self, docs, tf, df: real(self, docs, tf, df + 1))
    assert any("top-k" in p for p in run_sequence(tmp_path / "graph", seed=2, steps=2))
