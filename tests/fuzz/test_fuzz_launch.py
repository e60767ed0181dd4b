"""Property-based tests of kernel-launch argument checking (OpenCL runtime): random argument
lists (wrong counts, dtypes, ranks, shapes, non-contiguous views, out-of-range scalars) either
launch, and then the kernel's result is right, or raise TinytcError(invalid_kernel_arguments),
or TypeError for a wrong Python type or a missing argument; no other exception escapes."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.exec.support import build

from tinytc_py.errors import Status, TinytcError

# y[i] = a[i, 1] * s for i < 4: a is m x n (n >= 2) of f32, y a 4-vector of f64, s an i32.
SOURCE = """func @k(%a: memref<f32x?x?>, %y: memref<f64x4>, %s: i32) {
    %c0 = constant 0 : index
    %c1 = constant 1 : index
    %c4 = constant 4 : index
    %sf = cast %s : f32
    foreach (%i) = (%c0), (%c4) {
        %v = load %a[%i, %c1] : f32
        %p = mul %v, %sf : f32
        %d = cast %p : f64
        store %d, %y[%i]
    }
}
"""

DTYPES = [np.float32, np.float64, np.int32, np.int64, np.float16, np.complex64]
ARRAY = st.tuples(
    st.sampled_from(DTYPES),
    st.lists(st.integers(0, 6), min_size=0, max_size=3),
    st.booleans(),  # Fortran order
    st.integers(1, 2),  # step of a view along the first axis
)
SCALAR = st.one_of(st.integers(-(2**64), 2**64), st.floats(allow_nan=True), st.just("x"), st.none())


def make(spec):
    dtype, shape, fortran, step = spec
    full = [s * step for s in shape[:1]] + shape[1:]
    base = np.arange(int(np.prod(full)), dtype=np.float64).astype(dtype).reshape(full)
    base = np.asfortranarray(base) if fortran else base
    return base[::step] if shape else base


def valid(args) -> bool:
    if len(args) != 3:
        return False
    a, y, s = args
    return (
        isinstance(a, np.ndarray) and a.dtype == np.float32 and a.ndim == 2
        and a.shape[0] >= 4 and a.shape[1] >= 2
        and isinstance(y, np.ndarray) and y.dtype == np.float64 and y.shape == (4,)
        and y.flags.c_contiguous
        and isinstance(s, int) and -(2**31) <= s < 2**31
    )  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.lists(st.one_of(ARRAY.map(make), SCALAR), min_size=0, max_size=4),
    st.sampled_from([None, "valid"]),
    st.integers(-50, 50),
)
def test_launch_arguments_are_checked(args, shape_of, s):
    kernel = build(SOURCE).kernel("k")
    if shape_of == "valid":  # a well-formed call, so that both outcomes are exercised
        args = [np.asfortranarray(np.arange(12, dtype=np.float32).reshape(4, 3)),
                np.zeros(4), s]  # fmt: skip
    try:
        kernel(*args)
    except TinytcError as err:
        assert err.status is Status.invalid_kernel_arguments, err
        assert not valid(args) or not args[0].flags.f_contiguous, str(err)
        return
    except TypeError as err:
        assert not valid(args), str(err)
        assert str(err).startswith("kernel @k"), str(err)
        return
    a, y, s = args
    want = a[:4, 1].astype(np.float32) * np.float32(s)
    np.testing.assert_array_equal(y, want.astype(np.float64))
