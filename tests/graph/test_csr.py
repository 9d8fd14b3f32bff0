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
