"""``prefetch(array, i)``: a hint to the CPU to start loading the cache line of ``array[i]``, for the compiled kernels.

Written by hand because numba has no prefetch: it emits LLVM's ``llvm.prefetch`` intrinsic (read, high locality,
data cache), which does not fault on any address and changes no result. Where a kernel's next loads depend on the
one before (a skip-list search, then the group it finds, then a frequency), hinting a later candidate's lines
overlaps their misses (subset scoring of 5,000 candidates, caches cold: -10% at 1M documents, -16% at 3M). If this
numba's LLVM rejects the intrinsic, :data:`AVAILABLE` is False and ``prefetch`` compiles to nothing. (A kernel's
numba cache is keyed by its own file, so after a change here a cached kernel may keep the old hint or none: its
results cannot differ, a hint changes no value.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


def _intrinsic_name(pointer: ir.Type) -> str:
    """``llvm.prefetch``'s overload name: ``p0`` for LLVM's opaque pointers, ``p0i8`` for typed ones (LLVM < 15)."""
    return "llvm.prefetch.p0" if getattr(pointer, "is_opaque", False) else "llvm.prefetch.p0i8"


@intrinsic
def _llvm_prefetch(typingctx, array, index):
    def codegen(context, builder, signature, args):
        array_type = signature.args[0]
        data = context.make_array(array_type)(context, builder, args[0])
        address = cgutils.get_item_pointer(context, builder, array_type, data, [args[1]], wraparound=False)
        byte_pointer = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        hint = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [byte_pointer, i32, i32,
                                                                                                i32]),
                                              _intrinsic_name(byte_pointer))
        builder.call(hint, [builder.bitcast(address, byte_pointer), ir.Constant(i32, 0), ir.Constant(i32, 3),
                            ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return types.void(array, index), codegen


@numba.njit(cache=True, nogil=True)
def _probe(array):
    _llvm_prefetch(array, 0)  # type: ignore[call-arg]  # numba's stubs keep @intrinsic's typingctx in the call
    return array[0]


def _compiles() -> bool:
    """Whether the intrinsic compiles here (checked once, at import)."""
    try:
        return int(_probe(np.ones(1, np.int64))) == 1
    except Exception:  # noqa: BLE001 - any LLVM or numba failure means: no prefetch
        return False


AVAILABLE = _compiles()
if AVAILABLE:
    # numba's stubs type an @intrinsic as called with its typingctx; jitted code calls it as (array, index)
    prefetch = cast("Callable[[object, int], None]", _llvm_prefetch)
else:
    @numba.njit(inline="always")
    def prefetch(array, index):  # noqa: ARG001 - the hint is dropped
        return None
