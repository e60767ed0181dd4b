"""OpenCL runtime (pyopencl): build compiled programs for a device and launch kernels.

    prog = program(text_or_prog_or_binary)          # default device, cached per context
    k = prog.kernel("name")
    k(A, B, 2.0, num_groups=(n, 1, 1))              # NumPy arrays are copied in and back

Arguments follow the calling convention of backend.md §1, filled from the kernel metadata:
- scalars: Python or NumPy numbers, converted to the parameter's type (bf16: a float, rounded,
  or np.uint16 bits);
- memrefs: NumPy arrays (tinytc memrefs are column-major; the array's own element strides are
  used when they fit the memref type, otherwise a Fortran-ordered copy; results are copied back
  into the array after the launch), `pyopencl.array.Array`s (used in place), `Memref(buffer,
  shape, strides)` for a plain cl.Buffer, or `cl.LocalMemory` for a local memref parameter;
- groups: a list of NumPy arrays or `Group(members, offset)`. Groups need fine-grained SVM
  (pointers stored in memory): the member data, the pointer array and the per-member shape and
  stride arrays are SVM allocations; member i's data starts `offset` elements after G[i].
Dynamic shape and stride entries are int64, in elements.
Launch: global size = num_groups x work-group size (backend.md §2.3).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import device as _device  # sets OCL_ICD_VENDORS before pyopencl lists platforms

cl = _device.cl

from ..compiler import Binary, compile_to_spirv  # noqa: E402
from ..errors import Status, TinytcError  # noqa: E402
from ..ir.region import Prog  # noqa: E402
from ..ir.types import DYNAMIC  # noqa: E402
from ..spirv.convert import KernelInfo, ParamInfo, float_to_bf16_bits  # noqa: E402
from ..target.core_info import CoreFeature, CoreInfo  # noqa: E402
from .cl_core_info import core_info_from_cl_device  # noqa: E402

DTYPES = {
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "index": np.int64,
    "bf16": np.uint16,
    "f16": np.float16,
    "f32": np.float32,
    "f64": np.float64,
    "c32": np.complex64,
    "c64": np.complex128,
}


@dataclass
class Memref:
    """A device buffer viewed as a memref: shape and strides in elements."""

    buffer: Any
    shape: tuple[int, ...]
    strides: tuple[int, ...]


@dataclass
class Group:
    """Group argument: member arrays and the offset (in elements) applied to every member."""

    members: Sequence[np.ndarray]
    offset: int = 0


# ---- programs ----------------------------------------------------------------------------------

_programs: dict[tuple[int, str], Any] = {}
_core_infos: dict[int, CoreInfo] = {}


def core_info_for(dev: Any) -> CoreInfo:
    key = dev.int_ptr
    if key not in _core_infos:
        _core_infos[key] = core_info_from_cl_device(dev)
    return _core_infos[key]


def build(binary: Binary, context: Any, dev: Any) -> Any:
    """The built cl.Program of `binary` (cached per context and binary)."""
    key = (context.int_ptr, hashlib.sha256(binary.data).hexdigest())
    prg = _programs.get(key)
    if prg is None:
        options = []
        if binary.core_features & CoreFeature.large_register_file and dev.type & cl.device_type.GPU:
            options.append("-cl-intel-256-GRF-per-thread")
        try:
            prg = cl.Program(context, binary.data).build(options=options, devices=[dev])
        except cl.Error as e:
            raise TinytcError(Status.compute_runtime_error, f"program build failed: {e}") from e
        _programs[key] = prg
    return prg


class Program:
    """A compiled and built program on one device."""

    def __init__(self, binary: Binary, context: Any, dev: Any) -> None:
        self.binary = binary
        self.context = context
        self.device = dev
        self.cl_program = build(binary, context, dev)
        self._kernels: dict[str, Kernel] = {}

    def kernel(self, name: str) -> Kernel:
        k = self._kernels.get(name)
        if k is None:
            k = self._kernels[name] = Kernel(self, self.binary.kernel(name))
        return k


def program(
    source: str | Prog | Binary,
    dev: Any = None,
    context: Any = None,
    core_info: CoreInfo | None = None,
) -> Program:
    """Compile (text or IR) and build for `dev` (default: the default device and context)."""
    if dev is None:
        dev = _device.default_device()
        context = context or _device.default_context()
    elif context is None:
        context = cl.Context([dev])
    if isinstance(source, Binary):
        binary = source
    else:
        if isinstance(source, str):
            from ..text.parser import parse

            source = parse(source)
        binary = compile_to_spirv(source, core_info or core_info_for(dev))
    return Program(binary, context, dev)


# ---- launching ---------------------------------------------------------------------------------


class Kernel:
    def __init__(self, prog: Program, info: KernelInfo) -> None:
        self.program = prog
        self.info = info
        self.cl_kernel = cl.Kernel(prog.cl_program, info.name)

    @property
    def work_group_size(self) -> tuple[int, int, int]:
        return (*self.info.work_group_size, 1)

    def __call__(self, *args: Any, num_groups: int | Sequence[int] = 1, queue: Any = None) -> None:
        launch(self, args, num_groups, queue)


def global_size(num_groups: int | Sequence[int], local: Sequence[int]) -> tuple[int, int, int]:
    ng = (num_groups,) if isinstance(num_groups, int) else tuple(num_groups)
    ng = (ng + (1, 1, 1))[:3]
    return tuple(n * l for n, l in zip(ng, local, strict=False))  # type: ignore[return-value]


def launch(
    kernel: Kernel, args: Sequence[Any], num_groups: int | Sequence[int] = 1, queue: Any = None
) -> None:
    """Set the arguments of `kernel` from `args` (one per IR parameter), run it on
    num_groups work-groups and copy NumPy results back."""
    info = kernel.info
    if len(args) != len(info.params):
        raise TinytcError(
            Status.invalid_kernel_arguments,
            f"{info.name} takes {len(info.params)} arguments, got {len(args)}",
        )
    prog = kernel.program
    queue = queue or (
        _device.default_queue()
        if prog.context is _device.default_context()
        else cl.CommandQueue(prog.context)
    )
    binder = _ArgBinder(kernel, queue)
    for k, (p, a) in enumerate(zip(info.params, args, strict=False)):
        binder.bind(k, p, a)
    local = kernel.work_group_size
    cl.enqueue_nd_range_kernel(queue, kernel.cl_kernel, global_size(num_groups, local), local)
    binder.finish()


def _elem_strides(arr: np.ndarray) -> tuple[int, ...] | None:
    size = arr.dtype.itemsize  # pyopencl.array.Array has no .itemsize
    if any(s <= 0 or s % size for s, n in zip(arr.strides, arr.shape, strict=False) if n > 1):
        return None
    return tuple(s // size if n > 1 else 0 for s, n in zip(arr.strides, arr.shape, strict=False))


def _fortran_strides(shape: Sequence[int]) -> tuple[int, ...]:
    out, s = [], 1
    for n in shape:
        out.append(s)
        s *= n
    return tuple(out)


def _fits(p: ParamInfo, shape: Sequence[int], strides: Sequence[int]) -> bool:
    return all(
        e in (DYNAMIC, x) or n <= 1 for e, x, n in zip(p.stride, strides, shape, strict=False)
    )


def _memref_layout(p: ParamInfo, arr: np.ndarray, what: str) -> tuple[int, ...]:
    """Element strides to pass `arr` with (its own if they fit the type, else Fortran order)."""
    if arr.ndim != len(p.shape) or any(
        e not in (DYNAMIC, n) for e, n in zip(p.shape, arr.shape, strict=False)
    ):
        raise TinytcError(
            Status.invalid_kernel_arguments,
            f"{what}: array shape {arr.shape} does not fit memref shape",
        )
    want = np.dtype(DTYPES[p.dtype])
    if arr.dtype != want:
        raise TinytcError(
            Status.invalid_kernel_arguments, f"{what}: expected dtype {want}, got {arr.dtype}"
        )
    fortran = _fortran_strides(arr.shape)
    full_stride = tuple(fortran)
    if DYNAMIC not in p.stride:
        full_stride = p.stride
    for cand in (_elem_strides(arr), fortran, full_stride):
        if cand is not None and _fits(p, arr.shape, cand):
            return tuple(c if c else f for c, f in zip(cand, fortran, strict=False))
    raise TinytcError(
        Status.invalid_kernel_arguments, f"{what}: no layout of the array fits the memref strides"
    )


def _span(shape: Sequence[int], strides: Sequence[int]) -> int:
    if any(n == 0 for n in shape):
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(shape, strides, strict=False))


def _staged(
    arr: np.ndarray, strides: Sequence[int], flat: np.ndarray, offset: int = 0
) -> np.ndarray:
    """A view of `flat` (from element `offset`) with arr's shape and the given strides."""
    item = arr.itemsize
    return np.lib.stride_tricks.as_strided(
        flat[offset:], shape=arr.shape, strides=tuple(s * item for s in strides)
    )


class _ArgBinder:
    """Sets kernel arguments and remembers what must be copied back after the launch."""

    def __init__(self, kernel: Kernel, queue: Any) -> None:
        self.kernel = kernel
        self.queue = queue
        self.ctx = kernel.program.context
        self.copy_back: list[tuple[np.ndarray, Any, np.ndarray, np.ndarray]] = []
        self.svm_back: list[tuple[np.ndarray, np.ndarray]] = []
        self.keep: list[Any] = []

    def set(self, index: int, value: Any) -> None:
        self.keep.append(value)
        self.kernel.cl_kernel.set_arg(index, value)

    def bind(self, k: int, p: ParamInfo, a: Any) -> None:
        what = f"{self.kernel.info.name} argument {k}"
        if p.kind == "scalar":
            self.set(p.first_arg, _scalar(p.dtype, a, what))
        elif p.kind == "memref":
            self.memref(p, a, what)
        else:
            self.group(p, a, what)

    def dope(self, p: ParamInfo, first: int, shape: Sequence[int], strides: Sequence[int]) -> None:
        pos = first + 1
        for e, n in zip(p.shape, shape, strict=False):
            if e == DYNAMIC:
                self.set(pos, np.int64(n))
                pos += 1
        for e, s in zip(p.stride, strides, strict=False):
            if e == DYNAMIC:
                self.set(pos, np.int64(s))
                pos += 1

    def memref(self, p: ParamInfo, a: Any, what: str) -> None:
        if isinstance(a, cl.LocalMemory):
            if DYNAMIC in p.shape or DYNAMIC in p.stride:
                raise TinytcError(Status.invalid_kernel_arguments, f"{what}: dynamic local memref")
            self.set(p.first_arg, a)
            return
        if isinstance(a, Memref):
            self.set(p.first_arg, a.buffer)
            self.dope(p, p.first_arg, a.shape, a.strides)
            return
        if not isinstance(a, np.ndarray) and hasattr(a, "base_data"):  # pyopencl.array.Array
            if a.offset:
                raise TinytcError(Status.invalid_kernel_arguments, f"{what}: array with offset")
            strides = _elem_strides(a) or _fortran_strides(a.shape)
            self.set(p.first_arg, a.base_data)
            self.dope(p, p.first_arg, a.shape, strides)
            return
        arr = np.asarray(a)
        strides = _memref_layout(p, arr, what)
        flat = np.zeros(max(1, _span(arr.shape, strides)), dtype=arr.dtype)
        view = _staged(arr, strides, flat)
        view[...] = arr
        mf = cl.mem_flags
        buf = cl.Buffer(self.ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=flat)
        self.set(p.first_arg, buf)
        self.dope(p, p.first_arg, arr.shape, strides)
        if isinstance(a, np.ndarray) and a.flags.writeable:
            self.copy_back.append((a, buf, flat, view))

    def svm(self, data: np.ndarray) -> np.ndarray:
        """A fine-grained SVM copy of a 1-d array."""
        if (
            not self.kernel.program.device.svm_capabilities
            & cl.device_svm_capabilities.FINE_GRAIN_BUFFER
        ):
            raise TinytcError(Status.unavailable_extension, "group arguments need fine-grained SVM")
        out = cl.fsvm_empty(self.ctx, max(1, data.size), data.dtype, alignment=128)
        out[: data.size] = data
        self.keep.append(out)
        return out

    def group(self, p: ParamInfo, a: Any, what: str) -> None:
        grp = a if isinstance(a, Group) else Group(list(a))
        members = [np.asarray(m) for m in grp.members]
        offset = grp.offset
        if p.size != DYNAMIC and p.size != len(members):
            raise TinytcError(
                Status.invalid_kernel_arguments,
                f"{what}: group size {p.size}, got {len(members)} members",
            )
        if p.offset != DYNAMIC and offset != p.offset:
            raise TinytcError(
                Status.invalid_kernel_arguments, f"{what}: group offset is {p.offset}"
            )
        ptrs = np.zeros(max(1, len(members)), dtype=np.uint64)
        dyn_shape = [i for i, e in enumerate(p.shape) if e == DYNAMIC]
        dyn_stride = [i for i, e in enumerate(p.stride) if e == DYNAMIC]
        shapes = np.zeros((len(dyn_shape), max(1, len(members))), dtype=np.int64)
        strides_arr = np.zeros((len(dyn_stride), max(1, len(members))), dtype=np.int64)
        for i, m in enumerate(members):
            strides = _memref_layout(p, m, f"{what} member {i}")
            data = np.zeros(offset + max(1, _span(m.shape, strides)), dtype=m.dtype)
            mem = self.svm(data)
            view = _staged(m, strides, mem, offset)
            view[...] = m
            ptrs[i] = mem.__array_interface__["data"][0]
            shapes[:, i] = [m.shape[j] for j in dyn_shape]
            strides_arr[:, i] = [strides[j] for j in dyn_stride]
            if m.flags.writeable and isinstance(grp.members[i], np.ndarray):
                self.svm_back.append((grp.members[i], view))
        pos = p.first_arg
        self.set(pos, cl.SVM(self.svm(ptrs)))
        for row in list(shapes) + list(strides_arr):
            pos += 1
            self.set(pos, cl.SVM(self.svm(row)))
        if p.size == DYNAMIC:
            pos += 1
            self.set(pos, np.int64(len(members)))
        if p.offset == DYNAMIC:
            pos += 1
            self.set(pos, np.int64(offset))

    def finish(self) -> None:
        for _arr, buf, flat, _view in self.copy_back:
            cl.enqueue_copy(self.queue, flat, buf)
        self.queue.finish()
        for arr, _buf, _flat, view in self.copy_back:
            arr[...] = view
        for arr, view in self.svm_back:
            arr[...] = view


def _scalar(dtype: str, value: Any, what: str) -> np.generic:
    if dtype not in DTYPES:
        raise TinytcError(
            Status.invalid_kernel_arguments, f"{what}: {dtype} cannot be a kernel argument"
        )
    try:
        if dtype == "bf16" and not isinstance(value, np.uint16):
            return np.uint16(float_to_bf16_bits(float(value)))
        with np.errstate(over="ignore"):  # a float beyond the type's range is inf, as in a cast
            return DTYPES[dtype](value)
    except (OverflowError, TypeError, ValueError) as e:  # e.g. 300 for an i8, nan for an i32
        raise TinytcError(
            Status.invalid_kernel_arguments, f"{what}: {value!r} is not a valid {dtype} ({e})"
        ) from e


__all__ = [
    "Group",
    "Kernel",
    "Memref",
    "Program",
    "build",
    "core_info_for",
    "global_size",
    "launch",
    "program",
]
