"""What the GEMM tuning model needs to know about an x86 core that runs subgroups as the SIMD
lanes of one thread (the Intel CPU OpenCL runtime): its vector instruction set and caches.

Why this is not read from the OpenCL device alone: the runtime generates code for the ISA that
`CL_CONFIG_CPU_TARGET_ARCH` names (environment variable, else the `cl.cfg` next to
`libintelocl.so`; "auto" = the host), but CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT keeps reporting
the host's width. So the ISA comes from that setting when it names one, else from the host's
/proc/cpuinfo flags; the caches come from sysfs.

The width of the FMA units is a fact of the hardware the code runs on, not of the ISA: an AMD
Zen 4 core executes each 512-bit FMA as two halves on its 256-bit units, an Intel Xeon or a
Zen 5 desktop or server core in one pass. Neither the ISA nor the OpenCL device tells them
apart, so it comes from the host's vendor and CPU family (`fma_bytes_of`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

TARGET_ARCH_ENV = "CL_CONFIG_CPU_TARGET_ARCH"
FULL_WIDTH_FMA_BYTES = 64  # FMA units as wide as the widest vector (AVX-512) of the ISAs here


@dataclass(frozen=True)
class CpuCore:
    """A SIMD CPU core. `fma_units` = vector FMAs issued per cycle, `fma_latency` in cycles
    (so fma_units * fma_latency independent accumulators keep the FMA pipes busy),
    `load_units` = vector loads or broadcasts per cycle that keep up with the FMAs (2: on an
    AVX-512 EPYC (Zen 5) the runtime's code for 8 row blocks x 1 column, 9 loads per 8 FMAs,
    reached 63 % of the FMA peak); caches in bytes per core. `fma_bytes` is the width of one
    FMA unit: a vector FMA wider than it takes vector_bytes / fma_bytes passes through the
    unit (AMD Zen 4 with AVX-512: 32), so on such a core a narrower vector costs no more FMA
    throughput per lane (`fma_passes`)."""

    isa: str
    vector_bytes: int
    registers: int
    fma_units: int = 2
    fma_latency: int = 4
    load_units: int = 2
    l1_bytes: int = 32 * 1024
    l2_bytes: int = 1024 * 1024
    fma_bytes: int = FULL_WIDTH_FMA_BYTES

    def lanes(self, elem_size: int) -> int:
        return self.vector_bytes // elem_size

    def fma_passes(self, vector_bytes: int) -> int:
        """Passes through an FMA unit that one FMA on `vector_bytes` bytes takes."""
        return max(1, -(-vector_bytes // self.fma_bytes))

    @property
    def mask_registers(self) -> bool:
        """Whether masked loads and stores take their mask from mask registers (AVX-512)
        rather than from a vector register (AVX2, AVX and SSE4.2)."""
        return self.isa == "avx512"


ISAS = {
    "avx512": CpuCore("avx512", 64, 32),
    "avx2": CpuCore("avx2", 32, 16),
    "avx": CpuCore("avx", 32, 16, fma_units=1),  # no FMA: one multiply and one add port
    "sse4.2": CpuCore("sse4.2", 16, 16, fma_units=1),
}

# CL_CONFIG_CPU_TARGET_ARCH values (cl.cfg lists examples; LLVM CPU names) -> ISA.
_TARGET_ARCH_ISA = {
    "corei7": "sse4.2",
    "corei7-avx": "avx",
    "core-avx-i": "avx",
    "core-avx2": "avx2",
    "haswell": "avx2",
    "broadwell": "avx2",
    "skylake": "avx2",
    "alderlake": "avx2",
    "znver2": "avx2",
    "znver3": "avx2",
    "skx": "avx512",
    "skylake-avx512": "avx512",
    "cascadelake": "avx512",
    "cooperlake": "avx512",
    "icelake-client": "avx512",
    "icelake-server": "avx512",
    "tigerlake": "avx512",
    "sapphirerapids": "avx512",
    "graniterapids": "avx512",
    "znver4": "avx512",
    "znver5": "avx512",
}


def isa_of_target_arch(arch: str) -> str | None:
    """The ISA the CPU runtime targets for a CL_CONFIG_CPU_TARGET_ARCH value (None: host)."""
    return _TARGET_ARCH_ISA.get(arch.strip().lower())


def isa_of_flags(flags: set[str]) -> str:
    """The widest ISA the CPU runtime uses given /proc/cpuinfo flags."""
    if "avx512f" in flags:
        return "avx512"
    if {"avx2", "fma"} <= flags:
        return "avx2"
    return "avx" if "avx" in flags else "sse4.2"


def cpu_core(
    isa: str, l1_bytes: int = 0, l2_bytes: int = 0, fma_bytes: int = FULL_WIDTH_FMA_BYTES
) -> CpuCore:
    """The core of an ISA name (ISAS keys), with the given cache sizes when > 0 and FMA units
    of `fma_bytes` (default: as wide as the vectors)."""
    core = ISAS[isa]
    return replace(
        core,
        l1_bytes=l1_bytes or core.l1_bytes,
        l2_bytes=l2_bytes or core.l2_bytes,
        fma_bytes=fma_bytes,
    )


@dataclass(frozen=True)
class CpuId:
    """The first processor entry of /proc/cpuinfo: vendor_id, cpu family, flags."""

    vendor: str = ""
    family: int = -1
    flags: frozenset[str] = frozenset()


def parse_cpuinfo(text: str) -> CpuId:
    """The `CpuId` of the first processor in /proc/cpuinfo text (missing fields: defaults)."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        key = key.strip()
        if not key and fields:  # the blank line after the first processor
            break
        if sep and key not in fields:
            fields[key] = value.strip()

    def number(key: str) -> int:
        try:
            return int(fields.get(key, ""))
        except ValueError:
            return -1

    return CpuId(
        fields.get("vendor_id", ""),
        number("cpu family"),
        frozenset(fields.get("flags", "").split()),
    )


AMD_ZEN3_ZEN4_FAMILY = 0x19  # Zen 3 (no AVX-512) and Zen 4: 256-bit FMA units


def fma_bytes_of(cpu: CpuId) -> int:
    """Width of the FMA units of a host: 32 on AMD family 0x19 (Zen 4 runs AVX-512 on its
    256-bit units; Zen 3 has no AVX-512 and AVX2 vectors are 32 bytes anyway), else as wide
    as the widest vector (Intel cores, Zen 5 desktop and server cores). The vendor and family
    decide it, not the model: a core whose units are narrower than its ISA and that they do
    not tell apart (a laptop part of a family with full-width desktop units) only loses the
    narrower subgroups' gain."""
    if cpu.vendor == "AuthenticAMD" and cpu.family == AMD_ZEN3_ZEN4_FAMILY:
        return 32
    return FULL_WIDTH_FMA_BYTES


CPUINFO = "/proc/cpuinfo"


def host_cpu_id() -> CpuId:
    """The `CpuId` of the host's first processor, read from CPUINFO up to the end of its
    entry (a host with hundreds of processors repeats it for each); empty when unreadable."""
    lines: list[str] = []
    try:
        with open(CPUINFO, encoding="utf-8") as f:
            for line in f:
                if not line.strip() and lines:
                    break
                lines.append(line)
    except (OSError, ValueError):  # ValueError: not UTF-8
        return CpuId()
    return parse_cpuinfo("".join(lines))


def _configured_arch(config: Path | None) -> str:
    """CL_CONFIG_CPU_TARGET_ARCH from the environment, else from the runtime's cl.cfg."""
    arch = os.environ.get(TARGET_ARCH_ENV, "")
    if arch or config is None:
        return arch
    try:
        for line in config.read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition("=")
            if key.strip() == TARGET_ARCH_ENV:
                return value.strip()
    except OSError:
        pass
    return ""


def _cache_size(level: int, kind: str) -> int:
    """Bytes of the cpu0 cache of `level` and `kind` ("Data"/"Unified") from sysfs, or 0."""
    root = Path("/sys/devices/system/cpu/cpu0/cache")
    for index in sorted(root.glob("index*")):
        try:
            if int((index / "level").read_text()) != level:
                continue
            if (index / "type").read_text().strip() not in (kind, "Unified"):
                continue
            size = (index / "size").read_text().strip()
        except (OSError, ValueError):
            continue
        units = {"K": 1024, "M": 1024 * 1024}
        return int(size.rstrip("KM")) * units.get(size[-1], 1)
    return 0


def host_cpu_core(runtime_config: Path | None = None) -> CpuCore:
    """The core the CPU runtime generates code for on this host: the ISA of its
    CL_CONFIG_CPU_TARGET_ARCH setting (`runtime_config` = its cl.cfg), else of the host's
    flags; the caches of cpu0; the host's FMA width (`fma_bytes_of`)."""
    host = host_cpu_id()
    isa = isa_of_target_arch(_configured_arch(runtime_config)) or isa_of_flags(set(host.flags))
    return cpu_core(isa, _cache_size(1, "Data"), _cache_size(2, "Unified"), fma_bytes_of(host))
