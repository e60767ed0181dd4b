"""Device names and optimization flags by name: what the Python API (`tinytc_py.compile`,
`program`) and the command-line tools both accept, with the core info each device name selects.

It sits above the runtimes (`cpu` asks the OpenCL runtime for the CPU device's core info) and
below the API and the command line, so that the library never imports `cli`.
"""

from __future__ import annotations

from typing import Any

from .ir.context import CompilerContext
from .ir.enums import OptFlag
from .target.core_info import CPU_RUNTIME_MISSING, CoreFeature, CoreInfo, SpirvFeature
from .target.cpu_core import CpuCore, cpu_core, host_cpu_core

DEVICES = ("tgl", "pvc", "bmg", "cpu", "cpu-avx2", "cpu-avx512")
DEFAULT_DEVICE = "pvc"


def set_flags(ctx: CompilerContext, flags: list[str]) -> None:
    """Applies -f options; raises ValueError for an unknown flag."""
    for flag in flags:
        state = 0 if flag.startswith("no-") else 1
        name = flag.removeprefix("no-").replace("-", "_")
        if name not in OptFlag.__members__:
            raise ValueError(f"unknown flag '{flag}'")
        ctx.set_optimization_flag(OptFlag[name], state)


CORE_FEATURES = {"large-register-file": CoreFeature.large_register_file}

# `-d cpu-avx2` / `-d cpu-avx512`, and `-d cpu` without an OpenCL CPU device: what the Intel
# CPU runtime reports (docs/design.md §B7.2: max work-group size 8192, subgroup sizes 4..64, every
# SPIR-V feature) with the register file of the ISA (target/cpu_core.py).
CPU_SUBGROUP_SIZES = (4, 8, 16, 32, 64)
CPU_MAX_WORK_GROUP_SIZE = 8192
PINNED_CPUS = {"cpu-avx2": "avx2", "cpu-avx512": "avx512"}


def generic_cpu_core_info(cpu: CpuCore | None = None) -> CoreInfo:
    """A CPU core info without an OpenCL device: `cpu` (default: this host's core)."""
    info = CoreInfo.simd_cpu(cpu or host_cpu_core(), CPU_MAX_WORK_GROUP_SIZE, CPU_SUBGROUP_SIZES)
    info.spirv_features = set(SpirvFeature) - CPU_RUNTIME_MISSING
    info.name = f"generic-cpu-{info.cpu.isa}" if info.cpu else "generic-cpu"
    return info


def opencl_cpu_device() -> Any:
    """The first SPIR-V capable OpenCL CPU device (a pyopencl device), or None."""
    try:
        from .runtime import device as _device

        cl = _device.cl
        for platform in cl.get_platforms():
            for dev in _device._platform_devices(platform):
                if dev.type & cl.device_type.CPU and _device.supports_spirv(dev):
                    return dev
    except Exception:  # noqa: BLE001 - no pyopencl, no ICD loader, no platform: use the fallback
        return None
    return None


def _opencl_cpu_core_info() -> CoreInfo | None:
    """The core info of the OpenCL CPU device, or None."""
    dev = opencl_cpu_device()
    if dev is None:
        return None
    from .runtime.opencl import core_info_for

    return core_info_for(dev)


def core_info_for_device(name: str, features: list[str] | None = None) -> CoreInfo:
    """The core info `-d NAME` selects, with the `-F` core features set; raises ValueError.

    `cpu` is deterministic for a host and environment: the OpenCL CPU device's core info, or
    without one the same core info (register file, subgroup sizes, SPIR-V features) from
    `host_cpu_core`; both follow CL_CONFIG_CPU_TARGET_ARCH. `cpu-avx2` / `cpu-avx512` pin the ISA."""
    if name == "cpu":
        info = _opencl_cpu_core_info() or generic_cpu_core_info()
    elif name in PINNED_CPUS:
        info = generic_cpu_core_info(cpu_core(PINNED_CPUS[name]))
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
