"""tinytc: the offline compiler, tensor-language text to SPIR-V; command-line compatible with upstream.

    tinytc [-d tgl|pvc|bmg|cpu|cpu-avx2|cpu-avx512] [-O0|-O1|-O2] [-f FLAG|-f no-FLAG]...
           [-F FEATURE]... [--autotune] [-S] [-o OUT] [--legacy] [FILE]

Reads FILE (stdin when absent; legacy tensor-language text is recognized, --legacy forces that
reading, see docs/legacy-language.md), compiles it for the device's core info (default pvc) and writes
the SPIR-V binary to OUT (stdout when absent or "-"), or with -S the text dump of the binary.
`-d cpu` targets this host's CPU as the Intel CPU OpenCL runtime generates code for it: the
OpenCL CPU device's core info, else the same from the host's ISA (`generic_cpu_core_info`); the
ISA follows CL_CONFIG_CPU_TARGET_ARCH, so `-d cpu` gives the same binary for the same host and
environment. `-d cpu-avx2` / `-d cpu-avx512` pin the ISA. `--autotune` (= `-f autotune`, `-d cpu`
only) times GEMM blockings on the OpenCL CPU device or reuses the tuning cache. Errors go to
stderr with their location, and the exit status is 1.
"""

from __future__ import annotations

import argparse
import sys
from typing import BinaryIO

from ..compiler import compile_to_spirv
from ..errors import CompilationError, Status, TinytcError
from ..ir.context import CompilerContext
from ..ir.enums import OptFlag
from ..ir.region import Prog
from ..options import CORE_FEATURES, core_info_for_device, opencl_cpu_device, set_flags
from ..spirv import dump
from ..target.core_info import CoreInfo
from ..text.dialect import parse
from .options import add_common_options, add_legacy_option, dialect_of


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="tinytc", description="Compile tensor-language IR to SPIR-V.")
    add_common_options(ap, "target device")
    ap.add_argument(
        "-F",
        dest="features",
        action="append",
        default=[],
        metavar="FEATURE",
        help="set a core feature (" + ", ".join(CORE_FEATURES) + ")",
    )
    ap.add_argument(
        "--autotune",
        action="store_true",
        help="time GEMM blockings on the OpenCL CPU device (-d cpu) and keep the fastest; "
        "choices are cached per device",
    )
    ap.add_argument("-S", dest="text", action="store_true", help="write the SPIR-V text dump")
    ap.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    add_legacy_option(ap)
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


def autotuned(prog: Prog, info: CoreInfo, device: str) -> CoreInfo:
    """`info` with the autotuner's GEMM blockings: timing needs the device itself."""
    dev = opencl_cpu_device() if device == "cpu" else None
    if dev is None:
        raise TinytcError(
            Status.unsupported_device,
            f"--autotune times kernels on a device: it needs -d cpu and an OpenCL CPU device "
            f"(got -d {device})",
        )
    from ..runtime.autotune import autotune
    from ..runtime.opencl import program

    return autotune(prog, dev, info, program)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    ctx = CompilerContext()
    ctx.opt_level = args.opt_level
    try:
        set_flags(ctx, args.flags + (["autotune"] if args.autotune else []))
        info = core_info_for_device(args.device, args.features)
        text = _read(args.file)
    except (ValueError, OSError, TinytcError) as exc:
        print(f"tinytc: {exc}", file=sys.stderr)
        return 1
    try:
        prog = parse(text, ctx, args.file or "<stdin>", dialect_of(args))
        if ctx.optimization_flag(OptFlag.autotune):
            info = autotuned(prog, info, args.device)
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
