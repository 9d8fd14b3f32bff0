"""``row_positions``: many CSR rows' entries in one gather, checked against a plain-Python walk of the rows."""

from __future__ import annotations

import numpy as np
import pytest

from ark.graph.csr import row_positions


def _oracle(indptr: list[int], rows: list[int]) -> tuple[list[int], list[int]]:
    positions: list[int] = []
    for row in rows:
        positions.extend(range(indptr[row], indptr[row + 1]))
    return positions, [indptr[row + 1] - indptr[row] for row in rows]


def _random_indptr(rng: np.random.Generator, num_rows: int) -> np.ndarray:
    lengths = rng.integers(0, 5, size=num_rows)
    lengths[rng.random(num_rows) < 0.3] = 0  # plenty of rows without entries
    return np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)


@pytest.mark.parametrize("seed", range(20))
def test_row_positions_match_the_rows_read_one_by_one(seed: int) -> None:
    rng = np.random.default_rng(seed)
    indptr = _random_indptr(rng, int(rng.integers(1, 30)))
    num_rows = len(indptr) - 1
    rows = rng.integers(0, num_rows, size=int(rng.integers(0, 40)))  # repeats, any order
    positions, lengths = row_positions(indptr, rows.astype(np.int32))
    expected_positions, expected_lengths = _oracle(indptr.tolist(), rows.tolist())
    assert positions.tolist() == expected_positions
    assert lengths.tolist() == expected_lengths
    assert positions.dtype == np.int64 and lengths.dtype == np.int64


def test_no_rows_and_rows_without_entries_give_no_positions() -> None:
    indptr = np.asarray([0, 0, 3, 3, 5], dtype=np.int64)
    for rows in (np.empty(0, dtype=np.int32), np.asarray([0, 2, 0]), np.empty(0)):
        positions, lengths = row_positions(indptr, rows)
        assert positions.tolist() == []
        assert lengths.tolist() == [0] * len(rows)


def test_repeated_rows_and_the_owner_of_each_entry() -> None:
    indptr = np.asarray([0, 2, 2, 5], dtype=np.int64)
    rows = np.asarray([2, 0, 2, 1])
    positions, lengths = row_positions(indptr, rows)
    assert positions.tolist() == [2, 3, 4, 0, 1, 2, 3, 4]
    assert np.repeat(rows, lengths).tolist() == [2, 2, 2, 0, 0, 2, 2, 2]


def test_a_memory_mapped_indptr_is_read_in_place(tmp_path) -> None:
    indptr = np.asarray([0, 1, 4, 4, 6], dtype=np.int64)
    np.save(tmp_path / "indptr.npy", indptr)
    mapped = np.load(tmp_path / "indptr.npy", mmap_mode="r")
    positions, _ = row_positions(mapped, np.asarray([3, 1]))
    assert positions.tolist() == [4, 5, 1, 2, 3]


@pytest.mark.parametrize("block", [1, 3, 1000])
def test_entry_blocks_read_every_entry_once_in_row_order(block: int) -> None:
    from ark.graph import NodeTable, build_graph_from_arrays
    from ark.graph.csr import entry_blocks

    rng = np.random.default_rng(block)
    n = 40
    nodes = NodeTable([f"n{i}" for i in range(n)], ["thing"] * n, [f"thing {i}" for i in range(n)]).to_arrow()
    src, dst = rng.integers(0, 30, size=120), rng.integers(0, 30, size=120)  # rows 30..39 hold no entries
    graph = build_graph_from_arrays(nodes, np.zeros(n, np.int32), ["thing"], src, dst, rng.integers(0, 2, size=120),
                                    ["a", "b"])
    parts = list(entry_blocks(graph, block))
    assert all(len(rows) <= block or len(np.unique(rows)) == 1 for rows, _, _ in parts)
    rows, neighbors, codes = (np.concatenate(column) for column in zip(*parts, strict=True))
    expected_rows = np.repeat(np.arange(n), np.diff(graph.indptr))
    assert rows.tolist() == expected_rows.tolist()
    assert neighbors.tolist() == np.asarray(graph.neighbor_array).tolist()
    assert codes.tolist() == np.asarray(graph.code_array).tolist()
    out = (codes & 1) == 0  # the outgoing entries are the edges
    assert sorted(zip(rows[out].tolist(), neighbors[out].tolist(), (codes[out] >> 1).tolist(), strict=True)) == \
        sorted(zip(*(a.tolist() for a in graph.edges()), strict=True))
