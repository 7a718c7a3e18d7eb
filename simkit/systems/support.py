"""Small numba helpers shared by the system kernels.

``unmanaged(arr)`` returns a view of ``arr`` without a reference-counted owner.
Passing such views between jitted helper functions avoids the atomic
reference-count updates numba emits for every array argument, which otherwise
cost more than the rules themselves in a tight round loop.  Only use it inside a
kernel whose caller keeps ``arr`` alive for the whole call: never on an array the
kernel allocated itself (numba frees it once the owning name is no longer used).

``with_columns(arr, k)`` is ``unmanaged`` for a 2-d array whose row length ``k`` is a
compile-time constant, so that indexing it costs no stride loaded from memory.

``leading_zeros(x)``, ``trailing_zeros(x)`` and ``popcount(x)`` are LLVM's
count-leading-zeros, count-trailing-zeros and population count of a 64-bit integer
(64, 64 and 0 for 0).

All are numba *intrinsics*, which plain Python cannot call.  With
``NUMBA_DISABLE_JIT=1`` (the coverage run, ``make coverage``) they are replaced by
plain-Python equivalents, so every kernel also runs, slowly, as ordinary Python.

``JIT`` is the one set of options every kernel function is compiled with (``ENTRY``:
the same for a kernel's entry point, without the C wrapper no caller uses), and
``njit`` the one decorator: ``@njit(**JIT)`` is numba's ``njit`` releasing the GIL for
worker threads and cached on disk by :class:`SourceTreeCache`, whose entries are
valid only for the exact source text of simkit/systems/ and simkit/metrics/
(``SOURCE_DIGEST``).  numba's own cache checks only the timestamp of the file that
defines a function, not of the files whose functions are compiled into it
(stream.py, metrics/sums.py, a system's rules); keyed on the whole trees, an edited
or updated source file always recompiles every kernel.  ``SIMKIT_NO_CACHE`` (set by
simkit/__init__.py when no cache directory is writable) turns caching off.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numba
import numba.core.codegen
from numba import config, types
from numba.core.caching import CacheImpl, CompileResultCacheImpl, FunctionCache
from numba.core.dispatcher import Dispatcher
from numba.extending import intrinsic

JIT_DISABLED = bool(config.DISABLE_JIT)
CACHE = not os.environ.get("SIMKIT_NO_CACHE")
JIT = {"cache": CACHE, "nogil": True}
# A kernel's entry point: called from Python through its Python wrapper, never as a C
# function, so no C wrapper is lowered, optimised and emitted for it.
ENTRY = {**JIT, "no_cfunc_wrapper": True}

# The source trees every kernel may compile code from: a new file in them is covered.
SOURCE_TREES = ("systems", "metrics")


def source_digest(root: Path | None = None) -> str:
    """SHA-256 of every ``.py`` file under ``root``/systems and ``root``/metrics
    (``root``: the simkit package), each with its relative path, in sorted order."""
    root = Path(__file__).resolve().parents[1] if root is None else root
    digest = hashlib.sha256()
    for tree in SOURCE_TREES:
        for path in sorted((root / tree).rglob("*.py")):
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


SOURCE_DIGEST = source_digest()


class _SourceTreeStamp:
    """A numba cache locator whose freshness stamp is ``SOURCE_DIGEST`` (numba's own:
    the defining file's modification time and size).  An index written under another
    stamp is treated as empty and overwritten."""

    def get_source_stamp(self) -> str:
        return SOURCE_DIGEST


class _SourceTreeCacheImpl(CompileResultCacheImpl):
    # numba's locators (NUMBA_CACHE_DIR, beside the source, the user's cache directory,
    # ...) in numba's order, each stamped with the source digest (NUMBA_CACHE_LOCATOR_CLASSES,
    # numba's override of the list, would bypass the stamp: simkit never sets it)
    _locator_classes = [
        type(locator.__name__, (_SourceTreeStamp, locator), {})
        for locator in CacheImpl._locator_classes
    ]


class SourceTreeCache(FunctionCache):
    """numba's on-disk function cache, valid for one text of simkit's kernel sources.

    A save holds an exclusive lock on the cache directory (``SAVE_LOCK``): numba reads
    the index, adds an entry and names a data file by the entries it saw, so two
    processes saving at once (``simkit warmup`` compiles the systems in parallel
    processes; Dask workers on one machine) could drop each other's entries or give two
    signatures one data file.  Index and data files are each replaced atomically by
    numba, so a load needs no lock."""

    _impl_class = _SourceTreeCacheImpl

    def save_overload(self, sig: Any, data: Any) -> None:
        with _locked(Path(self._cache_path) / SAVE_LOCK):
            super().save_overload(sig, data)


SAVE_LOCK = "simkit-save.lock"


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``path`` while the block runs; without ``fcntl``
    (Windows) or a writable lock file, no lock (numba's save as before)."""
    try:
        import fcntl

        handle = open(path, "a")  # noqa: SIM115 (closed below, after the unlock)
    except (ImportError, OSError):
        yield
        return
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        handle.close()  # closing the file releases the lock


# --------------------------------------------------------------------------- link-only
# numba finalises every jitted function's code library on its own: the module optimised,
# then machine code emitted into the JIT engine; a caller then links the callee's module
# into its own, optimises and emits everything again.  A function with neither Python nor
# C wrapper and no cache entry of its own is only ever reached through a caller's linked
# copy (numba calls between jitted functions so), so its own machine code never runs.
# ``njit(..., link_only=True)`` gives such a function a ``_LinkOnlyLibrary``: its
# functions get numba's per-function passes, but the library is neither optimised as a
# module nor emitted on its own; its callers link it and optimise it together with their
# own code (LLVM's module pipeline simplifies callees before inlining them), so a cold
# compile optimises and emits its code once per entry point instead of once more on its
# own.  Its callers' machine code is then not the same as before (numba's emission also
# rewrites a module in place: LLVM's code-generation passes): used only where the run
# speed was measured unchanged or better (the readiness lanes and their lean player, the
# flushes, counting's batch functions; docs/performance.md, "Cold compile per path").
# The library below overrides numba internals (numba 0.68 has them); a numba without
# them compiles link-only functions as ordinary ones (the same results; the cold compile
# as before).
_LINK_ONLY_HOOKS = (
    "_optimize_final_module",
    "_finalize_final_module",
    "_finalize_dynamic_globals",
    "_verify_declare_only_symbols",
    "enable_object_caching",
    "_ensure_finalized",
)
_HAS_LINK_ONLY_HOOKS = not JIT_DISABLED and all(
    hasattr(getattr(numba.core.codegen, "JITCodeLibrary", None), name) for name in _LINK_ONLY_HOOKS
)
if not _HAS_LINK_ONLY_HOOKS:
    _LinkOnlyCompiler: Any = None
else:  # pragma: no cover  (compile machinery: not Python lines coverage can see)
    from numba.core.codegen import JITCodeLibrary
    from numba.core.compiler import Compiler, DefaultPassBuilder
    from numba.core.compiler_machinery import LoweringPass, register_pass
    from numba.core.typed_passes import AnnotateTypes

    class _NoEnvironment:
        """The library's codegen, but ``set_env`` does nothing: its function's
        environment pointer lives in the callers' copies (set there, as after a load
        from numba's cache, where no callee is compiled at all)."""

        def __init__(self, codegen: Any) -> None:
            self._codegen = codegen

        def set_env(self, env_name: str, env: Any) -> None:
            return None

        def __getattr__(self, name: str) -> Any:
            return getattr(self._codegen, name)

    class _LinkOnlyLibrary(JITCodeLibrary):
        """A code library finalised (linked, its functions optimised one by one) for
        callers to link and optimise, never optimised as a module nor added to the JIT
        engine: no machine code of its own, no function address."""

        @property
        def codegen(self) -> Any:
            return _NoEnvironment(self._codegen)

        def _optimize_final_module(self) -> None:
            return None  # its callers optimise it, linked into their module

        def _finalize_final_module(self) -> None:
            self._finalize_dynamic_globals()
            self._verify_declare_only_symbols()
            self._finalized = True

        def get_pointer_to_function(self, name: str) -> int:
            self._ensure_finalized()
            return 0

    @register_pass(mutates_CFG=False, analysis_only=False)
    class _LinkOnlyLibraryPass(LoweringPass):
        """Give the function being compiled a ``_LinkOnlyLibrary`` (before numba's
        lowering pass would create an ordinary one)."""

        _name = "simkit_link_only_library"

        def __init__(self) -> None:
            LoweringPass.__init__(self)

        def run_pass(self, state: Any) -> bool:
            if state.library is None:
                library = _LinkOnlyLibrary(state.targetctx.codegen(), state.func_id.func_qualname)
                library.enable_object_caching()
                state.library = library
            return True

    class _LinkOnlyCompiler(Compiler):
        """numba's nopython pipeline with ``_LinkOnlyLibraryPass`` before lowering."""

        def define_pipelines(self) -> list[Any]:
            if self.state.flags.force_pyobject:
                return super().define_pipelines()
            pm = DefaultPassBuilder.define_nopython_pipeline(self.state)
            pm.add_pass_after(_LinkOnlyLibraryPass, AnnotateTypes)
            pm.finalize()
            return [pm]


def njit(*args: Any, **options: Any) -> Any:
    """numba's ``njit`` (as ``@njit`` or ``@njit(**options)``), with ``cache=True``
    meaning :class:`SourceTreeCache` instead of numba's file-timestamp cache, and
    ``link_only=True`` (a function only jitted code calls: no Python nor C wrapper, not
    cached) meaning a code library that its callers optimise and emit, never optimised
    as a module nor emitted as machine code of its own (``_LinkOnlyLibrary``)."""
    if options.pop("link_only", False):
        if options.get("cache") or not (
            options.get("no_cpython_wrapper") and options.get("no_cfunc_wrapper")
        ):
            raise ValueError("link_only: only for a function without wrappers, not cached")
        if _LinkOnlyCompiler is not None:
            options = {**options, "pipeline_class": _LinkOnlyCompiler}
    cache = options.pop("cache", False)
    compile_with = numba.njit(**options)

    def decorate(function: Callable[..., Any]) -> Any:
        dispatcher = compile_with(function)
        if cache and isinstance(dispatcher, Dispatcher):  # not under NUMBA_DISABLE_JIT
            dispatcher._cache = SourceTreeCache(dispatcher.py_func)  # as enable_caching()
        return dispatcher

    if args:
        return decorate(args[0])
    return decorate


if JIT_DISABLED:
    _HelperDispatcher: Any = None
else:  # pragma: no cover  (compiled dispatchers: not Python lines coverage can see)
    from numba.core.registry import CPUDispatcher

    class _HelperDispatcher(CPUDispatcher):
        """A dispatcher jitted code compiles with the options it was given (no wrappers:
        ``no_cpython_wrapper`` and ``no_cfunc_wrapper``), whose plain-Python calls go to a
        twin compiled with ``JIT`` (Python and C wrappers, cached) on its first call."""

        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            twin = self.__dict__.get("_python_twin")
            if twin is None:
                twin = self.__dict__["_python_twin"] = njit(**JIT)(self.py_func)
            return twin(*args, **kwargs)


def helper_njit(**options: Any) -> Callable[[Callable[..., Any]], Any]:
    """``@njit(nogil=True, **options)`` without wrappers nor cache, for a helper that
    kernels call and plain Python may call too (the stream's draws: tests, plug-in
    systems).  Kernels compile it as ``options`` say, so a cold compile builds no Python
    or C wrapper for it and saves no cache entry of its own (the kernels' entry points
    are cached with it compiled in); a plain-Python call compiles a twin with both
    wrappers, cached (``JIT``), the first time.  Under ``NUMBA_DISABLE_JIT``: the plain
    function."""
    options = {"nogil": True, **options, "no_cpython_wrapper": True, "no_cfunc_wrapper": True}
    options.pop("cache", None)

    def decorate(function: Callable[..., Any]) -> Any:
        if JIT_DISABLED:
            return function
        plain = numba.njit(**options)(function)
        return _HelperDispatcher(plain.py_func, plain.locals, plain.targetoptions)

    return decorate


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
    def unmanaged(typingctx, arr):
        """A view of C-contiguous ``arr`` that numba does not reference-count."""
        if not isinstance(arr, types.Array):
            return None
        sig = types.Array(arr.dtype, arr.ndim, "C")(arr)

        def codegen(context, builder, signature, args):
            src = context.make_array(signature.args[0])(context, builder, args[0])
            out = context.make_array(signature.return_type)(context, builder)
            context.populate_array(
                out,
                data=src.data,
                shape=src.shape,
                strides=src.strides,
                itemsize=src.itemsize,
                meminfo=None,
            )
            return out._getvalue()

        return sig, codegen

    @intrinsic
    def with_columns(typingctx, arr, columns):
        """``unmanaged(arr)`` of a C-contiguous 2-d array whose row length ``columns`` is
        a compile-time constant (a global): indexing it needs no stride from memory."""
        if not (isinstance(arr, types.Array) and arr.ndim == 2):
            return None
        if not isinstance(columns, types.IntegerLiteral):
            return None
        sig = types.Array(arr.dtype, 2, "C")(arr, columns)
        k = columns.literal_value

        def codegen(context, builder, signature, args):
            src = context.make_array(signature.args[0])(context, builder, args[0])
            out = context.make_array(signature.return_type)(context, builder)
            intp = context.get_value_type(types.intp)
            rows = builder.extract_value(src.shape, 0)
            size = context.get_abi_sizeof(context.get_data_type(signature.args[0].dtype))
            context.populate_array(
                out,
                data=src.data,
                shape=[rows, intp(k)],
                strides=[intp(k * size), intp(size)],
                itemsize=src.itemsize,
                meminfo=None,
            )
            return out._getvalue()

        return sig, codegen

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
