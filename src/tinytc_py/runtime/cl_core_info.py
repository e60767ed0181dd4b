"""Core info of an OpenCL device (docs/design.md §B7.2 "CL/ZE construction"), queried through
pyopencl and, for the Intel/EXT queries pyopencl does not know, clGetDeviceInfo via ctypes.

It lives in the runtime layer: target/core_info.py describes cores and knows no runtime.
"""

from __future__ import annotations

import ctypes
from typing import Any

from ..errors import Status, TinytcError
from ..target.core_info import CPU_RUNTIME_MISSING, CoreInfo, SpirvFeature
from ..target.cpu_core import CpuCore, host_cpu_core
from .device import (  # device sets up the ICD first
    _cl_get_device_info,
    cl,
    find_libintelocl,
    subgroup_sizes,
)


def core_info_from_cl_device(device: Any) -> CoreInfo:
    """Core info of a pyopencl device (§B7.2 "CL/ZE construction").

    Intel GPUs would be recognised by IP version; every other device becomes a generic core:
    register space 32 x 64 B, the device's maximum work-group size and its
    CL_DEVICE_SUB_GROUP_SIZES_INTEL. The Intel CPU runtime vectorizes a subgroup across the
    SIMD lanes of one thread, so its core describes the CPU core it generates code for instead
    (`cpu_core_of`). Features come from the extensions; the default alignment is
    CL_DEVICE_MEM_BASE_ADDR_ALIGN / 8.
    """
    sgs = tuple(sorted(subgroup_sizes(device)))
    if not sgs:
        raise TinytcError(Status.unsupported_device, f"{device.name}: no subgroup sizes")
    is_gpu = bool(device.type & cl.device_type.GPU)
    ip = _cl_ip_version(device) if is_gpu and device.vendor_id == 0x8086 else 0
    if ip:
        info = CoreInfo.intel(ip, _cl_int(device, 0x4252, 8), _cl_int(device, 0x4253, 8), sgs)
    elif _is_intel_cpu(device):
        info = CoreInfo.simd_cpu(cpu_core_of(device), int(device.max_work_group_size), sgs)
        info.name = device.name.strip()
    else:
        info = CoreInfo.generic(32 * 64, int(device.max_work_group_size), sgs)
        info.name = device.name.strip()
    info.spirv_features = _cl_features(device)
    info.default_alignment = max(1, int(device.mem_base_addr_align) // 8)
    return info


def cpu_core_of(device: Any) -> CpuCore:
    """The core the Intel CPU runtime generates code for (target/cpu_core.py): the ISA its
    CL_CONFIG_CPU_TARGET_ARCH names (environment, else the cl.cfg next to libintelocl.so),
    else the host's. CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT cannot tell: it reports the host's
    width (16 floats on an AVX-512 host) also when the runtime targets AVX2."""
    lib = find_libintelocl()
    return host_cpu_core(lib.parent / "cl.cfg" if lib else None)


def _cl_ip_version(device: Any) -> int:
    try:
        return _cl_int(device, 0x4250, 0)  # CL_DEVICE_IP_VERSION_INTEL
    except Exception:  # noqa: BLE001 - the query is optional
        return 0


def _cl_int(device: Any, param: int, default: int) -> int:
    """An integer device query, also for queries pyopencl does not know (through ctypes)."""
    try:
        return int(device.get_info(param))
    except Exception:  # noqa: BLE001 - pyopencl may not know the Intel/EXT query
        pass
    try:
        value = ctypes.c_uint64(0)
        size = ctypes.c_size_t(0)
        handle = ctypes.c_void_p(device.int_ptr)
        if _cl_get_device_info()(handle, param, 8, ctypes.byref(value), ctypes.byref(size)) != 0:
            return default
        return int(value.value & ((1 << (8 * size.value)) - 1))
    except Exception:  # noqa: BLE001
        return default


def _cl_version(device: Any) -> tuple[int, int]:
    parts = device.version.split()  # "OpenCL 3.0 ..."
    try:
        major, minor = parts[1].split(".")[:2]
        return int(major), int(minor)
    except (IndexError, ValueError):
        return (1, 2)


def _cl_features(device: Any) -> set[SpirvFeature]:
    """SPIR-V features from OpenCL extensions and versions (§B7.2)."""
    ext = set(device.extensions.split())
    f: set[SpirvFeature] = set()
    if "cl_khr_fp16" in ext:
        f.add(SpirvFeature.float16)
    if "cl_khr_fp64" in ext or _cl_int(device, 0x1032, 0):  # CL_DEVICE_DOUBLE_FP_CONFIG
        f.add(SpirvFeature.float64)
    max_subgroups = _cl_int(device, 0x105C, 0)  # CL_DEVICE_MAX_NUM_SUB_GROUPS
    if _cl_version(device) >= (2, 0) and (max_subgroups or "cl_intel_subgroups" in ext):
        f.update((SpirvFeature.groups, SpirvFeature.subgroup_dispatch))
    if "cl_intel_spirv_subgroups" in ext:
        f.add(SpirvFeature.subgroup_buffer_block_io)
    if {"cl_khr_int64_base_atomics", "cl_khr_int64_extended_atomics"} <= ext:
        f.add(SpirvFeature.int64_atomics)
    if "cl_intel_bfloat16_conversions" in ext or "cl_intel_bfloat16" in ext:
        f.add(SpirvFeature.bfloat16_conversion)
    if "cl_ext_float_atomics" in ext:
        f |= _cl_float_atomics(device)
        if _is_intel_cpu(device):
            f -= CPU_RUNTIME_MISSING
    return f


def _is_intel_cpu(device: Any) -> bool:
    return device.vendor_id == 0x8086 and bool(device.type & cl.device_type.CPU)


def _cl_float_atomics(device: Any) -> set[SpirvFeature]:
    """cl_ext_float_atomics: CL_DEVICE_{SINGLE,DOUBLE,HALF}_FP_ATOMIC_CAPABILITIES_EXT bits."""
    f: set[SpirvFeature] = set()
    queries = {32: 0x4231, 64: 0x4232, 16: 0x4233}
    for bits, param in queries.items():
        caps = _cl_int(device, param, 0)
        names = {
            1 << 1: f"atomic_float{bits}_add_global",  # CL_DEVICE_GLOBAL_FP_ATOMIC_ADD_EXT
            1 << 2: f"atomic_float{bits}_min_max_global",
            1 << 17: f"atomic_float{bits}_add_local",
            1 << 18: f"atomic_float{bits}_min_max_local",
        }
        for bit, name in names.items():
            if caps & bit:
                f.add(SpirvFeature[name])
    return f
