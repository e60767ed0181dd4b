"""Helpers (imported by the tests) for executing tensor-language kernels on the CPU OpenCL device.

Built programs are cached per source text (the CPU runtime's SPIR-V JIT takes 0.1-1 s per
program). Every program goes through compile_to_spirv, which runs spirv-val on the module.

Element-wise helpers: `elementwise` wraps a body in a guarded one-work-item-per-element kernel,
`run_ops` applies many scalar expressions to input arrays in one launch (one column per
expression), `assert_ulp` compares floating results in units in the last place of their type.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import warnings
from collections.abc import Sequence

import numpy as np
import pytest

pytest.importorskip("pyopencl")

from tinytc_py.runtime import device as _device  # noqa: E402  (sets OCL_ICD_VENDORS first)
from tinytc_py.runtime.opencl import DTYPES, Program, program  # noqa: E402


@functools.cache
def _device_or_none():
    try:
        return _device.default_device()
    except RuntimeError:
        return None


_EMULATED: list[str] = []  # the GPU of an `emulating` block, innermost last


@contextlib.contextmanager
def emulating(gpu: str):
    """Within the block, `build` compiles for `gpu` (pvc or bmg) and runs the binary through
    tinytc-emulate (tests/emulate/test_exec_selection.py runs chosen tests so)."""
    _EMULATED.append(gpu)
    try:
        yield
    finally:
        _EMULATED.pop()


def target() -> str | None:
    """The GPU programs are built for now (an `emulating` block, else TINYTC_EMULATE), or None
    for the CPU device. Caches of built programs key on it."""
    return _EMULATED[-1] if _EMULATED else os.environ.get("TINYTC_EMULATE") or None


def build(text: str) -> Program:
    """The program of `text`, compiled (and spirv-val validated) and built once. Inside
    `emulating(gpu)`, or with TINYTC_EMULATE=pvc (or bmg), it is compiled for that GPU and run
    through tinytc-emulate (docs/emulate.rst); kernels whose subgroup size the GPU lacks are
    skipped then."""
    return _build(text, target())


@functools.cache
def _build(text: str, gpu: str | None) -> Program:
    if _device_or_none() is None:
        pytest.skip("no SPIR-V capable OpenCL device")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _emulated(text, gpu) if gpu else program(text)


def _emulated(text: str, gpu: str) -> Program:
    """`text` for the GPU `gpu`, emulated. A subgroup size the GPU lacks (4, 8) becomes 16 and
    work-group widths are rounded up to a multiple of it, so the GPU code paths still run,
    unless the kernel uses lane ids without reading the subgroup size (its data is then
    sized by a fixed lane count); kernels that still do not compile for the GPU are
    skipped."""
    from tinytc_py.compiler import binary_of
    from tinytc_py.emulate import emulate
    from tinytc_py.errors import CompilationError
    from tinytc_py.target.core_info import CoreInfo, IntelGpuArchitecture

    info = CoreInfo.intel_from_arch(IntelGpuArchitecture[gpu])
    try:
        binary = binary_of(text, info)
    except CompilationError as e:
        if "subgroup size" not in str(e):
            raise
        if "subgroup_local_id" in text and "subgroup_size :" not in text:
            # data indexed by lane ids of a fixed count: a wider subgroup would overrun it
            # (kernels that read the subgroup size, like `elementwise`, adapt to it)
            pytest.skip(f"{gpu}: {str(e).splitlines()[0]}")
        wider = re.sub(r"subgroup_size=(4|8)\b", "subgroup_size=16", text)
        wider = re.sub(
            r"work_group_size=\[(\d+),",
            lambda m: f"work_group_size=[{-(-int(m.group(1)) // 16) * 16},",
            wider,
        )
        try:
            binary = binary_of(wider, info)
        except CompilationError as e2:
            pytest.skip(f"{gpu}: {str(e2).splitlines()[0]}")
    return program(emulate(binary, gpu))


def bf16_bits(x) -> np.ndarray:
    """float32 -> bf16 bits (round to nearest even; NaN stays a quiet NaN of the same sign)."""
    with np.errstate(over="ignore"):
        f = np.asarray(x, np.float32)
    b = f.view(np.uint32).astype(np.uint64)
    rounded = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(f), (b >> 16).astype(np.uint16) | 0x40, rounded).astype(np.uint16)


def bf16_value(bits) -> np.ndarray:
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


# ---- element-wise kernels over every scalar type ------------------------------------------------

NP_DTYPE = DTYPES  # bf16 as raw uint16 bits
INT_TYPES = ("i8", "i16", "i32", "i64", "index")
FLOAT_TYPES = ("bf16", "f16", "f32", "f64")
COMPLEX_TYPES = ("c32", "c64")
NUMBER_TYPES = INT_TYPES + FLOAT_TYPES + COMPLEX_TYPES
COMPONENT = {"c32": "f32", "c64": "f64"}

WG = 16  # work-group size of the element-wise kernels
SG = 8


def elementwise(name: str, params: str, body: list[str]) -> str:
    """Kernel @name(params) running `body` for every i < size(%a, 0) (one work-item each)."""
    lines = "\n".join(" " * 12 + line for line in body)
    return f"""
func @{name}({params}) attributes {{subgroup_size={SG}, work_group_size=[{WG},1]}} {{
    parallel {{
        %gid = group_id.x : index
        %sg = subgroup_id.x : i32
        %lid = subgroup_local_id : i32
        %S = subgroup_size : i32
        %t0 = mul %sg, %S : i32
        %t1 = add %t0, %lid : i32
        %t2 = cast %t1 : index
        %W = constant {WG} : index
        %g0 = mul %gid, %W : index
        %i = add %g0, %t2 : index
        %n = size %a[0] : index
        %inb = less_than %i, %n : bool
        if %inb {{
{lines}
        }}
    }}
}}
"""


def num_groups(n: int) -> int:
    return -(-n // WG)


def store_lines(k: int, value: str, rty: str, out: str, at: str | None = None) -> list[str]:
    """Store `value` (of type rty) into column k of `out` (or at the indices `at`); a bool is
    stored as i32 0/1."""
    lines = [f"%k{k} = constant {k} : index"]
    if rty == "bool":
        lines += [
            f"%b{k} = if {value} -> (i32) {{",
            f"    %one{k} = constant 1 : i32",
            f"    yield (%one{k})",
            "} else {",
            f"    %zero{k} = constant 0 : i32",
            f"    yield (%zero{k})",
            "}",
        ]
        value = f"%b{k}"
    return lines + [f"store {value}, {out}[{at or f'%i, %k{k}'}]"]


#: compare instructions and their NumPy functions
CMP = {
    "equal": np.equal,
    "not_equal": np.not_equal,
    "greater_than": np.greater,
    "greater_than_equal": np.greater_equal,
    "less_than": np.less,
    "less_than_equal": np.less_equal,
}

_INPUTS = (("%a", "%x"), ("%b", "%y"))
_OUT_TYPE = {"bool": "i32"}  # results stored to %out as this type instead


def ops_source(
    ty: str, exprs: list[str], n_inputs: int, rty: str | None = None, pre: Sequence[str] = ()
) -> str:
    """The kernel @ops of `run_ops`: it loads %x (and %y) of type ty from %a (and %b), runs the
    `pre` lines and stores each `exprs[k]` of type `rty` to column k of %out."""
    rty = rty or ty
    params, body = [], []
    for mem, val in _INPUTS[:n_inputs]:
        params.append(f"{mem}: memref<{ty}x?>")
        body.append(f"{val} = load {mem}[%i] : {ty}")
    body += pre
    params.append(f"%out: memref<{_OUT_TYPE.get(rty, rty)}x?x{len(exprs)}>")
    for k, expr in enumerate(exprs):
        body.append(f"%r{k} = {expr} : {rty}")
        body += store_lines(k, f"%r{k}", rty, "%out")
    return elementwise("ops", ", ".join(params), body)


def run_ops(
    ty: str,
    exprs: list[str],
    inputs: list[np.ndarray],
    rty: str | None = None,
    pre: Sequence[str] = (),
) -> np.ndarray:
    """Apply every `exprs[k]` (operands %x, %y: elements of inputs[0], inputs[1], of type ty,
    and whatever the `pre` lines define) and return the results as column k of an
    (n, len(exprs)) array of type `rty` (default ty; "bool" gives int32 0/1)."""
    rty = rty or ty
    src = ops_source(ty, exprs, len(inputs), rty, pre)
    n = len(inputs[0])
    out = np.zeros((n, len(exprs)), dtype=NP_DTYPE[_OUT_TYPE.get(rty, rty)], order="F")
    build(src).kernel("ops")(*inputs, out, num_groups=num_groups(n))
    return out


def as_float64(x, ty: str) -> np.ndarray:
    """Values of a float type (bf16: bits) as float64."""
    if ty == "bf16":
        return bf16_value(x).astype(np.float64)
    return np.asarray(x).astype(np.float64)


def ulp_of(want: np.ndarray, ty: str) -> np.ndarray:
    """The spacing of floating type `ty` at the (float64) values `want`."""
    if ty == "bf16":
        return np.spacing(np.abs(want).astype(np.float32)).astype(np.float64) * 2.0**16
    return np.spacing(np.abs(want).astype(NP_DTYPE[ty])).astype(np.float64)


def assert_ulp(got, want, ty: str, ulp: float, err_msg: str = "") -> None:
    """`got` (of float type ty) is within `ulp` units in the last place of the float64 reference
    `want`; nan must give nan, and infinities and zeros must match exactly (incl. sign)."""
    g = as_float64(got, ty)
    w = np.asarray(want, np.float64)
    with np.errstate(over="ignore"):  # results beyond the type's range must overflow to inf
        rounded = as_float64(bf16_bits(w) if ty == "bf16" else w.astype(NP_DTYPE[ty]), ty)
    w = np.where(np.isinf(rounded), rounded, w)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=f"{err_msg}: nan")
    exact = np.isinf(w) | (w == 0)
    np.testing.assert_array_equal(g[exact], w[exact], err_msg=f"{err_msg}: inf/0")
    np.testing.assert_array_equal(
        np.signbit(g[exact]), np.signbit(w[exact]), err_msg=f"{err_msg}: sign of inf/0"
    )
    fin = np.isfinite(w) & ~exact
    err = np.abs(g[fin] - w[fin]) / ulp_of(w[fin], ty)
    bad = np.flatnonzero(~(err <= ulp))
    assert bad.size == 0, (
        f"{err_msg}: {bad.size} values off by more than {ulp} ulp, e.g. got {g[fin][bad[:5]]} "
        f"want {w[fin][bad[:5]]} ({err[bad[:5]]} ulp)"
    )


# ---- subgroup and work-group operations ---------------------------------------------------------


def group_reference(op: str, x: np.ndarray, wrap) -> np.ndarray:
    """NumPy result of a subgroup_ or work_group_ {reduce,inclusive_scan,exclusive_scan}_
    {add,max,min} over x (in order), computed wide and converted back by `wrap`."""
    kind, opn = op.removeprefix("subgroup_").removeprefix("work_group_").rsplit("_", 1)
    f = {"add": np.add, "max": np.maximum, "min": np.minimum}[opn]
    wide = x.astype(
        np.complex128 if np.iscomplexobj(x) else np.float64 if x.dtype.kind == "f" else np.int64
    )
    scan = f.accumulate(wide)
    if kind == "reduce":
        r = np.full_like(wide, scan[-1])
    elif kind == "inclusive_scan":
        r = scan
    else:
        if opn == "add":
            identity = 0
        elif x.dtype.kind == "f":
            identity = -np.inf if opn == "max" else np.inf
        else:
            info = np.iinfo(x.dtype)
            identity = info.min if opn == "max" else info.max
        r = np.concatenate([[identity], scan[:-1]]).astype(wide.dtype)
    return wrap(r)


def device_subgroup_sizes() -> tuple[int, ...]:
    """The subgroup sizes of the device programs are built for: the emulated GPU's (`target`),
    else the CPU OpenCL device's (from its detected core info)."""
    from tinytc_py.runtime.opencl import core_info_for
    from tinytc_py.target.core_info import CoreInfo, IntelGpuArchitecture

    gpu = target()
    if gpu is not None:
        return tuple(CoreInfo.intel_from_arch(IntelGpuArchitecture[gpu]).subgroup_sizes)
    dev = _device_or_none()
    if dev is None:
        pytest.skip("no SPIR-V capable OpenCL device")
    return tuple(core_info_for(dev).subgroup_sizes)
