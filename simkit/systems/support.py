"""Small numba helpers shared by the system kernels.

``unmanaged(arr)`` returns a view of ``arr`` without a reference-counted owner.
Passing such views between jitted helper functions avoids the atomic
reference-count updates numba emits for every array argument, which otherwise
cost more than the rules themselves in a tight round loop.  Only use it inside a
kernel whose caller keeps ``arr`` alive for the whole call: never on an array the
kernel allocated itself (numba frees it once the owning name is no longer used).

``leading_zeros(x)`` is LLVM's count-leading-zeros of a 64-bit integer.

Both are numba *intrinsics*, which plain Python cannot call.  With
``NUMBA_DISABLE_JIT=1`` (the coverage run, ``make coverage``) they are replaced by
plain-Python equivalents, so every kernel also runs, slowly, as ordinary Python.
"""

from __future__ import annotations

from numba import carray, config, njit, types
from numba.extending import intrinsic

JIT_DISABLED = bool(config.DISABLE_JIT)

if JIT_DISABLED:

    def unmanaged(arr):  # type: ignore[no-untyped-def]
        """Plain Python: the array itself."""
        return arr

    def leading_zeros(x):  # type: ignore[no-untyped-def]
        """Plain Python: leading zero bits of a 64-bit integer (64 for 0)."""
        return 64 - (int(x) & 0xFFFFFFFFFFFFFFFF).bit_length()

else:

    @intrinsic
    def _data_pointer(typingctx, arr):
        sig = types.CPointer(arr.dtype)(arr)

        def codegen(context, builder, signature, args):
            ary = context.make_array(signature.args[0])(context, builder, args[0])
            return ary.data

        return sig, codegen

    @njit(cache=True, nogil=True)
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
