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
