"""OpenCL runtime (pyopencl): build compiled programs for a device and launch kernels.

    prog = program(text_or_prog_or_binary)          # default device, cached per context
    k = prog.kernel("name")
    k(A, B, 2.0, num_groups=(n, 1, 1))              # NumPy arrays are copied in and back

Arguments follow the calling convention of docs/design.md §B1 as `runtime.args` describes. OpenCL
specifics: NumPy memrefs are staged in a cl.Buffer and copied back after the launch;
`pyopencl.array.Array`s are used in place; `Memref(buffer, ...)` takes a plain cl.Buffer;
`cl.LocalMemory` fills a local memref parameter. Groups need fine-grained SVM (pointers stored
in memory): the member data, the pointer table and the dope tables are SVM allocations.
Launch: global size = num_groups x work-group size (docs/design.md §B2.3).
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import device as _device  # sets OCL_ICD_VENDORS before pyopencl lists platforms

cl = _device.cl

from .. import kernel_cache  # noqa: E402
from ..compiler import Binary, binary_of  # noqa: E402
from ..errors import Status, TinytcError  # noqa: E402
from ..ir.enums import OptFlag  # noqa: E402
from ..ir.types import DYNAMIC  # noqa: E402
from ..spirv.convert import KernelInfo, ParamInfo  # noqa: E402
from ..target.core_info import CoreFeature, CoreInfo  # noqa: E402
from .autotune import autotune as tune  # noqa: E402
from .bounds_report import raise_if_violated, with_report  # noqa: E402
from .cl_core_info import core_info_from_cl_device  # noqa: E402
from .launch import (  # noqa: E402 - re-exported: the launch API of this module
    DTYPES,
    BuiltKernel,
    BuiltProgram,
    Group,
    Memref,
    check_arg_count,
    dope_values,
    elem_strides,
    fortran_strides,
    global_size,
    group_layout,
    invalid_argument,
    memref_layout,
    scalar_value,
    span,
    staged,
    writeback_targets,
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
            from ..text.parser import parse

            source = parse(source)
        if source.ctx.optimization_flag(OptFlag.autotune) if autotune is None else autotune:
            info = tune(source, dev, info)
    return Program(binary_of(source, info), context, dev)


# ---- launching ---------------------------------------------------------------------------------


class Kernel(BuiltKernel):
    def __init__(self, prog: Program, info: KernelInfo) -> None:
        super().__init__(prog, info)
        self.cl_kernel = cl.Kernel(prog.cl_program, info.name)

    def __call__(self, *args: Any, num_groups: int | Sequence[int] = 1, queue: Any = None) -> None:
        launch(self, args, num_groups, queue)


def launch(
    kernel: Kernel, args: Sequence[Any], num_groups: int | Sequence[int] = 1, queue: Any = None
) -> None:
    """Set the arguments of `kernel` from `args` (one per IR parameter), run it on
    num_groups work-groups and copy NumPy results back."""
    info = kernel.info
    args, report = with_report(info, args)
    check_arg_count(info.name, info.params, args)
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
    raise_if_violated(info, report)


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

    def set_all(self, first: int, values: Sequence[Any]) -> None:
        for i, v in enumerate(values):
            self.set(first + i, v)

    def bind(self, k: int, p: ParamInfo, a: Any) -> None:
        what = f"{self.kernel.info.name} argument {k}"
        if p.kind == "scalar":
            self.set(p.first_arg, scalar_value(p.dtype, a, what))
        elif p.kind == "memref":
            self.memref(p, a, what)
        else:
            self.group(p, a, what)

    def memref(self, p: ParamInfo, a: Any, what: str) -> None:
        if isinstance(a, cl.LocalMemory):
            if DYNAMIC in p.shape or DYNAMIC in p.stride:
                raise invalid_argument(f"{what}: dynamic local memref")
            self.set(p.first_arg, a)
            return
        if isinstance(a, Memref):
            self.set(p.first_arg, a.buffer)
            self.set_all(p.first_arg + 1, dope_values(p, a.shape, a.strides))
            return
        if not isinstance(a, np.ndarray) and hasattr(a, "base_data"):  # pyopencl.array.Array
            if a.offset:
                raise invalid_argument(f"{what}: array with offset")
            strides = elem_strides(a) or fortran_strides(a.shape)
            self.set(p.first_arg, a.base_data)
            self.set_all(p.first_arg + 1, dope_values(p, a.shape, strides))
            return
        arr = np.asarray(a)
        strides = memref_layout(p, arr, what)
        flat = np.zeros(max(1, span(arr.shape, strides)), dtype=arr.dtype)
        view = staged(arr, strides, flat)
        view[...] = arr
        mf = cl.mem_flags
        buf = cl.Buffer(self.ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=flat)
        self.set(p.first_arg, buf)
        self.set_all(p.first_arg + 1, dope_values(p, arr.shape, strides))
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
        layout = group_layout(p, a, what)
        ptrs = np.zeros(max(1, len(layout.members)), dtype=np.uint64)
        originals = writeback_targets(a)
        for i, m in enumerate(layout.members):
            mem = self.svm(np.zeros(layout.sizes[i], dtype=m.dtype))
            view = staged(m, layout.strides[i], mem, layout.offset)
            view[...] = m
            ptrs[i] = mem.__array_interface__["data"][0]
            if m.flags.writeable and isinstance(originals[i], np.ndarray):
                self.svm_back.append((originals[i], view))
        tables = [cl.SVM(self.svm(t)) for t in [ptrs, *layout.tables]]
        self.set_all(p.first_arg, tables + layout.trailing(p))

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
    "launch",
    "program",
]
