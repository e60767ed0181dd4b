"""Core info: what the compiler may assume about a device (backend.md §7).

A `CoreInfo` holds the subgroup sizes, the register space per subgroup, the maximum work-group
size per subgroup size, the core feature flags (large register file), the 19 SPIR-V feature
booleans, the default alignment of memref base pointers and the matrix-extension table.

Constructors: `CoreInfo.generic` (§7.4), `CoreInfo.intel` / `CoreInfo.intel_from_arch` /
`CoreInfo.intel_from_name` (§7.2, tgl/pvc/bmg), and `CoreInfo.from_cl_device` for a pyopencl
device (Intel GPUs by IP version, everything else, e.g. the Intel CPU runtime, as a generic core
whose features come from the device's extensions).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum, IntFlag
from typing import Any

from ..errors import Status, TinytcError


class SpirvFeature(IntEnum):
    """Values equal the C API's tinytc_spirv_feature_t."""

    float16 = 0
    float64 = 1
    int64_atomics = 2
    groups = 3
    subgroup_dispatch = 4
    atomic_float16_add_local = 5
    atomic_float16_add_global = 6
    atomic_float32_add_local = 7
    atomic_float32_add_global = 8
    atomic_float64_add_local = 9
    atomic_float64_add_global = 10
    atomic_float16_min_max_local = 11
    atomic_float16_min_max_global = 12
    atomic_float32_min_max_local = 13
    atomic_float32_min_max_global = 14
    atomic_float64_min_max_local = 15
    atomic_float64_min_max_global = 16
    bfloat16_conversion = 17
    subgroup_buffer_block_io = 18


class CoreFeature(IntFlag):
    """Values equal the C API's tinytc_core_feature_flag_t."""

    large_register_file = 0x1


class IntelGpuArchitecture(IntEnum):
    """IP versions (tinytc_intel_gpu_architecture_t)."""

    tgl = 0x03000000
    pvc = 0x030F0000
    bmg = 0x05004000


class SupportLevel(IntEnum):
    none = 0
    basic = 1
    tuned = 2


ARCH_SUB_VERSION_BITS = 0xFFF
DEFAULT_ALIGNMENT = 128


@dataclass(frozen=True)
class GemmShape:
    """One row of the matrix-extension table: A x B -> acc with the allowed M, N, K."""

    a: str
    b: str
    acc: tuple[str, ...]
    M: tuple[int, ...]
    N: tuple[int, ...]
    K: tuple[int, ...]


@dataclass(frozen=True)
class MatrixExt:
    """Matrix extension (DPAS) and 2D block IO rules (backend.md §7.3)."""

    required_subgroup_size: int
    gemms: tuple[GemmShape, ...]
    block_io_base_alignment: int = 64
    block_io_min_pitch: int = 64
    block_io_max_pitch: int = 2**24 - 1
    block_io_pos0_alignment: int = 4
    block_io_pitch_alignment: int = 8
    block_io_width_alignment: int = 4

    def have_gemm(self, a: str, b: str, acc: str, M: int, N: int, K: int) -> bool:
        return any(
            g.a == a and g.b == b and acc in g.acc and M in g.M and N in g.N and K in g.K
            for g in self.gemms
        )

    def have_precision(self, a: str, b: str, acc: str) -> bool:
        return any(g.a == a and g.b == b and acc in g.acc for g in self.gemms)


def intel_matrix_ext(pitch_alignment: int) -> MatrixExt:
    """The PVC/BMG table (they differ only in the 2D block IO pitch alignment)."""
    return MatrixExt(
        required_subgroup_size=16,
        gemms=(
            GemmShape("i8", "i8", ("i32",), (16, 32, 64), (8, 16, 32), (32, 64)),
            GemmShape("f16", "f16", ("f16", "f32"), (16, 32), (8, 16, 24, 32), (16, 32)),
            GemmShape("bf16", "bf16", ("bf16", "f32"), (16, 32), (8, 16, 32), (16, 32)),
        ),
        block_io_pitch_alignment=pitch_alignment,
    )


@dataclass(frozen=True)
class CoreConfig:
    """What code generation needs for one subgroup size (`CoreInfo.get_core_config`)."""

    subgroup_size: int
    max_work_group_size: int
    register_space: int
    matrix: MatrixExt | None


@dataclass
class CoreInfo:
    """Device description used by the passes and the SPIR-V conversion.

    `max_wgs` maps each subgroup size to its maximum work-group size; `ip_version` is set for
    Intel GPU cores (0 otherwise), `regs_small`/`regs_large` and `grf_size` let the register
    space follow the large-register-file flag.
    """

    subgroup_sizes: tuple[int, ...]
    register_space_small: int
    max_wgs: dict[int, int]
    spirv_features: set[SpirvFeature] = field(default_factory=set)
    core_features: CoreFeature = CoreFeature(0)
    default_alignment: int = DEFAULT_ALIGNMENT
    matrix: MatrixExt | None = None
    ip_version: int = 0
    register_space_large: int = 0
    max_wgs_large: dict[int, int] | None = None
    support_level: SupportLevel = SupportLevel.basic
    name: str = "generic"

    # ---- constructors ------------------------------------------------------------------------

    @classmethod
    def generic(
        cls,
        register_space: int,
        max_work_group_size: int,
        subgroup_sizes: tuple[int, ...] | list[int],
    ) -> CoreInfo:
        """§7.4: every SPIR-V feature starts false; the sizes are kept in the given order."""
        sgs = tuple(subgroup_sizes)
        if not sgs or register_space <= 0 or max_work_group_size <= 0:
            raise TinytcError(
                Status.invalid_core_info, "core info needs subgroup sizes and sizes > 0"
            )
        return cls(sgs, register_space, {s: max_work_group_size for s in sgs})

    @classmethod
    def intel(
        cls,
        ip_version: int,
        eus_per_subslice: int,
        threads_per_eu: int,
        subgroup_sizes: tuple[int, ...] | list[int],
    ) -> CoreInfo:
        """§7.2 `core_info_intel`: register space and max work-group sizes from the IP version."""
        sgs = tuple(sorted(subgroup_sizes))
        if not sgs:
            raise TinytcError(Status.invalid_core_info, "no subgroup sizes")
        big_grf = _is_arch(ip_version, IntelGpuArchitecture.pvc) or _is_arch(
            ip_version, IntelGpuArchitecture.bmg
        )
        grf_size = 64 if big_grf else 32
        regs_large = 256 if big_grf else 128

        def wgs(regs: int) -> dict[int, int]:
            smin = sgs[0]
            return {
                s: min(threads_per_eu * 128 // regs, threads_per_eu * smin // s)
                * eus_per_subslice
                * s
                for s in sgs
            }

        info = cls(
            sgs,
            grf_size * 128,
            wgs(128),
            ip_version=ip_version,
            register_space_large=grf_size * regs_large,
            max_wgs_large=wgs(regs_large),
            name=f"intel-{ip_version:#x}",
        )
        if big_grf:
            info.support_level = SupportLevel.tuned
            info.matrix = intel_matrix_ext(
                16 if _is_arch(ip_version, IntelGpuArchitecture.bmg) else 8
            )
        return info

    @classmethod
    def intel_from_arch(cls, arch: IntelGpuArchitecture | int) -> CoreInfo:
        """§7.2 built-in tables for tgl, pvc and bmg."""
        try:
            arch = IntelGpuArchitecture(arch)
        except ValueError as e:
            raise TinytcError(Status.invalid_arguments, f"unknown architecture {arch:#x}") from e
        if arch is IntelGpuArchitecture.tgl:
            info = cls.intel(arch, 8, 7, (8, 16, 32))
            off = {
                SpirvFeature.float64,
                SpirvFeature.atomic_float16_add_local,
                SpirvFeature.atomic_float16_add_global,
                SpirvFeature.atomic_float64_add_local,
                SpirvFeature.atomic_float64_add_global,
                SpirvFeature.atomic_float64_min_max_local,
                SpirvFeature.atomic_float64_min_max_global,
                SpirvFeature.bfloat16_conversion,
            }
        else:
            info = cls.intel(arch, 8, 8, (16, 32))
            off = {SpirvFeature.atomic_float16_add_local, SpirvFeature.atomic_float16_add_global}
        info.spirv_features = set(SpirvFeature) - off
        info.name = arch.name
        return info

    @classmethod
    def intel_from_name(cls, name: str) -> CoreInfo:
        try:
            return cls.intel_from_arch(IntelGpuArchitecture[name])
        except KeyError as e:
            raise TinytcError(Status.invalid_arguments, f"unknown architecture {name!r}") from e

    @classmethod
    def from_cl_device(cls, device: Any) -> CoreInfo:
        """Core info of a pyopencl device (§7.2 "CL/ZE construction").

        Intel GPUs would be recognised by IP version; every other device (notably the Intel
        CPU runtime) becomes a generic core: register space 32 x 64 B, the device's maximum
        work-group size and its CL_DEVICE_SUB_GROUP_SIZES_INTEL. Features come from the
        extensions; the default alignment is CL_DEVICE_MEM_BASE_ADDR_ALIGN / 8.
        """
        import pyopencl as cl

        from ..runtime.device import subgroup_sizes

        sgs = tuple(sorted(subgroup_sizes(device)))
        if not sgs:
            raise TinytcError(Status.unsupported_device, f"{device.name}: no subgroup sizes")
        is_gpu = bool(device.type & cl.device_type.GPU)
        ip = _cl_ip_version(device) if is_gpu and device.vendor_id == 0x8086 else 0
        if ip:
            info = cls.intel(ip, _cl_int(device, 0x4252, 8), _cl_int(device, 0x4253, 8), sgs)
        else:
            info = cls.generic(32 * 64, int(device.max_work_group_size), sgs)
            info.name = device.name.strip()
        info.spirv_features = _cl_features(device)
        info.default_alignment = max(1, int(device.mem_base_addr_align) // 8)
        return info

    # ---- queries -----------------------------------------------------------------------------

    @property
    def large_register_file(self) -> bool:
        return bool(self.core_features & CoreFeature.large_register_file) and bool(
            self.register_space_large
        )

    @property
    def register_space(self) -> int:
        return self.register_space_large if self.large_register_file else self.register_space_small

    def max_work_group_size(self, subgroup_size: int) -> int:
        table = (
            self.max_wgs_large if self.large_register_file and self.max_wgs_large else self.max_wgs
        )
        if subgroup_size not in table:
            raise TinytcError(
                Status.unsupported_subgroup_size, f"subgroup size {subgroup_size} not supported"
            )
        return table[subgroup_size]

    @property
    def minmax_work_group_size(self) -> int:
        return min(self.max_work_group_size(s) for s in self.subgroup_sizes)

    def get_core_config(self, subgroup_size: int) -> CoreConfig:
        return CoreConfig(
            subgroup_size,
            self.max_work_group_size(subgroup_size),
            self.register_space,
            self.matrix,
        )

    def have_spirv_feature(self, feature: SpirvFeature) -> bool:
        return feature in self.spirv_features

    def set_spirv_feature(self, feature: SpirvFeature, available: bool = True) -> None:
        if available:
            self.spirv_features.add(feature)
        else:
            self.spirv_features.discard(feature)


def _is_arch(ip: int, arch: IntelGpuArchitecture) -> bool:
    return arch <= ip <= arch + ARCH_SUB_VERSION_BITS


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
        import ctypes

        from ..runtime.device import _cl_get_device_info

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
    """SPIR-V features from OpenCL extensions and versions (§7.2)."""
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
            # The CPU runtime reports half-precision atomic add, but its JIT has no
            # atomic_add(half*) to link against (BUILD_PROGRAM_FAILURE "Symbols not found").
            f -= {SpirvFeature.atomic_float16_add_global, SpirvFeature.atomic_float16_add_local}
    return f


def _is_intel_cpu(device: Any) -> bool:
    import pyopencl as cl

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


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def is_power_of_two(x: int) -> bool:
    return x > 0 and x & (x - 1) == 0


__all__ = [
    "CoreConfig",
    "CoreFeature",
    "CoreInfo",
    "GemmShape",
    "IntelGpuArchitecture",
    "MatrixExt",
    "SpirvFeature",
    "SupportLevel",
    "ceil_div",
    "is_power_of_two",
]
