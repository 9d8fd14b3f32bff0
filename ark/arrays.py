"""Array helpers for what numpy does slowly or at a start-up cost."""

from __future__ import annotations

from typing import TypeAlias, TypeVar

import numpy as np
import numpy.typing as npt

# Arrays by dtype (a bare ``np.ndarray`` is ``ndarray[Any, dtype[Any]]``, which mypy counts as an explicit Any).
Bools: TypeAlias = npt.NDArray[np.bool_]  # masks
U8: TypeAlias = npt.NDArray[np.uint8]  # bytes: packed tokens, encoded postings, varint blobs
U16: TypeAlias = npt.NDArray[np.uint16]
U32: TypeAlias = npt.NDArray[np.uint32]
U64: TypeAlias = npt.NDArray[np.uint64]  # hashes
Keys: TypeAlias = npt.NDArray[np.bytes_]  # fixed-width digests (dtype S16)
I16: TypeAlias = npt.NDArray[np.int16]  # type and relation codes
I32: TypeAlias = npt.NDArray[np.int32]  # node and document ids, term ids, lengths
I64: TypeAlias = npt.NDArray[np.int64]  # node indices, CSR positions
Ints: TypeAlias = npt.NDArray[np.int16 | np.int32 | np.int64]  # node indices, CSR positions, type and relation codes
F16: TypeAlias = npt.NDArray[np.float16]
F32: TypeAlias = npt.NDArray[np.float32]  # scores, embeddings, term frequencies
F64: TypeAlias = npt.NDArray[np.float64]
Floats: TypeAlias = npt.NDArray[np.float16 | np.float32 | np.float64]  # scores or vectors of a width set at run time
Numbers: TypeAlias = npt.NDArray[np.uint8 | np.uint16 | np.uint32 | np.int16 | np.int32 | np.int64 | np.float16 |
                                 np.float32 | np.float64]  # an array read from a file, its dtype from the file

_S = TypeVar("_S", bound=np.int16 | np.int32 | np.int64)  # the integer dtypes sorted_unique is given


def sorted_unique(values: npt.NDArray[_S]) -> npt.NDArray[_S]:
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


def rounded(values: list[float], ndigits: int) -> list[float]:
    """``[round(v, ndigits) for v in values]``, the same floats, most of them without ``round``'s decimal conversion
    (a tool call's 20 scores: ~4 against ~7 us; Python's ``round`` is the test oracle).

    ``round`` is correctly rounded: the double nearest to ``N / 10**ndigits``, ``N`` the integer nearest to the
    exact ``v * 10**ndigits``. Where the computed ``y = v * 10**ndigits`` lies within 0.499 of an integer ``n``
    and ``|y| < 2**40`` (its rounding error under 2**-13), ``n`` is that ``N`` and the division ``n / 10**ndigits``,
    of two exact doubles, gives the nearest double: the same value. A value near a half, huge, not finite, or
    rounding to zero (whose sign ``round`` keeps) goes through ``round``."""
    if not 0 <= ndigits <= 15:
        return [round(v, ndigits) for v in values]
    scale = float(10**ndigits)
    out = []
    for v in values:
        y = v * scale
        if -_EXACT_SCALED < y < _EXACT_SCALED:  # False for a NaN
            n = round(y)
            if n and -0.499 <= y - n <= 0.499:
                out.append(n / scale)
                continue
        out.append(round(v, ndigits))
    return out


_EXACT_SCALED = 2.0**40
