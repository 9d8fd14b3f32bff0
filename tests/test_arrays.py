"""sorted_unique against np.unique (the oracle), and without importing numpy.ma."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from ark.arrays import sorted_unique


def test_sorted_unique_matches_np_unique():
    rng = np.random.default_rng(0)
    cases = [np.zeros(0, np.int64), np.array([5]), np.array([3, 1, 3, 2, 1], np.int32),
             rng.integers(-50, 50, 1000), rng.integers(0, 2**40, 5000, dtype=np.int64), np.arange(10)[::-1].copy()]
    for values in cases:
        got, expected = sorted_unique(values), np.unique(values)
        assert got.dtype == expected.dtype and np.array_equal(got, expected)


def test_sorted_unique_leaves_numpy_ma_unimported():
    code = ("import sys, numpy as np\nfrom ark.arrays import sorted_unique\nsorted_unique(np.array([2, 1, 2]))\n"
            "print('numpy.ma' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"


def test_rounded_matches_round():
    from ark.arrays import rounded

    rng = np.random.default_rng(1)
    halves = (np.arange(-2000, 2000) + 0.5) / 1e6  # near the ties, where the fast path must not be taken
    values = np.concatenate([rng.random(20000) * 40, rng.random(5000).astype(np.float32) * 30, -rng.random(2000),
                             rng.random(2000) * 1e-7 - 5e-8, halves, np.nextafter(halves, 0), np.nextafter(halves, 1),
                             [0.0, -0.0, 1e12, 2.5e-7, np.inf, -np.inf, np.nan]]).tolist()
    for ndigits in (0, 3, 6, 15, 16, -1):
        for start in range(0, len(values), 20):  # a tool call's 20 scores at a time
            chunk = values[start:start + 20]
            got, expected = rounded(chunk, ndigits), [round(v, ndigits) for v in chunk]
            assert [repr(v) for v in got] == [repr(v) for v in expected], (ndigits, chunk)
    assert rounded([], 6) == []
