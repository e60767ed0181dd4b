"""OpenCL runtime (pyopencl): build compiled programs for a device and launch kernels.

    prog = program(text_or_prog_or_binary)          # default device, cached per context
    k = prog.kernel("name")
    k(A, B, 2.0, num_groups=(n, 1, 1))              # host arrays in place or copied in and back

Arguments follow the calling convention of docs/design.md §B1 as runtime/launch.py describes, which
also checks every launch first. OpenCL specifics: host memory (runtime/host_arrays.py) is used
in place on a device with fine-grained system SVM (Intel's CPU runtime) when its layout and
alignment fit, else staged in a cl.Buffer and copied back if the kernel writes it;
`pyopencl.array.Array`s are used in place, also from another context on the same device (the
kernel is then built in that context); `Memref(buffer, ...)` takes a plain cl.Buffer;
`cl.LocalMemory` fills a local memref parameter. Groups need fine-grained SVM (pointers stored
in memory): the pointer and dope tables are SVM allocations, and so are the members' copies.
Launch: global size = num_groups x work-group size (docs/design.md §B2.3).
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import device as _device  # sets OCL_ICD_VENDORS before pyopencl lists platforms

cl = _device.cl

from .. import kernel_cache  # noqa: E402
from ..binary import Binary, KernelInfo, ParamInfo  # noqa: E402
from ..compiler import binary_of  # noqa: E402
from ..errors import Status, TinytcError  # noqa: E402
from ..ir.enums import OptFlag  # noqa: E402
from ..ir.types import DYNAMIC  # noqa: E402
from ..target.core_info import CoreFeature, CoreInfo  # noqa: E402
from .autotune import autotune as tune  # noqa: E402
from .cl_core_info import core_info_from_cl_device  # noqa: E402
from .host_arrays import require_host_array, require_writable  # noqa: E402
from .launch import (  # noqa: E402 - re-exported: the launch API of this module
    DTYPES,
    BuiltKernel,
    BuiltProgram,
    Grid,
    Group,
    Memref,
    check_memref_shape,
    describe,
    dope_values,
    global_size,
    group_layout,
    group_members,
    in_place,
    invalid_argument,
    is_aligned,
    layout_and_own,
    own_layout,
    require_aligned,
    scalar_value,
    span,
    staged,
)

if TYPE_CHECKING:  # the runtime takes a program only to hand it to the compiler
    from ..ir.region import Prog

# ---- programs ----------------------------------------------------------------------------------

_programs: dict[tuple[int, str], Any] = {}
_core_infos: dict[int, CoreInfo] = {}


def core_info_for(dev: Any) -> CoreInfo:
    key = dev.int_ptr
    if key not in _core_infos:
        _core_infos[key] = core_info_from_cl_device(dev)
    return _core_infos[key]


def _built(program: Any, options: list[str], dev: Any) -> Any:
    try:
        with warnings.catch_warnings():  # a non-empty build log is no failure
            warnings.simplefilter("ignore", cl.CompilerWarning)
            return program.build(options=options, devices=[dev])
    except cl.Error as e:
        raise TinytcError(Status.compute_runtime_error, f"program build failed: {e}") from e


def build(binary: Binary, context: Any, dev: Any) -> Any:
    """The built cl.Program of `binary` (kept per context and binary; the device binary comes
    from the kernel cache when it has one)."""
    key = (context.int_ptr, hashlib.sha256(binary.data).hexdigest())
    prg = _programs.get(key)
    if prg is None:
        options = []
        if binary.core_features & CoreFeature.large_register_file and dev.type & cl.device_type.GPU:
            options.append("-cl-intel-256-GRF-per-thread")
        if binary.format == "native":
            prg = _built(cl.Program(context, [dev], [binary.data]), options, dev)
        else:
            prg = kernel_cache.native_build(
                binary,
                " ".join(options),
                _device.device_identity(dev),
                lambda: _built(cl.Program(context, binary.data), options, dev),
                lambda p: p.get_info(cl.program_info.BINARIES)[0],
                lambda data: _built(cl.Program(context, [dev], [data]), options, dev),
            )
        _programs[key] = prg
    return prg


class Program(BuiltProgram):
    """A compiled program built into a cl.Program on one device."""

    def __init__(self, binary: Binary, context: Any, dev: Any) -> None:
        super().__init__(binary, context, dev)
        self.cl_program = build(binary, context, dev)


def program(
    source: str | Prog | Binary,
    dev: Any = None,
    context: Any = None,
    core_info: CoreInfo | None = None,
    autotune: bool | None = None,
) -> Program:
    """Compile (text or IR) and build for `dev` (default: the default device and context).

    `autotune` (default: the program context's OptFlag.autotune) times GEMM blockings on
    `dev` first, or reuses the tuning cache (gemm_tuning.py)."""
    if dev is None:
        dev = _device.default_device()
        context = context or _device.default_context()
    elif context is None:
        context = cl.Context([dev])
    info = core_info or core_info_for(dev)
    if not isinstance(source, Binary):
        if isinstance(source, str):
            from ..text.dialect import parse

            source = parse(source)
        if source.ctx.optimization_flag(OptFlag.autotune) if autotune is None else autotune:
            info = tune(source, dev, info, program)
    return Program(binary_of(source, info), context, dev)


# ---- launching ---------------------------------------------------------------------------------


class Kernel(BuiltKernel):
    """A kernel on an OpenCL device (launch API: runtime/launch.py, BuiltKernel).

    It runs in the context of its device arrays or `queue=` when they come from another context
    than the program's (a cl.Program and cl.Kernel are made there once)."""

    def __init__(self, prog: Program, info: KernelInfo) -> None:
        super().__init__(prog, info)
        self.cl_kernel = cl.Kernel(prog.cl_program, info.name)
        self._cl_kernels: dict[int, Any] = {prog.context.int_ptr: self.cl_kernel}

    def kernel_in(self, context: Any) -> Any:
        """The cl.Kernel of this kernel in `context` (built there on first use)."""
        k = self._cl_kernels.get(context.int_ptr)
        if k is None:
            prog = self.program
            built = build(prog.binary, context, prog.device)
            k = self._cl_kernels[context.int_ptr] = cl.Kernel(built, self.info.name)
        return k

    def launch(self, args: list[Any], grid: Grid, queue: Any) -> None:
        context, queue = _context_and_queue(self, args, queue)
        binder = _ArgBinder(self, self.kernel_in(context), queue)
        local = self.work_group_size
        try:
            with self.launch_lock:  # released before the wait: launches still overlap
                if not self.bind_checked(binder, args, grid):
                    return
                cl.enqueue_nd_range_kernel(queue, binder.cl_kernel, global_size(grid, local), local)
            binder.finish()
        except cl.Error as e:
            raise self.launch_failed(e) from None


DEVICE_KINDS = "a pyopencl array, a tinytc_py.Memref of a cl.Buffer"


def _is_cl_array(a: Any) -> bool:
    return not isinstance(a, np.ndarray) and hasattr(a, "base_data") and hasattr(a, "context")


def _device_context(a: Any) -> Any:
    """The OpenCL context of a device-memory argument, or None for host memory."""
    if _is_cl_array(a):
        return a.context
    if isinstance(a, Memref) and isinstance(a.buffer, cl.MemoryObjectHolder):
        return a.buffer.context
    if isinstance(a, cl.MemoryObjectHolder):
        return a.context
    return None


_HOST_KINDS = frozenset({np.ndarray, float, int})  # argument types that have no OpenCL context


@functools.lru_cache(maxsize=64)
def _device_ids(context: Any) -> frozenset[int]:
    """The devices of a context (their int_ptr), asked once per context."""
    return frozenset(d.int_ptr for d in context.devices)


@functools.cache
def _has_system_svm(dev: Any) -> bool:
    """Whether the device reads any host memory (fine-grained system SVM)."""
    return bool(dev.svm_capabilities & cl.device_svm_capabilities.FINE_GRAIN_SYSTEM)


def _context_and_queue(kernel: Kernel, args: Sequence[Any], queue: Any) -> tuple[Any, Any]:
    """Where the launch runs: the context of `queue` or of the device arrays (they must agree,
    and contain the kernel's device), else the program's, and the queue on it."""
    info, dev = kernel.info, kernel.program.device
    found: list[tuple[Any, str]] = []
    array_queue = None  # the queue of the first pyopencl array that has one
    if queue is not None:
        if not isinstance(queue, cl.CommandQueue):
            raise TypeError(
                f"kernel @{info.name}: queue must be a pyopencl.CommandQueue, got {describe(queue)}"
            )
        if queue.device.int_ptr != dev.int_ptr:
            raise invalid_argument(
                f"kernel @{info.name}: queue= is on {queue.device.name.strip()!r}, the kernel on"
                f" {dev.name.strip()!r}"
            )
        found.append((queue.context, "queue="))
    for k, a in enumerate(args):
        if type(a) in _HOST_KINDS:  # the common arguments: no context
            continue
        ctx = _device_context(a)
        if ctx is None:
            continue
        if array_queue is None and _is_cl_array(a):
            array_queue = a.queue
        if dev.int_ptr not in _device_ids(ctx):
            names = ", ".join(repr(d.name.strip()) for d in ctx.devices)
            raise invalid_argument(
                f"{kernel.labels[k]} in memory of the kernel's device {dev.name.strip()!r}, got"
                f" memory of another device ({names})"
            )
        found.append((ctx, f"%{info.params[k].name}"))
    contexts = {ctx.int_ptr: ctx for ctx, _ in found}
    if len(contexts) > 1:
        raise invalid_argument(
            f"kernel @{info.name}: the memory of {', '.join(w for _, w in found)} belongs to"
            " different OpenCL contexts; one launch takes one context"
        )
    if not contexts:
        context = kernel.program.context
    else:
        (context,) = contexts.values()
    if queue is None:
        queue = array_queue
        if queue is None or queue.context.int_ptr != context.int_ptr:
            queue = (
                _device.default_queue()
                if context == _device.default_context()
                else cl.CommandQueue(context, dev)
            )
    return context, queue


# pyopencl's own path for an argument given as a buffer (a NumPy scalar), a private method:
# Kernel.set_arg tries the other kinds of argument first and takes 7-8 us per NumPy scalar,
# this 0.1 us (a batched GEMM launch sets five: alpha, beta and each memref's batch extent, 40
# of its 106 us, docs/_benchmarks.rst). (pyopencl's generated set_args calls its sibling
# _set_arg_buf_multi, which takes many arguments at once.) None (set_arg) where pyopencl has no
# such path, or once it refused a call (_ArgBinder.set: a changed signature).
_SET_ARG_BUF = getattr(cl.Kernel, "_set_arg_buf", None)


def _host_view(arr: np.ndarray, strides: Sequence[int]) -> np.ndarray:
    """The bytes from arr's first element to one past its last, as a writable 1-d array (what
    cl.SVM takes; a read-only parameter's memory is never written, see ParamInfo.written)."""
    nbytes = span(arr.shape, strides) * arr.itemsize
    raw = (ctypes.c_char * nbytes).from_address(arr.ctypes.data)
    return np.frombuffer(memoryview(raw).cast("B"), dtype=np.uint8)


def _host_address(buffer: Any) -> int | None:
    """The host address where the memory of a cl.Buffer (or sub-buffer of one) made with
    USE_HOST_PTR starts, else None. A device may use such host memory in place (the CPU
    runtime does), so its alignment is the caller's; other buffers are allocated aligned."""
    offset = 0
    parent = buffer.get_info(cl.mem_info.ASSOCIATED_MEMOBJECT)
    while parent is not None:
        offset += buffer.get_info(cl.mem_info.OFFSET)
        buffer, parent = parent, parent.get_info(cl.mem_info.ASSOCIATED_MEMOBJECT)
    if not buffer.get_info(cl.mem_info.FLAGS) & cl.mem_flags.USE_HOST_PTR:
        return None
    # pyopencl hands out CL_MEM_HOST_PTR only as an array over it
    return int(buffer.get_host_array((1,), np.uint8).ctypes.data) + offset


def _require_base_aligned(memory: Any, p: ParamInfo, what: str, got: str) -> None:
    """The alignment check (launch.require_aligned) of OpenCL memory used in place: an SVM
    pointer's address, a cl.Buffer's host memory where it has any (`_host_address`)."""
    if not p.nontemporal_alignment:
        return
    svm = getattr(memory, "svm_ptr", None)
    if svm is not None:
        require_aligned(int(svm), p.nontemporal_alignment, what, f"{got} of SVM")
        return
    host = _host_address(memory)
    if host is not None:
        require_aligned(host, p.nontemporal_alignment, what, f"{got} of a cl.Buffer")


def _svm_in_place(arr: np.ndarray, strides: Sequence[int], alignment: int) -> Any:
    """The cl.SVM of arr's own memory, or None when it has not the base alignment the compiler
    assumed (in_place; the caller knows the strides are arr's own and arr is not empty). A
    writable contiguous array is its own view (cl.SVM(arr): 0.1 us, _host_view: 9 us)."""
    flags = arr.flags
    if flags.writeable and flags.forc:
        svm = cl.SVM(arr)
        return svm if is_aligned(svm.svm_ptr, alignment) else None
    if not is_aligned(arr.ctypes.data, alignment):
        return None
    return cl.SVM(_host_view(arr, strides))


# What a Memref may hold: an OpenCL memory object (a cl.Buffer) or SVM (cl.SVM).
_MEMORY_KINDS = (cl.MemoryObjectHolder, cl.SVM)


class _ArgBinder:
    """Sets kernel arguments and remembers what must be copied back after the launch.

    Host memory (host_arrays.py) is used in place when the device reads host memory (fine-grained
    system SVM, as Intel's CPU runtime has) and the array's layout and alignment fit; otherwise
    it is staged in a cl.Buffer and, for a parameter the kernel writes, copied back."""

    def __init__(self, kernel: Kernel, cl_kernel: Any, queue: Any) -> None:
        self.kernel = kernel
        self.info = kernel.info
        self.cl_kernel = cl_kernel
        self.queue = queue
        self.ctx = queue.context
        self.system_svm = _has_system_svm(kernel.program.device)
        self.copy_back: list[tuple[np.ndarray, Any, np.ndarray, np.ndarray]] = []
        self.svm_back: list[tuple[np.ndarray, np.ndarray]] = []
        self.keep: list[Any] = []
        self.what = ""  # the argument being set, for messages

    def set(self, index: int, value: Any) -> None:
        global _SET_ARG_BUF
        self.keep.append(value)
        try:
            if _SET_ARG_BUF is not None and isinstance(value, np.generic):
                try:
                    _SET_ARG_BUF(self.cl_kernel, index, value)
                    return
                except TypeError:  # another pyopencl's private method: set_arg from now on
                    _SET_ARG_BUF = None
            self.cl_kernel.set_arg(index, value)
        except (cl.Error, TypeError, ValueError) as e:  # what OpenCL or pyopencl refuses
            raise invalid_argument(f"{self.what}; OpenCL refused {describe(value)}: {e}") from None

    def set_all(self, first: int, values: Sequence[Any]) -> None:
        for i, v in enumerate(values):
            self.set(first + i, v)

    def bind(self, k: int, p: ParamInfo, a: Any) -> Sequence[int] | int:
        """Set argument k; its extents (shape, or a group's member count) for the grid check."""
        what = self.what = self.kernel.labels[k]
        if p.kind == "scalar":
            self.set(p.first_arg, scalar_value(p.dtype, a, what))
            return ()
        if p.kind == "memref":
            return self.memref(p, a, what)
        return self.group(p, a, what)

    def memref(self, p: ParamInfo, a: Any, what: str) -> Sequence[int]:
        if type(a) is np.ndarray:  # host memory, the common case: no other kind is tried
            self.host(p, a, what)
            return a.shape
        for kind in (self.local, self.memref_object, self.cl_array):
            shape = kind(p, a, what)
            if shape is not None:
                return shape
        if isinstance(a, cl.MemoryObjectHolder):
            raise TypeError(
                f"{what}, got a bare {type(a).__name__}, which has no shape; pass"
                " tinytc_py.Memref(buffer, shape, strides)"
            )
        arr = require_host_array(a, what, DEVICE_KINDS)
        self.host(p, arr, what)
        return arr.shape

    def local(self, p: ParamInfo, a: Any, what: str) -> Sequence[int] | None:
        if not isinstance(a, cl.LocalMemory):
            return None
        if not p.local or DYNAMIC in p.shape or DYNAMIC in p.stride:
            raise invalid_argument(f"{what}, got cl.LocalMemory (only for a static local memref)")
        self.set(p.first_arg, a)
        return p.shape

    def memref_object(self, p: ParamInfo, a: Any, what: str) -> Sequence[int] | None:
        if not isinstance(a, Memref):
            return None
        check_memref_shape(p, a.shape, a.strides, what)
        if not isinstance(a.buffer, _MEMORY_KINDS):  # anything else could reach the kernel
            raise TypeError(
                f"{what}, got a tinytc_py.Memref of {describe(a.buffer)}; a Memref takes a"
                " cl.Buffer or a cl.SVM"
            )
        _require_base_aligned(a.buffer, p, what, "a tinytc_py.Memref")
        self.set(p.first_arg, a.buffer)
        self.set_all(p.first_arg + 1, dope_values(p, a.shape, a.strides))
        return a.shape

    def cl_array(self, p: ParamInfo, a: Any, what: str) -> Sequence[int] | None:
        """A pyopencl.array.Array, used in place."""
        if not _is_cl_array(a):
            return None
        strides = own_layout(p, a, what)
        if a.offset:
            raise invalid_argument(
                f"{what}, got a pyopencl array at offset {a.offset} into its buffer (pass a"
                " tinytc_py.Memref of a sub-buffer)"
            )
        _require_base_aligned(a.base_data, p, what, "a pyopencl array")
        self.set(p.first_arg, a.base_data)
        self.set_all(p.first_arg + 1, dope_values(p, a.shape, strides))
        return a.shape

    def host(self, p: ParamInfo, arr: np.ndarray, what: str) -> None:
        strides, own = layout_and_own(p, arr, what)
        require_writable(arr, p.written, what)
        svm = (
            _svm_in_place(arr, strides, p.alignment)
            if self.system_svm and own and arr.size
            else None
        )
        if svm is not None:
            self.set(p.first_arg, svm)
            self.set_all(p.first_arg + 1, dope_values(p, arr.shape, strides))
            self.keep.append(arr)
            return
        flat = np.zeros(max(1, span(arr.shape, strides)), dtype=arr.dtype)
        view = staged(arr, strides, flat)
        view[...] = arr
        mf = cl.mem_flags
        buf = cl.Buffer(self.ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=flat)
        self.set(p.first_arg, buf)
        self.set_all(p.first_arg + 1, dope_values(p, arr.shape, strides))
        if p.written:
            self.copy_back.append((arr, buf, flat, view))

    def svm(self, data: np.ndarray) -> np.ndarray:
        """A fine-grained SVM copy of a 1-d array."""
        out = cl.fsvm_empty(self.ctx, max(1, data.size), data.dtype, alignment=128)
        out[: data.size] = data
        self.keep.append(out)
        return out

    def group(self, p: ParamInfo, a: Any, what: str) -> int:
        caps = self.kernel.program.device.svm_capabilities
        if not caps & cl.device_svm_capabilities.FINE_GRAIN_BUFFER:
            raise TinytcError(Status.unavailable_extension, "group arguments need fine-grained SVM")
        layout = group_layout(p, group_members(p, a, what), what)
        ptrs = np.zeros(max(1, len(layout.members)), dtype=np.uint64)
        for i, m in enumerate(layout.members):
            if (
                self.system_svm
                and layout.offset == 0
                and in_place(m, layout.strides[i], p.alignment)
            ):
                ptrs[i] = m.ctypes.data
                continue
            mem = self.svm(np.zeros(layout.sizes[i], dtype=m.dtype))
            view = staged(m, layout.strides[i], mem, layout.offset)
            view[...] = m
            ptrs[i] = mem.__array_interface__["data"][0]
            if p.written:
                self.svm_back.append((m, view))
        tables = [cl.SVM(self.svm(t)) for t in [ptrs, *layout.tables]]
        self.set_all(p.first_arg, tables + layout.trailing(p))
        return len(layout.members)

    def finish(self) -> None:
        for _arr, buf, flat, _view in self.copy_back:
            cl.enqueue_copy(self.queue, flat, buf)
        self.queue.finish()
        for arr, _buf, _flat, view in self.copy_back:
            arr[...] = view
        for arr, view in self.svm_back:
            arr[...] = view


Program.kernel_class = Kernel


__all__ = [
    "DTYPES",
    "Group",
    "Kernel",
    "Memref",
    "Program",
    "build",
    "core_info_for",
    "global_size",
    "program",
]
