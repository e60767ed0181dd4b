"""tinytc: the offline compiler, tensor-language text to SPIR-V; command-line compatible with upstream.

    tinytc [-d tgl|pvc|bmg|cpu] [-O0|-O1|-O2] [-f FLAG|-f no-FLAG]... [-F FEATURE]...
           [-S] [-o OUT] [FILE]

Reads FILE (stdin when absent), compiles it for the device's core info (default pvc) and writes
the SPIR-V binary to OUT (stdout when absent or "-"), or with -S the text dump of the binary.
`-d cpu` targets the CPU OpenCL device when there is one, else a generic CPU-like core
(`generic_cpu_core_info`). Errors go to stderr with their location, and the exit status is 1.
"""

from __future__ import annotations

import argparse
import sys
from typing import BinaryIO

from ..compiler import compile_to_spirv
from ..errors import CompilationError, TinytcError
from ..ir.context import CompilerContext
from ..spirv import dump
from ..target.core_info import CoreFeature, CoreInfo, SpirvFeature
from ..text.parser import parse
from .opt import set_flags

DEVICES = ("tgl", "pvc", "bmg", "cpu")
DEFAULT_DEVICE = "pvc"
CORE_FEATURES = {"large-register-file": CoreFeature.large_register_file}

# Fallback for `-d cpu` without an OpenCL CPU device: what the Intel CPU runtime reports on an
# AVX-512 machine (backend.md §7.2: register space 32 zmm x 64 B, max work-group size 8192,
# subgroup sizes 4..64; it reports every SPIR-V feature).
CPU_SUBGROUP_SIZES = (4, 8, 16, 32, 64)
CPU_REGISTER_SPACE = 32 * 64
CPU_MAX_WORK_GROUP_SIZE = 8192


def generic_cpu_core_info() -> CoreInfo:
    """The `-d cpu` core info when no OpenCL CPU device is available."""
    info = CoreInfo.generic(CPU_REGISTER_SPACE, CPU_MAX_WORK_GROUP_SIZE, CPU_SUBGROUP_SIZES)
    info.spirv_features = set(SpirvFeature)
    info.name = "generic-cpu"
    return info


def _opencl_cpu_core_info() -> CoreInfo | None:
    """The core info of the first SPIR-V capable OpenCL CPU device, or None."""
    try:
        from ..runtime import device as _device
        from ..runtime.opencl import core_info_for

        cl = _device.cl
        for platform in cl.get_platforms():
            for dev in _device._platform_devices(platform):
                if dev.type & cl.device_type.CPU and _device.supports_spirv(dev):
                    return core_info_for(dev)
    except Exception:  # noqa: BLE001 - no pyopencl, no ICD loader, no platform: use the fallback
        return None
    return None


def core_info_for_device(name: str, features: list[str] | None = None) -> CoreInfo:
    """The core info `-d NAME` selects, with the `-F` core features set; raises ValueError."""
    if name == "cpu":
        info = _opencl_cpu_core_info() or generic_cpu_core_info()
    elif name in DEVICES:
        info = CoreInfo.intel_from_name(name)
    else:
        raise ValueError(f"unknown device '{name}' (choose from {', '.join(DEVICES)})")
    for feature in features or ():
        flag = CORE_FEATURES.get(feature)
        if flag is None:
            raise ValueError(f"unknown core feature '{feature}'")
        info.core_features |= flag
    return info


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="tinytc", description="Compile tensor-language IR to SPIR-V.")
    ap.add_argument(
        "-d",
        "--device",
        default=DEFAULT_DEVICE,
        choices=DEVICES,
        help=f"target device (default {DEFAULT_DEVICE}; cpu = the CPU OpenCL device)",
    )
    ap.add_argument(
        "-O",
        dest="opt_level",
        type=int,
        choices=(0, 1, 2),
        default=2,
        help="optimization level (default 2)",
    )
    ap.add_argument(
        "-f",
        dest="flags",
        action="append",
        default=[],
        metavar="FLAG",
        help="enable FLAG, or disable it with no-FLAG (flags: unsafe-fp-math)",
    )
    ap.add_argument(
        "-F",
        dest="features",
        action="append",
        default=[],
        metavar="FEATURE",
        help="set a core feature (" + ", ".join(CORE_FEATURES) + ")",
    )
    ap.add_argument("-S", dest="text", action="store_true", help="write the SPIR-V text dump")
    ap.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    ap.add_argument("file", nargs="?", help="input file (stdin when absent)")
    return ap


def _read(path: str | None) -> str:
    if not path or path == "-":
        return sys.stdin.read()
    with open(path, encoding="utf-8") as f:
        return f.read()


def _write(path: str, data: bytes) -> None:
    if path == "-":
        sys.stdout.flush()
        out: BinaryIO = sys.stdout.buffer
        out.write(data)
        out.flush()
        return
    with open(path, "wb") as f:
        f.write(data)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    ctx = CompilerContext()
    ctx.opt_level = args.opt_level
    try:
        set_flags(ctx, args.flags)
        info = core_info_for_device(args.device, args.features)
        text = _read(args.file)
    except (ValueError, OSError, TinytcError) as exc:
        print(f"tinytc: {exc}", file=sys.stderr)
        return 1
    try:
        prog = parse(text, ctx, args.file or "<stdin>")
        binary = compile_to_spirv(prog, info)
        data = dump(binary.data).encode() if args.text else binary.data
        _write(args.output, data)
    except TinytcError as exc:
        # CompilationErrors are rendered with file:line.col, the source line and a caret range.
        located = isinstance(exc, CompilationError)
        print(exc if located else f"tinytc: error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"tinytc: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - a compiler bug must not end in a traceback
        print(f"tinytc: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
