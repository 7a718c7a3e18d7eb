"""Small numba helpers shared by the system kernels.

``unmanaged(arr)`` returns a view of ``arr`` without a reference-counted owner.
Passing such views between jitted helper functions avoids the atomic
reference-count updates numba emits for every array argument, which otherwise
cost more than the rules themselves in a tight round loop.  Only use it inside a
kernel whose caller keeps ``arr`` alive for the whole call: never on an array the
kernel allocated itself (numba frees it once the owning name is no longer used).
"""

from __future__ import annotations

from numba import carray, njit, types
from numba.extending import intrinsic


@intrinsic
def _data_pointer(typingctx, arr):
    sig = types.CPointer(arr.dtype)(arr)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        return ary.data

    return sig, codegen


@njit(cache=True, nogil=True, inline="always")
def unmanaged(arr):
    """A view of C-contiguous ``arr`` that numba does not reference-count."""
    return carray(_data_pointer(arr), arr.shape)


@intrinsic
def leading_zeros(typingctx, x):
    """Number of leading zero bits of a 64-bit integer (64 for 0): llvm.ctlz."""
    sig = types.int64(x)

    def codegen(context, builder, signature, args):
        val = args[0]
        return builder.ctlz(val, context.get_constant(types.boolean, False))

    return sig, codegen
