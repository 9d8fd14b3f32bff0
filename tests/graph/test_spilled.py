"""The external CSR pack gives the in-memory build's arrays, schema and fingerprint, however small its buckets."""

from __future__ import annotations

import hashlib

import numpy as np
import pyarrow as pa
import pytest

from ark.graph import build_graph_from_arrays, spilled
from ark.graph.build import node_text_digest, schema_from_counts
from ark.graph.spilled import EdgeSpill, write_spilled_csr


def _random_edges(rng: np.random.Generator, n: int, m: int, relations: int) -> tuple[np.ndarray, ...]:
    src = np.minimum((n * rng.random(m) ** 3).astype(np.int64), n - 1)  # a few hubs
    dst = rng.integers(0, n, m)
    rel = rng.integers(0, relations, m)
    src[:5], dst[:5] = 3, 3  # self-loops
    repeat = rng.integers(0, m, m // 4)  # duplicate edges, which both builds keep once
    return tuple(np.concatenate((a, a[repeat])) for a in (src, dst, rel))


@pytest.mark.parametrize(("bucket_entries", "spill_chunk"), [(1 << 20, 1 << 19), (7, 5), (1, 1)])
def test_spilled_pack_equals_the_in_memory_build(tmp_path, monkeypatch, bucket_entries, spill_chunk):
    monkeypatch.setattr(spilled, "BUCKET_ENTRIES", bucket_entries)
    monkeypatch.setattr(spilled, "SPILL_CHUNK", spill_chunk)
    rng = np.random.default_rng(3)
    n, node_types, relation_types = 300, ["a", "b", "c"], ["r0", "r1", "r2", "r3"]
    type_codes = rng.integers(0, len(node_types), n).astype(np.int16)
    src, dst, rel = _random_edges(rng, n, 2_000, len(relation_types))
    nodes = pa.table({"id": [f"n{i}" for i in range(n)], "name": ["x"] * n, "text": ["y"] * n})
    oracle = build_graph_from_arrays(nodes, type_codes, node_types, src, dst, rel, relation_types)

    spill = EdgeSpill(tmp_path / "edges.spill", n)
    for start in range(0, len(src), 333):  # appended in uneven chunks, as an import does
        spill.append(src[start:start + 333], dst[start:start + 333], rel[start:start + 333])
    digest = node_text_digest(lambda column: iter(nodes.column(column).chunks))
    num_edges, counts = write_spilled_csr(spill, tmp_path, type_codes, len(node_types), len(relation_types), digest)

    assert num_edges == oracle.num_edges < len(src)  # the duplicates went
    assert digest.hexdigest() == oracle.metadata["fingerprint"]
    assert schema_from_counts(counts, node_types, relation_types) == oracle.schema
    for name, array in (("indptr", oracle.indptr), ("neighbors", oracle.neighbor_array),
                        ("codes", oracle.code_array)):
        np.save(tmp_path / f"oracle-{name}.npy", array)
        assert (tmp_path / f"{name}.npy").read_bytes() == (tmp_path / f"oracle-{name}.npy").read_bytes(), name
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("oracle")) == [
        "codes.npy", "indptr.npy", "neighbors.npy"]  # the spill and the buckets are gone


def test_a_graph_without_edges_packs_to_empty_arrays(tmp_path):
    spill = EdgeSpill(tmp_path / "edges.spill", 4)
    num_edges, counts = write_spilled_csr(spill, tmp_path, np.zeros(4, dtype=np.int16), 1, 0,
                                          hashlib.blake2b(digest_size=16))
    assert num_edges == 0 and not counts.any()
    assert np.array_equal(np.load(tmp_path / "indptr.npy"), np.zeros(5, dtype=np.int64))
    assert np.load(tmp_path / "neighbors.npy").shape == (0,) and np.load(tmp_path / "codes.npy").dtype == np.int16
