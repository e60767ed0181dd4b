"""Core info of a Level Zero device (docs/design.md §B7.2 "CL/ZE construction").

Level Zero devices are taken to be Intel cores: the IP version (from the device-IP-version
extension struct, 0 when the driver does not know it), EUs per subslice, threads per EU and
the subgroup sizes make an Intel core info; float16/float64/int64 atomics come from the module
flags, float atomics from ze_float_atomic_ext_properties_t, and groups, subgroup dispatch and
block IO are always available. Sizes whose maximum work-group size would be 0 are dropped by
CoreInfo.intel (a CPU driver reports 1 thread per EU or similar).
"""

from __future__ import annotations

from typing import Any

from ..errors import Status, TinytcError
from ..target.core_info import CoreInfo, IntelGpuArchitecture, SpirvFeature, SupportLevel, _is_arch
from . import ze_api
from .ze_api import call, ffi, handle

INTEL_VENDOR_ID = 0x8086

# ze_device_fp_atomic_ext_flags_t bits → feature name suffix
_FP_ATOMIC_BITS = {
    1 << 1: "add_global",
    1 << 2: "min_max_global",
    1 << 17: "add_local",
    1 << 18: "min_max_local",
}


def device_properties(device: Any) -> tuple[Any, int]:
    """(ze_device_properties_t, IP version) of a device handle."""
    props = ffi.new("ze_device_properties_t *", {"stype": ze_api.ST_DEVICE_PROPERTIES})
    ip = ffi.new("ze_device_ip_version_ext_t *", {"stype": ze_api.ST_DEVICE_IP_VERSION_EXT})
    props.pNext = ip
    call("zeDeviceGetProperties", handle("ze_device_handle_t", device), props)
    return props, int(ip.ipVersion)


def subgroup_sizes(device: Any) -> tuple[int, ...]:
    props = ffi.new(
        "ze_device_compute_properties_t *", {"stype": ze_api.ST_DEVICE_COMPUTE_PROPERTIES}
    )
    call("zeDeviceGetComputeProperties", handle("ze_device_handle_t", device), props)
    n = min(int(props.numSubGroupSizes), len(props.subGroupSizes))
    return tuple(int(props.subGroupSizes[i]) for i in range(n))


def _features(device: Any) -> set[SpirvFeature]:
    atomics = ffi.new(
        "ze_float_atomic_ext_properties_t *", {"stype": ze_api.ST_FLOAT_ATOMIC_EXT_PROPERTIES}
    )
    props = ffi.new(
        "ze_device_module_properties_t *", {"stype": ze_api.ST_DEVICE_MODULE_PROPERTIES}
    )
    props.pNext = atomics
    call("zeDeviceGetModuleProperties", handle("ze_device_handle_t", device), props)
    f = {SpirvFeature.groups, SpirvFeature.subgroup_dispatch, SpirvFeature.subgroup_buffer_block_io}
    flags = int(props.flags)
    if flags & ze_api.MODULE_FLAG_FP16:
        f.add(SpirvFeature.float16)
    if flags & ze_api.MODULE_FLAG_FP64:
        f.add(SpirvFeature.float64)
    if flags & ze_api.MODULE_FLAG_INT64_ATOMICS:
        f.add(SpirvFeature.int64_atomics)
    for bits, caps in ((16, atomics.fp16Flags), (32, atomics.fp32Flags), (64, atomics.fp64Flags)):
        for bit, suffix in _FP_ATOMIC_BITS.items():
            if int(caps) & bit:
                f.add(SpirvFeature[f"atomic_float{bits}_{suffix}"])
    return f


def core_info_from_ze_device(device: Any) -> CoreInfo:
    """Core info of a Level Zero device handle (int address or cffi pointer)."""
    props, ip = device_properties(device)
    if props.vendorId != INTEL_VENDOR_ID:
        raise TinytcError(
            Status.unsupported_device, f"vendor {props.vendorId:#x} is not Intel (0x8086)"
        )
    info = CoreInfo.intel(
        ip, int(props.numEUsPerSubslice), int(props.numThreadsPerEU), subgroup_sizes(device)
    )
    info.spirv_features = _features(device)
    if info.matrix is not None:
        info.spirv_features.add(SpirvFeature.bfloat16_conversion)
    info.name = ffi.string(props.name).decode(errors="replace")
    return info


def support_level(device: Any) -> SupportLevel:
    """none for non-Intel devices, tuned on PVC/BMG (by IP version), basic otherwise."""
    props, ip = device_properties(device)
    if props.vendorId != INTEL_VENDOR_ID:
        return SupportLevel.none
    tuned = (IntelGpuArchitecture.pvc, IntelGpuArchitecture.bmg)
    return SupportLevel.tuned if any(_is_arch(ip, a) for a in tuned) else SupportLevel.basic
