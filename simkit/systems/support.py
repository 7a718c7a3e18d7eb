"""Small numba helpers shared by the system kernels.

``unmanaged(arr)`` returns a view of ``arr`` without a reference-counted owner.
Passing such views between jitted helper functions avoids the atomic
reference-count updates numba emits for every array argument, which otherwise
cost more than the rules themselves in a tight round loop.  Only use it inside a
kernel whose caller keeps ``arr`` alive for the whole call: never on an array the
kernel allocated itself (numba frees it once the owning name is no longer used).

``with_columns(arr, k)`` is ``unmanaged`` for a 2-d array whose row length ``k`` is a
compile-time constant, so that indexing it costs no stride loaded from memory.

``JIT`` is the options every kernel function is compiled with:
``@njit(**JIT)`` (cached on disk, releasing the GIL for worker threads).

``leading_zeros(x)``, ``trailing_zeros(x)`` and ``popcount(x)`` are LLVM's
count-leading-zeros, count-trailing-zeros and population count of a 64-bit integer
(64, 64 and 0 for 0).

All are numba *intrinsics*, which plain Python cannot call.  With
``NUMBA_DISABLE_JIT=1`` (the coverage run, ``make coverage``) they are replaced by
plain-Python equivalents, so every kernel also runs, slowly, as ordinary Python.
"""

from __future__ import annotations

from numba import carray, config, njit, types
from numba.extending import intrinsic

JIT = {"cache": True, "nogil": True}
JIT_DISABLED = bool(config.DISABLE_JIT)
_MASK64 = (1 << 64) - 1

if JIT_DISABLED:

    def unmanaged(arr):  # type: ignore[no-untyped-def]
        """Plain Python: the array itself."""
        return arr

    def with_columns(arr, columns):  # type: ignore[no-untyped-def]
        """Plain Python: the array itself."""
        return arr

    def leading_zeros(x):  # type: ignore[no-untyped-def]
        """Plain Python: leading zero bits of a 64-bit integer (64 for 0)."""
        return 64 - (int(x) & _MASK64).bit_length()

    def trailing_zeros(x):  # type: ignore[no-untyped-def]
        """Plain Python: trailing zero bits of a 64-bit integer (64 for 0)."""
        x = int(x) & _MASK64
        return 64 if x == 0 else (x & -x).bit_length() - 1

    def popcount(x):  # type: ignore[no-untyped-def]
        """Plain Python: set bits of a 64-bit integer."""
        return (int(x) & _MASK64).bit_count()

else:  # pragma: no cover  (compiled intrinsics: not Python lines coverage can see)

    @intrinsic
    def _data_pointer(typingctx, arr):
        sig = types.CPointer(arr.dtype)(arr)

        def codegen(context, builder, signature, args):
            ary = context.make_array(signature.args[0])(context, builder, args[0])
            return ary.data

        return sig, codegen

    @njit(**JIT, no_cpython_wrapper=True, no_cfunc_wrapper=True)
    def unmanaged(arr):
        """A view of C-contiguous ``arr`` that numba does not reference-count."""
        return carray(_data_pointer(arr), arr.shape)

    @njit(**JIT, no_cpython_wrapper=True, no_cfunc_wrapper=True, forceinline=True)
    def with_columns(arr, columns):
        """``unmanaged(arr)`` of a C-contiguous 2-d array whose row length ``columns`` is
        a compile-time constant (a global): indexing it needs no stride from memory."""
        return carray(_data_pointer(arr), (arr.shape[0], columns))

    @intrinsic
    def leading_zeros(typingctx, x):
        """Number of leading zero bits of a 64-bit integer (64 for 0): llvm.ctlz."""
        sig = types.int64(x)

        def codegen(context, builder, signature, args):
            val = args[0]
            return builder.ctlz(val, context.get_constant(types.boolean, False))

        return sig, codegen

    @intrinsic
    def trailing_zeros(typingctx, x):
        """Number of trailing zero bits of a 64-bit integer (64 for 0): llvm.cttz."""
        sig = types.int64(x)

        def codegen(context, builder, signature, args):
            val = args[0]
            return builder.cttz(val, context.get_constant(types.boolean, False))

        return sig, codegen

    @intrinsic
    def popcount(typingctx, x):
        """Number of set bits of a 64-bit integer: llvm.ctpop."""
        sig = types.int64(x)

        def codegen(context, builder, signature, args):
            return builder.ctpop(args[0])

        return sig, codegen
