"""Core info numbers (docs/design.md §B7) and the CPU OpenCL device's core info."""

from __future__ import annotations

import pytest

from tinytc_py.errors import Status, TinytcError
from tinytc_py.ir.types import ScalarKind
from tinytc_py.target.core_info import (
    CoreFeature,
    CoreInfo,
    IntelGpuArchitecture,
    SpirvFeature,
    SupportLevel,
)
from tinytc_py.target.cpu_core import (
    TARGET_ARCH_ENV,
    cpu_core,
    host_cpu_core,
    isa_of_flags,
    isa_of_target_arch,
)

pytestmark = pytest.mark.timeout(120, method="thread")


@pytest.mark.parametrize(
    ("arch", "sgs", "space", "wgs", "space_large", "wgs_large"),
    [
        ("tgl", (8, 16, 32), 4096, {8: 448, 16: 384, 32: 256}, 4096, {8: 448, 16: 384, 32: 256}),
        ("pvc", (16, 32), 8192, {16: 1024, 32: 1024}, 16384, {16: 512, 32: 1024}),
        ("bmg", (16, 32), 8192, {16: 1024, 32: 1024}, 16384, {16: 512, 32: 1024}),
    ],
)
def test_intel_tables(arch, sgs, space, wgs, space_large, wgs_large):
    info = CoreInfo.intel_from_name(arch)
    assert info.subgroup_sizes == sgs
    assert info.register_space == space
    assert {s: info.max_work_group_size(s) for s in sgs} == wgs
    info.core_features = CoreFeature.large_register_file
    assert info.register_space == space_large
    assert {s: info.max_work_group_size(s) for s in sgs} == wgs_large
    assert info.minmax_work_group_size == min(wgs_large.values())
    cfg = info.get_core_config(sgs[-1])
    assert (cfg.subgroup_size, cfg.register_space) == (sgs[-1], space_large)
    with pytest.raises(TinytcError) as e:
        info.get_core_config(4)
    assert e.value.status is Status.unsupported_subgroup_size


def test_intel_features():
    tgl = CoreInfo.intel_from_arch(IntelGpuArchitecture.tgl)
    pvc = CoreInfo.intel_from_arch(IntelGpuArchitecture.pvc)
    assert not tgl.have_spirv_feature(SpirvFeature.float64)
    assert not tgl.have_spirv_feature(SpirvFeature.bfloat16_conversion)
    assert tgl.have_spirv_feature(SpirvFeature.atomic_float32_add_global)
    assert tgl.matrix is None and tgl.support_level is SupportLevel.basic
    missing = set(SpirvFeature) - pvc.spirv_features
    assert missing == {
        SpirvFeature.atomic_float16_add_local,
        SpirvFeature.atomic_float16_add_global,
    }
    assert pvc.matrix.required_subgroup_size == 16
    assert pvc.matrix.have_gemm("f16", "f16", "f32", 32, 32, 16)
    assert not pvc.matrix.have_gemm("f32", "f32", "f32", 32, 32, 16)
    assert pvc.support_level is SupportLevel.tuned
    with pytest.raises(TinytcError):
        CoreInfo.intel_from_name("xyz")


def test_generic():
    info = CoreInfo.generic(4096, 256, [32, 16])
    assert info.subgroup_sizes == (32, 16)  # kept unsorted (§B7.4)
    assert info.max_work_group_size(16) == 256 and info.default_alignment == 128
    assert not info.spirv_features
    with pytest.raises(TinytcError) as e:
        CoreInfo.generic(4096, 256, [])
    assert e.value.status is Status.invalid_core_info


def test_cpu_device():
    pytest.importorskip("pyopencl")
    from tinytc_py.runtime import device
    from tinytc_py.runtime.cl_core_info import core_info_from_cl_device
    from tinytc_py.runtime.device import find_libintelocl

    try:
        dev = device.default_device()
    except RuntimeError:
        pytest.skip("no OpenCL device")
    info = core_info_from_cl_device(dev)
    assert info.subgroup_sizes == tuple(sorted(device.subgroup_sizes(dev)))
    assert info.max_work_group_size(info.subgroup_sizes[0]) == dev.max_work_group_size
    assert info.default_alignment == dev.mem_base_addr_align // 8
    assert info.have_spirv_feature(SpirvFeature.subgroup_dispatch)
    if "cl_khr_fp64" in dev.extensions:
        assert info.have_spirv_feature(SpirvFeature.float64)
    if dev.vendor_id == 0x8086 and dev.type & device.cl.device_type.CPU:
        # the core the runtime generates code for: CL_CONFIG_CPU_TARGET_ARCH, else the host
        want = host_cpu_core(find_libintelocl().parent / "cl.cfg")
        assert (info.cpu.isa, info.vector_register_size) == (want.isa, want.vector_bytes)
        assert info.register_space == want.vector_bytes * want.registers


def simd_cpu(isa: str = "avx512") -> CoreInfo:
    """The CPU OpenCL runtime's core for an ISA, without the device (pinned: the expectations
    below hold on any host)."""
    return CoreInfo.simd_cpu(cpu_core(isa), 8192, (4, 8, 16, 32, 64))


@pytest.mark.parametrize(
    ("isa", "types", "sgs"),
    [
        ("avx512", ("f32", "f32", "f32"), 16),
        ("avx512", ("f64", "f64", "f64"), 8),
        ("avx512", ("f16", "f16", "f16"), 16),
        ("avx512", ("c64", "c64", "c64"), 4),
        ("avx512", ("i8", "i8", "i32"), 16),
        ("avx512", (), 16),
        ("avx2", ("f32", "f32", "f32"), 8),
        ("avx2", ("f64", "f64", "f64"), 4),
        ("avx2", (), 8),
    ],
)
def test_simd_cpu_sizes(isa, types, sgs):
    """A SIMD CPU core: one vector register of the accumulator type per row block (32-bit
    without linear algebra) and one subgroup per work-group (docs/design.md §B2.1)."""
    from tinytc_py.analysis.tiling import BlasShape, suggest_local_tiling, suggest_subgroup_size
    from tinytc_py.ir.context import CompilerContext

    ctx = CompilerContext()
    shapes = []
    if types:
        a, b, c = (ctx.number(ScalarKind[t]) for t in types)
        shapes = [BlasShape(a, b, c, (64, 64), True)]
    info = simd_cpu(isa)
    assert suggest_subgroup_size(shapes, info) == sgs
    assert suggest_local_tiling(shapes, sgs, info) == (1, 1)
    info.subgroup_sizes = (2, 32)  # the native size unsupported: the generic rule applies
    assert suggest_subgroup_size(shapes, info) in (2, 32)


@pytest.mark.parametrize(
    ("arch", "isa"),
    [
        ("skx", "avx512"),
        ("icelake-server", "avx512"),
        ("SapphireRapids", "avx512"),
        ("core-avx2", "avx2"),
        ("corei7-avx", "avx"),
        ("corei7", "sse4.2"),
        ("auto", None),
        ("", None),
    ],
)
def test_isa_of_target_arch(arch, isa):
    """CL_CONFIG_CPU_TARGET_ARCH values of the CPU runtime's cl.cfg; auto = the host."""
    assert isa_of_target_arch(arch) == isa


def test_isa_of_flags():
    assert isa_of_flags({"fma", "avx", "avx2", "avx512f"}) == "avx512"
    assert isa_of_flags({"fma", "avx", "avx2"}) == "avx2"
    assert isa_of_flags({"avx"}) == "avx"
    assert isa_of_flags(set()) == "sse4.2"


@pytest.mark.parametrize("arch", ["core-avx2", "skx"])
def test_target_arch_overrides_the_host(monkeypatch, tmp_path, arch):
    """The environment variable wins over cl.cfg, cl.cfg over the host's flags; the register
    file follows the ISA (AVX2: 16 x 32 B, AVX-512: 32 x 64 B)."""
    config = tmp_path / "cl.cfg"
    config.write_text(f"# comment\n{TARGET_ARCH_ENV} = corei7\n")
    monkeypatch.delenv(TARGET_ARCH_ENV, raising=False)
    assert host_cpu_core(config).isa == "sse4.2"
    monkeypatch.setenv(TARGET_ARCH_ENV, arch)
    core = host_cpu_core(config)
    assert (core.vector_bytes, core.registers) == ((32, 16) if arch == "core-avx2" else (64, 32))
    info = CoreInfo.simd_cpu(core, 8192, (8, 16))
    assert info.register_space == core.vector_bytes * core.registers
