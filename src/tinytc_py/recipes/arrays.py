"""The recipes called on arrays (re-exported by `tinytc_py`): sizes, types and layouts come from
the arrays, the recipe is compiled once per device and parameters, and the result lands in `C`.

    tinytc_py.small_gemm_batched(1.0, A, B, 0.0, C)   # C[:, :, i] = A[:, :, i] @ B[:, :, i]
    tinytc_py.tall_and_skinny(1.0, A, B, 1.0, C)      # C = A @ B + C, A is M x K with M large

The C API hands a recipe raw buffers and sizes (`tinytc_py.capi.recipe`); here the arrays carry
them, so a wrong shape or dtype is a clear error before anything runs.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import Status, TinytcError
from ..numpy_types import DTYPES

if TYPE_CHECKING:
    from ..api import Device


def _type_of(C: Any) -> str:
    dtype = np.dtype(C.dtype)
    for name, scalar in DTYPES.items():
        if np.dtype(scalar) == dtype:  # i64 comes before index
            return name
    raise TinytcError(Status.invalid_arguments, f"recipes do not support dtype {dtype}")


def _column_major(a: Any, what: str) -> tuple[int, ...]:
    """The element strides the recipe is compiled for: the array's own when it lives on the
    device (used in place), else column-major (NumPy arrays are staged in that layout)."""
    from ..runtime.launch import elem_strides, fortran_strides

    fortran = fortran_strides(a.shape)
    if isinstance(a, np.ndarray):
        return fortran
    if hasattr(a, "__sycl_usm_array_interface__"):  # dpnp's strides are bytes, dpnp.tensor's not
        from ..runtime.sycl import usm_array

        a = usm_array(a, what)  # strides from the interface
    own = elem_strides(a)
    if own is None or (a.shape[0] > 1 and own[0] != 1):
        raise TinytcError(Status.invalid_arguments, f"{what} must be column-major")
    return tuple(s if n > 1 else f for s, n, f in zip(own, a.shape, fortran))


def _device_for(device: Any, C: Any) -> Device:
    """The device named, else the queue of a USM array C (dpnp, dpnp.tensor), else the default."""
    from ..api import _as_device

    if device is None and hasattr(C, "__sycl_usm_array_interface__"):
        from ..runtime.sycl import usm_array

        device = usm_array(C, "C").memory.sycl_queue
    return _as_device(device)


def _check(cond: bool, message: str) -> None:
    if not cond:
        raise TinytcError(Status.invalid_arguments, message)


def _check_operands(A: Any, B: Any, C: Any, order: int) -> str:
    ty = _type_of(C)
    for what, a in (("A", A), ("B", B), ("C", C)):
        _check(len(a.shape) == order, f"{what} must have {order} modes, got shape {a.shape}")
        _check(np.dtype(a.dtype) == np.dtype(C.dtype), f"{what} has dtype {a.dtype}, C {C.dtype}")
    return ty


def _context(flags: tuple[str, ...]) -> Any:
    """A compiler context with the compiler-context flags `flags` (as compile's `flags`)."""
    from ..ir.context import CompilerContext
    from ..options import set_flags

    ctx = CompilerContext()
    set_flags(ctx, list(flags))
    return ctx


@functools.cache
def _small_gemm_batched_program(device: Device, flags: tuple[str, ...], *params: Any) -> Any:
    from ..api import build_for
    from . import small_gemm_batched as recipe

    return build_for(recipe(device.core_info, *params, ctx=_context(flags)).binary, device)


def small_gemm_batched(
    alpha: Any,
    A: Any,
    B: Any,
    beta: Any,
    C: Any,
    *,
    transA: str = "n",
    transB: str = "n",
    device: Any = None,
    flags: tuple[str, ...] = (),
) -> Any:
    """C[:, :, i] = alpha op(A[:, :, i]) op(B[:, :, i]) + beta C[:, :, i] for every i; returns C.

    op is the identity for "n" and the transpose for "t". A is M x K x n (K x M x n when
    transposed), B is K x N x n (N x K x n), C is M x N x n; all of one dtype (f32, f64, c32,
    c64, i8, ...), NumPy arrays, ``pyopencl.array.Array``\\ s or USM arrays (``dpnp``, on
    the queue they run on when `device` is not given) in column-major layout.
    `flags` are compiler-context flags as `compile` takes them (e.g. "bounds-checks").

    >>> import numpy as np, tinytc_py
    >>> A = np.ones((2, 3, 4), np.float32, order="F")
    >>> B = np.ones((3, 5, 4), np.float32, order="F")
    >>> C = np.zeros((2, 5, 4), np.float32, order="F")
    >>> float(tinytc_py.small_gemm_batched(1.0, A, B, 0.0, C)[1, 4, 3])
    3.0
    """
    _check(transA in ("n", "t") and transB in ("n", "t"), "transA and transB are 'n' or 't'")
    ty = _check_operands(A, B, C, 3)
    M, N, howmany = C.shape
    K = A.shape[0] if transA == "t" else A.shape[1]
    a_shape = (K, M, howmany) if transA == "t" else (M, K, howmany)
    b_shape = (N, K, howmany) if transB == "t" else (K, N, howmany)
    _check(tuple(A.shape) == a_shape, f"A has shape {A.shape}, expected {a_shape}")
    _check(tuple(B.shape) == b_shape, f"B has shape {B.shape}, expected {b_shape}")
    sA, sB, sC = (_column_major(a, w)[1:] for a, w in ((A, "A"), (B, "B"), (C, "C")))
    prog = _small_gemm_batched_program(
        _device_for(device, C), tuple(flags), ty, transA, transB, M, N, K, *sA, *sB, *sC
    )
    if howmany:
        prog.kernel("gemm_beta0" if beta == 0 else "gemm")(alpha, A, B, beta, C, num_groups=howmany)
    return C


@functools.cache
def _tall_and_skinny_program(
    device: Device, flags: tuple[str, ...], ty: str, N: int, K: int
) -> tuple[Any, int]:
    from ..api import build_for
    from . import tall_and_skinny as recipe

    compiled = recipe(device.core_info, ty, N=N, K=K, ctx=_context(flags))
    return build_for(compiled.binary, device), compiled.params["M_block_size"]


def tall_and_skinny(
    alpha: Any,
    A: Any,
    B: Any,
    beta: Any,
    C: Any,
    *,
    device: Any = None,
    flags: tuple[str, ...] = (),
) -> Any:
    """C = alpha A B + beta C for a tall A (M x K, M large) and small B (K x N); returns C.

    Compiled once per dtype, K, N and `flags` (compiler-context flags, as `compile` takes
    them); M and the leading dimensions are run-time values.

    >>> import numpy as np, tinytc_py
    >>> A = np.ones((1000, 4), np.float64, order="F")
    >>> B = np.full((4, 2), 0.5, order="F")
    >>> C = np.ones((1000, 2), order="F")
    >>> float(tinytc_py.tall_and_skinny(1.0, A, B, 1.0, C)[999, 1])
    3.0
    """
    ty = _check_operands(A, B, C, 2)
    M, N = C.shape
    K = A.shape[1]
    _check(tuple(A.shape) == (M, K), f"A has shape {A.shape}, expected {(M, K)}")
    _check(tuple(B.shape) == (K, N), f"B has shape {B.shape}, expected {(K, N)}")
    for what, a in (("A", A), ("B", B), ("C", C)):
        _column_major(a, what)
    prog, block = _tall_and_skinny_program(_device_for(device, C), tuple(flags), ty, N, K)
    if M:
        prog.kernel("gemm_beta0" if beta == 0 else "gemm")(
            alpha, A, B, beta, C, num_groups=-(-M // block)
        )
    return C


__all__ = ["small_gemm_batched", "tall_and_skinny"]
