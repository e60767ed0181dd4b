"""Core info: what the compiler may assume about a device (docs/design.md §B7).

A `CoreInfo` holds the subgroup sizes, the register space per subgroup, the maximum work-group
size per subgroup size, the core feature flags (large register file), the 19 SPIR-V feature
booleans, the default alignment of memref base pointers and the matrix-extension table.

Constructors: `CoreInfo.generic` (§B7.4), `CoreInfo.intel` / `CoreInfo.intel_from_arch` /
`CoreInfo.intel_from_name` (§B7.2, tgl/pvc/bmg), `CoreInfo.simd_cpu` (a CPU core described by
its vector ISA and caches, target/cpu_core.py). The core info of an OpenCL device is queried by
the runtime layer (runtime/cl_core_info.py); this module knows no runtime.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum, IntFlag

from ..errors import Status, TinytcError
from .cpu_core import CpuCore
from .gemm_blocking import GemmBlocking, GemmKey


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


# The Intel CPU runtime reports half-precision atomic add, but its JIT has no atomic_add(half*)
# to link against (BUILD_PROGRAM_FAILURE "Symbols not found"): no CPU core info offers it, with
# the OpenCL device (runtime/cl_core_info.py) or without (`tinytc -d cpu`), so both agree.
CPU_RUNTIME_MISSING = frozenset(
    {SpirvFeature.atomic_float16_add_global, SpirvFeature.atomic_float16_add_local}
)


class CoreFeature(IntFlag):
    """Values equal the C API's tinytc_core_feature_flag_t."""

    large_register_file = 0x1


_LARGE_GRF = int(CoreFeature.large_register_file)
"""The flag's bit as an int: tested with int's `&`, a C operation, where IntFlag's `&` runs the
enum module's Python code (about 2 µs; a compile asks four times or more)."""


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
    """Matrix extension (DPAS) and 2D block IO rules (docs/design.md §B7.3)."""

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

    def have_type(self, elem: str, rows: int, cols: int, use: str) -> bool:
        """Whether a `use` ("a", "b" or "acc") operand of some table row may be elem x rows x
        cols (A is M x K, B is K x N, the accumulator M x N)."""
        if use == "a":
            return any(g.a == elem and rows in g.M and cols in g.K for g in self.gemms)
        if use == "b":
            return any(g.b == elem and rows in g.K and cols in g.N for g in self.gemms)
        return any(elem in g.acc and rows in g.M and cols in g.N for g in self.gemms)


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
    space follow the large-register-file flag. `cpu` (None on GPUs) marks a core whose runtime
    runs a subgroup as the SIMD lanes of one CPU thread (the Intel CPU OpenCL runtime) and holds
    its vector ISA and caches: the heuristics then pick one vector register per row block and
    one subgroup per work-group, mul_add broadcasts B elements through uniform loads
    (docs/design.md §B2.1, §B3.3), and the GEMM register block comes from the CPU cost model. `gemm_blockings`
    holds blockings the autotuner measured on the device; they override the models.
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
    cpu: CpuCore | None = None
    gemm_blockings: dict[GemmKey, GemmBlocking] = field(default_factory=dict)

    # ---- constructors ------------------------------------------------------------------------

    @classmethod
    def generic(
        cls,
        register_space: int,
        max_work_group_size: int,
        subgroup_sizes: tuple[int, ...] | list[int],
    ) -> CoreInfo:
        """§B7.4: every SPIR-V feature starts false; the sizes are kept in the given order."""
        sgs = tuple(subgroup_sizes)
        if not sgs or register_space <= 0 or max_work_group_size <= 0:
            raise TinytcError(
                Status.invalid_core_info, "core info needs subgroup sizes and sizes > 0"
            )
        return cls(sgs, register_space, {s: max_work_group_size for s in sgs})

    @classmethod
    def simd_cpu(
        cls, cpu: CpuCore, max_work_group_size: int, subgroup_sizes: tuple[int, ...] | list[int]
    ) -> CoreInfo:
        """A CPU core: the register space is its vector register file."""
        info = cls.generic(cpu.vector_bytes * cpu.registers, max_work_group_size, subgroup_sizes)
        info.cpu = cpu
        return info

    @classmethod
    def intel(
        cls,
        ip_version: int,
        eus_per_subslice: int,
        threads_per_eu: int,
        subgroup_sizes: tuple[int, ...] | list[int],
    ) -> CoreInfo:
        """§B7.2 `core_info_intel`: register space and max work-group sizes from the IP version."""
        sgs = tuple(sorted(subgroup_sizes))
        if not sgs:
            raise TinytcError(Status.invalid_core_info, "no subgroup sizes")
        big_grf = _is_arch(ip_version, IntelGpuArchitecture.pvc) or _is_arch(
            ip_version, IntelGpuArchitecture.bmg
        )
        grf_size = 64 if big_grf else 32
        regs_large = 256 if big_grf else 128

        smin = sgs[0]  # of the reported sizes, also when some are dropped below

        def wgs(regs: int) -> dict[int, int]:
            return {
                s: min(threads_per_eu * 128 // regs, threads_per_eu * smin // s)
                * eus_per_subslice
                * s
                for s in sgs
            }

        # A device that reports too few threads per EU (a CPU behind a Level Zero driver has
        # no EUs) gets a maximum work-group size of 0 for the larger sizes; such a size could
        # never launch, so it is dropped rather than offered to the heuristics.
        small = wgs(128)
        sgs = tuple(s for s in sgs if small[s] > 0)
        if not sgs:
            raise TinytcError(
                Status.invalid_core_info,
                f"no subgroup size has a work-group size above 0 with {threads_per_eu} threads "
                f"per EU and {eus_per_subslice} EUs per subslice",
            )
        info = cls(
            sgs,
            grf_size * 128,
            {s: small[s] for s in sgs},
            ip_version=ip_version,
            register_space_large=grf_size * regs_large,
            max_wgs_large={s: n for s, n in wgs(regs_large).items() if s in sgs},
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
        """§B7.2 built-in tables for tgl, pvc and bmg."""
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
    def default(cls) -> CoreInfo:
        """PVC, the upstream command-line compiler's default target: what the compiler, the
        passes and the tools assume when no core info is given."""
        return cls.intel_from_arch(IntelGpuArchitecture.pvc)

    @classmethod
    def intel_from_name(cls, name: str) -> CoreInfo:
        try:
            return cls.intel_from_arch(IntelGpuArchitecture[name])
        except KeyError as e:
            raise TinytcError(Status.invalid_arguments, f"unknown architecture {name!r}") from e

    # ---- queries -----------------------------------------------------------------------------

    @property
    def vector_register_size(self) -> int:
        """Bytes of one vector register of a SIMD CPU core, 0 on other cores."""
        return self.cpu.vector_bytes if self.cpu else 0

    @property
    def large_register_file(self) -> bool:
        return bool(int(self.core_features) & _LARGE_GRF) and bool(self.register_space_large)

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
