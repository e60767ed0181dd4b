"""Command-line options shared by tinytc and tinytc-opt (-d, -O, -f), with the same meaning as
upstream's tools, and the core info that `-d` selects."""

from __future__ import annotations

import argparse

from ..ir.context import CompilerContext
from ..ir.enums import OptFlag
from ..target.core_info import CoreFeature, CoreInfo, SpirvFeature

DEVICES = ("tgl", "pvc", "bmg", "cpu")
DEFAULT_DEVICE = "pvc"


def add_common_options(ap: argparse.ArgumentParser, device_help: str) -> None:
    ap.add_argument(
        "-d",
        "--device",
        default=DEFAULT_DEVICE,
        choices=DEVICES,
        help=f"{device_help} (default {DEFAULT_DEVICE}; cpu = the CPU OpenCL device)",
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
        help="enable FLAG, or disable it with no-FLAG (flags: "
        + ", ".join(f.name.replace("_", "-") for f in OptFlag)
        + ")",
    )


def add_legacy_option(ap: argparse.ArgumentParser) -> None:
    ap.add_argument(
        "--legacy",
        action="store_true",
        help="read the legacy (tinytc v0.3) tensor language; without it, text that does not "
        "parse as the current language is tried as legacy text",
    )


def dialect_of(args: argparse.Namespace) -> str:
    return "legacy" if args.legacy else "auto"


def set_flags(ctx: CompilerContext, flags: list[str]) -> None:
    """Applies -f options; raises ValueError for an unknown flag."""
    for flag in flags:
        state = 0 if flag.startswith("no-") else 1
        name = flag.removeprefix("no-").replace("-", "_")
        if name not in OptFlag.__members__:
            raise ValueError(f"unknown flag '{flag}'")
        ctx.set_optimization_flag(OptFlag[name], state)


CORE_FEATURES = {"large-register-file": CoreFeature.large_register_file}

# Fallback for `-d cpu` without an OpenCL CPU device: what the Intel CPU runtime reports on an
# AVX-512 machine (backend.md §7.2: register space 32 zmm x 64 B, max work-group size 8192,
# subgroup sizes 4..64; it reports every SPIR-V feature).
CPU_SUBGROUP_SIZES = (4, 8, 16, 32, 64)
CPU_VECTOR_REGISTER = 64  # bytes: an AVX-512 register, as runtime/cl_core_info.py finds it
CPU_REGISTER_SPACE = 32 * CPU_VECTOR_REGISTER
CPU_MAX_WORK_GROUP_SIZE = 8192


def generic_cpu_core_info() -> CoreInfo:
    """The `-d cpu` core info when no OpenCL CPU device is available."""
    info = CoreInfo.generic(CPU_REGISTER_SPACE, CPU_MAX_WORK_GROUP_SIZE, CPU_SUBGROUP_SIZES)
    info.spirv_features = set(SpirvFeature)
    info.vector_register_size = CPU_VECTOR_REGISTER
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
