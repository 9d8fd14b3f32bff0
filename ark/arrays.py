"""Array helpers for what numpy does slowly or at a start-up cost."""

from __future__ import annotations

from typing import TypeAlias

import numpy as np
import numpy.typing as npt

I64: TypeAlias = npt.NDArray[np.int64]  # node indices, CSR positions
Ints: TypeAlias = npt.NDArray[np.int16 | np.int32 | np.int64]  # node indices, CSR positions, type and relation codes


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """The distinct values of a 1-d integer array, ascending: ``np.unique(values)`` by sort + neighbour comparison.

    numpy 2.4's ``np.unique`` is ~60x slower on int64 keys, and its plain form imports ``numpy.ma`` on first call
    (~40 M instructions, a fifth of a command's start-up budget). ``np.unique`` is the test oracle.
    """
    values = np.sort(np.asarray(values).ravel())
    if len(values) == 0:
        return values
    keep = np.empty(len(values), dtype=bool)
    keep[0] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]
