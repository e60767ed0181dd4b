"""Scalar kernel arguments: the fast path of `scalar_value` (a Python float or int, or a NumPy
scalar of the parameter's type, converted without the general checks) gives what the general
path gives, refuses what it refuses, and the values reach the kernel also when pyopencl has no
buffer path for them (`Kernel.set_arg` instead of its `_set_arg_buf`)."""

from __future__ import annotations

import numpy as np
import pytest

from tinytc_py import TinytcError
from tinytc_py.numpy_types import DTYPES
from tinytc_py.runtime.launch import scalar_value

from .launch_kernels import AXPY2, kernel

WHAT = "kernel @k, parameter %a: expected T"


@pytest.mark.parametrize(
    ("dtype", "value", "expected"),
    [
        ("f64", 1.5, np.float64(1.5)),
        ("f64", 1e300, np.float64(1e300)),
        ("f32", 0.1, np.float32(0.1)),
        ("f32", 3.4028234663852886e38, np.float32(3.4028234663852886e38)),  # f32's largest
        ("f32", 1e39, np.float32(np.inf)),  # beyond f32: inf, as in a cast (general path)
        ("f32", -1e39, np.float32(-np.inf)),
        ("f32", float("nan"), np.float32(np.nan)),
        ("i8", 127, np.int8(127)),
        ("i8", -128, np.int8(-128)),
        ("i32", -(2**31), np.int32(-(2**31))),
        ("index", 2**63 - 1, np.int64(2**63 - 1)),
        ("f32", np.float32(2.5), np.float32(2.5)),  # the parameter's own type, as it is
        ("f32", np.float64(2.5), np.float32(2.5)),
        ("f64", 3, np.float64(3.0)),  # an int for a float parameter: general path
        ("i32", True, np.int32(1)),
        ("bf16", 1.0, np.uint16(0x3F80)),  # a float for bf16: rounded to its bits
        ("bf16", 1, np.uint16(0x3F80)),
        ("bf16", np.uint16(5), np.uint16(5)),  # np.uint16: the bits themselves
        ("c32", 1.5, np.complex64(1.5)),
        ("c64", np.complex128(1 - 2j), np.complex128(1 - 2j)),
    ],
)
def test_scalars_are_converted_to_the_parameters_type(dtype, value, expected):
    got = scalar_value(dtype, value, WHAT)
    assert type(got) is type(expected)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize(
    ("dtype", "value"),
    [
        ("i8", 128),
        ("i8", -129),
        ("i32", 2**31),
        ("index", 2**63),
        ("i64", -(2**63) - 1),
        # NumPy integers are checked as Python ints are (a NumPy cast would wrap them)
        ("i8", np.int64(300)),
        ("i16", np.int64(70000)),
        ("i32", np.int64(2**40)),
        ("i64", np.uint64(2**64 - 1)),
        ("i8", np.array(300)),
    ],
)
def test_ints_beyond_the_type_are_refused(dtype, value):
    lo, hi = np.iinfo(DTYPES[dtype]).min, np.iinfo(DTYPES[dtype]).max
    with pytest.raises(TinytcError) as err:
        scalar_value(dtype, value, WHAT)
    assert str(err.value) == f"{WHAT}, got {value!r}, which is not a valid {dtype} ({lo}..{hi})"


@pytest.mark.parametrize(
    ("dtype", "value", "expected"),
    [
        ("i8", np.int64(-128), np.int8(-128)),
        ("i32", np.uint64(7), np.int32(7)),
        ("i64", np.uint64(2**63 - 1), np.int64(2**63 - 1)),
        ("i16", np.bool_(True), np.int16(1)),
        ("index", np.array(5), np.int64(5)),
    ],
)
def test_numpy_integers_in_range_are_converted(dtype, value, expected):
    got = scalar_value(dtype, value, WHAT)
    assert type(got) is type(expected)
    assert got == expected


@pytest.mark.parametrize(
    ("dtype", "value"), [("f32", 1.5j), ("i32", 1j), ("f64", "1"), ("i8", [1])]
)
def test_the_wrong_kind_of_number_is_refused(dtype, value):
    with pytest.raises((TypeError, TinytcError), match="expected T, got"):
        scalar_value(dtype, value, WHAT)


@pytest.mark.parametrize("dtype", ["i8", "i32", "index", "f16", "f32", "f64", "c32", "c64", "bf16"])
def test_none_is_refused(dtype):
    """None is no number (NumPy would make it NaN for a float type)."""
    with pytest.raises(TypeError) as err:
        scalar_value(dtype, None, WHAT)
    assert str(err.value) == f"{WHAT}, got NoneType None"


@pytest.mark.parametrize(
    ("dtype", "value"),
    [("i32", 1.9), ("i8", 2.0), ("index", np.float64(3.0)), ("i64", np.float32(1.5))],
)
def test_floats_for_integer_parameters_are_refused(dtype, value):
    """A float for an integer parameter is refused, integral or not (a cast would truncate)."""
    with pytest.raises(TypeError) as err:
        scalar_value(dtype, value, WHAT)
    assert str(err.value) == (
        f"{WHAT}, got {type(value).__name__} {value!r}; an integer parameter takes an int"
    )


def _count_set_arg(monkeypatch) -> list[int]:
    """The indices Kernel.set_arg is called with from now on."""
    from tinytc_py.runtime import opencl

    calls: list[int] = []
    set_arg = opencl.cl.Kernel.set_arg

    def counting(self, index, value):
        calls.append(index)
        return set_arg(self, index, value)

    monkeypatch.setattr(opencl.cl.Kernel, "set_arg", counting)
    return calls


def test_scalars_reach_the_kernel_without_pyopencls_buffer_path(monkeypatch):
    from tinytc_py.runtime import opencl

    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = np.ones((3, 4), np.float32)
    axpy2 = kernel(AXPY2, "axpy2")
    monkeypatch.setattr(opencl, "_SET_ARG_BUF", None)  # a pyopencl without Kernel._set_arg_buf
    calls = _count_set_arg(monkeypatch)
    axpy2(np.float32(2.0), x, y)
    np.testing.assert_array_equal(y, 2 * x + 1)
    assert 0 in calls  # %a (argument 0) went through set_arg
    monkeypatch.undo()
    axpy2(3.0, x, y)
    np.testing.assert_array_equal(y, 5 * x + 1)


def test_a_buffer_path_of_another_signature_falls_back_to_set_arg(monkeypatch):
    """pyopencl's _set_arg_buf is private: when a call to it raises TypeError (its signature
    changed), the argument is set with set_arg, and so is every later one in the process."""
    from tinytc_py.runtime import opencl

    refused: list[object] = []

    def changed(self, args):  # e.g. _set_arg_buf_multi's signature: one tuple
        refused.append(args)

    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = np.ones((3, 4), np.float32)
    axpy2 = kernel(AXPY2, "axpy2")
    monkeypatch.setattr(opencl, "_SET_ARG_BUF", changed)
    calls = _count_set_arg(monkeypatch)
    axpy2(np.float32(2.0), x, y)
    np.testing.assert_array_equal(y, 2 * x + 1)
    assert opencl._SET_ARG_BUF is None  # not tried again
    assert refused == [] and 0 in calls
    axpy2(np.float32(3.0), x, y)
    np.testing.assert_array_equal(y, 5 * x + 1)
