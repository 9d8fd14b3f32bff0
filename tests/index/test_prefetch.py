"""The cache hint of the compiled kernels (``ark/index/_prefetch.py``) compiles with the installed numba, names the
LLVM intrinsic for the pointers that LLVM uses, and changes no value a kernel computes."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("numba")


def test_the_hint_compiles_with_this_numba_so_subset_scoring_uses_it():
    from ark.index import _prefetch

    assert _prefetch.AVAILABLE, "llvm.prefetch did not compile: subset scoring runs without its cache hints"


def test_the_intrinsic_is_named_for_opaque_and_for_typed_pointers():
    from ark.index._prefetch import _intrinsic_name

    assert _intrinsic_name(SimpleNamespace(is_opaque=True)) == "llvm.prefetch.p0"
    assert _intrinsic_name(SimpleNamespace(is_opaque=False)) == "llvm.prefetch.p0i8"
    assert _intrinsic_name(SimpleNamespace()) == "llvm.prefetch.p0i8"  # an llvmlite before opaque pointers


def test_a_hinted_loop_reads_the_same_values_even_past_the_end():
    import numba

    from ark.index._prefetch import prefetch

    @numba.njit
    def hinted_sum(values, ahead):
        total = 0
        for i in range(len(values)):
            prefetch(values, i + ahead)  # past the end near the last ones: a hint never faults
            total += values[i]
        return total

    values = np.arange(10_000, dtype=np.int64)
    assert hinted_sum(values, 8) == hinted_sum(values, 0) == values.sum()
