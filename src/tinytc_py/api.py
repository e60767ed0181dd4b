"""The Python user's front door, re-exported by `tinytc_py`: compile a program for a device and
call its kernels, list the devices, parse with a dialect.

    import numpy as np, tinytc_py
    prog = tinytc_py.compile(text)                 # the default device (a GPU, else the CPU)
    prog.kernel("axpy")(2.0, x, y, num_groups=4)   # runtime/launch.py checks, then runs it

Why a module of its own: the compiler and the runtimes (pyopencl, the Level Zero loader) are
imported inside the functions here, so that `import tinytc_py` stays fast and works on a machine
without OpenCL. The runtimes keep their own, lower-level entry points
(`tinytc_py.runtime.opencl.program`, `tinytc_py.runtime.level_zero.program`); this module
only chooses the device and the core info and hands the binary over.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import Status, TinytcError

if TYPE_CHECKING:
    from .binary import Binary
    from .ir.builder import IRBuilder
    from .ir.context import CompilerContext
    from .ir.enums import OptFlag
    from .ir.region import Prog
    from .target.core_info import CoreInfo

RUNTIMES = ("opencl", "level_zero", "sycl")


@dataclass(frozen=True, eq=False)
class Device:
    """A device kernels run on: `runtime` is "opencl", "level_zero" or "sycl", `handle` the
    runtime's own object (a `pyopencl.Device`, a `tinytc_py.runtime.level_zero.Device`, or the
    `dpctl.SyclQueue` kernels launch on)."""

    runtime: str
    name: str
    handle: Any = field(repr=False)

    @functools.cached_property
    def core_info(self) -> CoreInfo:
        """What the compiler targets for this device (subgroup sizes, register space, ...)."""
        if self.runtime == "opencl":
            from .runtime.opencl import core_info_for

            return core_info_for(self.handle)
        if self.runtime == "sycl":
            from .runtime import sycl

            return sycl.core_info_for(self.handle.sycl_device)
        return self.handle.core_info

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Device)
            and other.runtime == self.runtime
            and _handle_key(other) == _handle_key(self)
        )

    def __hash__(self) -> int:
        return hash((self.runtime, _handle_key(self)))


def _handle_key(device: Device) -> Any:
    if device.runtime == "opencl":
        return int(device.handle.int_ptr)
    if device.runtime == "sycl":
        from .runtime import sycl

        return sycl.device_key(device.handle)
    from .runtime.ze_api import address

    return int(address(device.handle.handle))


def _opencl_devices() -> list[Device]:
    try:
        from .runtime import device as cl_device
    except ImportError:  # pyopencl is not installed (the 'opencl' extra)
        return []
    try:
        default = cl_device.default_device()
        platforms = cl_device.cl.get_platforms()
    except (RuntimeError, cl_device.cl.Error):
        return []
    found = [
        d
        for p in platforms
        for d in cl_device._platform_devices(p)
        if cl_device.supports_spirv(d) and d != default
    ]
    return [Device("opencl", d.name.strip(), d) for d in [default, *found]]


def _level_zero_devices() -> list[Device]:
    try:
        from .runtime import level_zero

        return [
            Device("level_zero", d.name.strip(), d)
            for driver in level_zero.drivers()
            for d in level_zero.devices(driver)
        ]
    except (ImportError, OSError, TinytcError):  # no loader library, or zeInit failed
        return []


def _sycl_devices() -> list[Device]:
    try:
        from .runtime import sycl
    except ImportError:  # dpctl is not installed (the 'sycl' extra)
        return []
    return [_sycl_device(sycl.queue_of(d)) for d in sycl.devices()]


def _sycl_device(queue: Any) -> Device:
    return Device("sycl", queue.sycl_device.name.strip(), queue)


def devices() -> list[Device]:
    """The OpenCL (SPIR-V capable), Level Zero and SYCL (with dpctl) devices found, the default
    device first.

    The default is the one `compile` uses without ``device=``: an OpenCL GPU if there is one,
    else Intel's CPU OpenCL runtime. A SYCL device launches on dpctl's cached queue of it.
    """
    return _opencl_devices() + _level_zero_devices() + _sycl_devices()


@functools.cache
def default_device() -> Device:
    """The first of `devices()`; raises TinytcError(unsupported_device) when there is none."""
    found = _opencl_devices() or _level_zero_devices()
    if not found:
        raise TinytcError(
            Status.unsupported_device,
            "no device found: install the 'opencl' extra (Intel's CPU OpenCL runtime) or a GPU driver",
        )
    return found[0]


def _as_device(device: Any) -> Device:
    """A Device from what users hold: a Device, a pyopencl.Device, a Level Zero Device, or a
    dpctl.SyclQueue / dpctl.SyclDevice."""
    if device is None:
        return default_device()
    if isinstance(device, Device):
        return device
    if hasattr(device, "int_ptr"):  # pyopencl.Device
        return Device("opencl", device.name.strip(), device)
    if hasattr(device, "core_info") and hasattr(device, "driver"):
        return Device("level_zero", device.name.strip(), device)
    if type(device).__module__.startswith("dpctl"):  # dpctl.SyclQueue or dpctl.SyclDevice
        from .runtime import sycl

        return _sycl_device(sycl.queue_of(device))
    raise TypeError(f"not a device: {device!r}")


# ---- parsing -------------------------------------------------------------------------------------


def parse(
    source: str | Path,
    *,
    context: CompilerContext | None = None,
    name: str | None = None,
    dialect: str = "auto",
) -> Prog:
    """A program from tensor-language text or from a file (`Path`).

    `dialect` "legacy" reads the v0.3 language, "current" only the current one; "auto" reads
    text that is not current-language text as legacy text (docs: the legacy language). Errors
    raise `CompilationError`, rendered with the source line:

    >>> import tinytc_py
    >>> tinytc_py.parse("func @f() {\\n  %x = constant 1 : f33\\n}")
    Traceback (most recent call last):
      ...
    tinytc_py.errors.CompilationError: 2.21-23: unknown type ...f33...
    """
    from .ir.context import CompilerContext
    from .text.dialect import parse as parse_text

    text, file_name = _read(source, dialect)
    return parse_text(
        text, context or CompilerContext(), file_name if name is None else name, dialect
    )


# ---- compiling -----------------------------------------------------------------------------------


def _apply_options(ctx: CompilerContext, opt_level: int, flags: Iterable[str | OptFlag]) -> None:
    from .ir.enums import OptFlag
    from .options import set_flags

    if opt_level not in (0, 1, 2):
        raise ValueError(f"opt_level must be 0, 1 or 2, got {opt_level}")
    ctx.opt_level = opt_level
    named = []
    for flag in flags:
        if isinstance(flag, OptFlag):
            ctx.set_optimization_flag(flag, 1)
        else:
            named.append(flag)
    set_flags(ctx, named)


def _read(source: str | Path, dialect: str) -> tuple[str, str]:
    """The text and name of a source as `parse` reads them (an unknown dialect first)."""
    from .text.dialect import check_dialect

    check_dialect(dialect)
    if isinstance(source, Path):
        return source.read_text(encoding="utf-8"), str(source)
    return source, ""


def _target_core_info(target: str | CoreInfo) -> CoreInfo:
    from .options import core_info_for_device

    return target if not isinstance(target, str) else core_info_for_device(target)


def compile(  # noqa: A001 - the name users expect, as re.compile
    source: str | Path | Prog | IRBuilder,
    *,
    device: Any = None,
    target: str | CoreInfo | None = None,
    opt_level: int = 2,
    flags: Iterable[str | OptFlag] = (),
    dialect: str = "auto",
    emulate: str | None = None,
) -> Program:
    """Compile a program to SPIR-V for a device; its kernels are then a call away.

    `source` is tensor-language text, a `Path` of a ``.ir`` file, a program (`parse`) or a
    `Builder` (its program). A program is compiled in place (the pass pipeline changes it)
    unless the kernel cache already holds its SPIR-V.
    `device` is an element of `devices()`, a ``pyopencl.Device``, a Level Zero device or a
    ``dpctl.SyclQueue`` (kernels launch on it) or ``dpctl.SyclDevice``
    (default: the default device). `target` compiles for another core info instead of the
    device's: a name ("pvc", "bmg", "tgl", "cpu") or a `CoreInfo`; with a `target` and no
    `device`, no runtime is needed (only `Program.spirv` and `Program.dump` then). `flags`
    enable compiler-context flags by name ("unsafe-fp-math", "no-kernel-cache", ...);
    "autotune" times GEMM register blockings on the (OpenCL CPU) device first and caches the
    choice per device (gemm_tuning.py); "bounds-checks" checks every memory access, and a
    launch then raises `OutOfBoundsError` for the first one out of bounds (docs:
    bounds-checked mode). `emulate` ("pvc", "bmg") compiles for that GPU and runs the result on
    `device` through tinytc-emulate (docs/emulate.rst).

    >>> import tinytc_py
    >>> prog = tinytc_py.compile("func @k() {}", target="pvc")
    >>> prog
    Program(kernels=('k',), device=None)
    >>> prog.spirv[:4] == bytes.fromhex("03022307")
    True
    """
    from .compiler import compile_text, compile_to_spirv, text_parsing
    from .ir.builder import IRBuilder
    from .ir.context import CompilerContext
    from .ir.enums import OptFlag
    from .ir.region import Prog

    if isinstance(source, IRBuilder):
        source = source.prog
    text, name = "", ""
    if isinstance(source, Prog):
        prog: Prog | None = source
        if dialect == "legacy":
            raise ValueError("dialect applies to text; a built program has none")
        ctx = source.ctx
    else:
        # text is looked up in the kernel cache before it is parsed (on a miss it is parsed
        # into a new context, which then takes the options, as for a program)
        text, name = _read(source, dialect)
        prog, ctx = None, CompilerContext()
    _apply_options(ctx, opt_level, flags)
    if emulate not in (None, "pvc", "bmg"):
        raise ValueError(f"emulate={emulate!r}: expected 'pvc' or 'bmg'")
    target = emulate or target
    dev = None if target is not None and device is None and not emulate else _as_device(device)
    info = _target_core_info(target) if target is not None else dev.core_info  # type: ignore[union-attr]
    autotuned = ctx.optimization_flag(OptFlag.autotune) and dev is not None and not emulate

    def parsed() -> Prog:
        compiled = parse(text, name=name, dialect=dialect)
        _apply_options(compiled.ctx, opt_level, flags)
        return compiled

    if prog is None and autotuned:
        prog = parsed()
    if autotuned:
        info = _autotuned(prog, dev, info)  # type: ignore[arg-type]
    if prog is not None:
        binary = compile_to_spirv(prog, info)
    else:
        binary = compile_text(
            text, info, ctx, parsed, text_parsing(name, dialect), owned=True, parsed=True
        )
    if emulate:
        from .emulate import emulate as emulated

        binary = emulated(binary, emulate, dev)
    return Program(binary, dev)


def _autotuned(prog: Prog, dev: Device, info: CoreInfo) -> CoreInfo:
    """The "autotune" flag: GEMM blockings timed on an OpenCL device (or from its tuning
    cache); other runtimes compile with the cost model."""
    if dev.runtime != "opencl":
        return info
    from .runtime.autotune import autotune
    from .runtime.opencl import program

    return autotune(prog, dev.handle, info, program)


def build_for(binary: Binary, device: Device) -> Any:
    """The runtime's built program of `binary` on `device` (`BuiltProgram`: kernels by name).

    The default device uses the runtime's shared context; another device gets one context of
    its own for the process. The Intel CPU runtime's build log, printed as a warning on every
    successful build, is dropped.
    """
    if device.runtime == "sycl":
        from .runtime import sycl

        return sycl.program(binary, device.handle)
    if device.runtime == "opencl":
        from .runtime import device as cl_device
        from .runtime import opencl

        context: Any
        if device.handle == cl_device.default_device():
            context = cl_device.default_context()
        else:
            context = _contexts.get(device) or _contexts.setdefault(
                device, cl_device.cl.Context([device.handle])
            )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", opencl.cl.CompilerWarning)
            return opencl.Program(binary, context, device.handle)
    from .runtime import level_zero

    if _handle_key(device) == _handle_key(_as_device(level_zero.default_device())):
        context = level_zero.default_context()
    else:
        context = _contexts.get(device) or _contexts.setdefault(
            device, level_zero.Context.create(device.handle.driver)
        )
    return level_zero.Program(binary, context, device.handle)


# The contexts of devices other than a runtime's default one.
_contexts: dict[Device, Any] = {}


class Program:
    """A compiled program: its SPIR-V, and its kernels built on the device on first use."""

    def __init__(self, binary: Binary, device: Device | None) -> None:
        self.binary = binary
        self.device = device
        self._built: Any = None

    def __repr__(self) -> str:
        return f"Program(kernels={self.kernels!r}, device={self.device!r})"

    @property
    def spirv(self) -> bytes:
        """The SPIR-V module (validated by spirv-val)."""
        return self.binary.data

    @property
    def kernels(self) -> tuple[str, ...]:
        """The names of the program's kernels, in source order."""
        return tuple(self.binary.kernels)

    def dump(self) -> str:
        """The SPIR-V module as text (the assembly ``spirv-dis`` prints)."""
        from .spirv.dump import dump

        return dump(self.binary.data)

    def kernel(self, name: str) -> Any:
        """The kernel `name`, built for the program's device, called as
        ``kernel(*args, num_groups=(x, y, z), queue=None)`` with one argument per parameter,
        by position or by the parameter's name (``kernel(A=a, B=b, C=c, num_groups=4)``).
        ``help(kernel)`` and ``inspect.signature(kernel)`` list the parameters and their types;
        "Launching a kernel" in the Python API docs says what each parameter takes."""
        if self.device is None:
            raise TinytcError(
                Status.invalid_arguments,
                "the program was compiled for a target without a device; pass device= to compile",
            )
        if self._built is None:
            self._built = build_for(self.binary, self.device)
        return self._built.kernel(name)


__all__ = ["Device", "Program", "build_for", "compile", "default_device", "devices", "parse"]
