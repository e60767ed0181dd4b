"""FMA units narrower than the vectors (AMD Zen 4 runs AVX-512 on 256-bit units): the width
read from the host's /proc/cpuinfo, the subgroup size the GEMM model picks with it, and kernels
compiled for a pinned width run against NumPy. Every expectation pins the core, so it holds on
any host."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from tinytc_py import gemm_tuning
from tinytc_py import options as lib_options
from tinytc_py.analysis.gemm_model import GemmProblem, cpu_candidates, row_passes, subgroup_size
from tinytc_py.analysis.tiling import BlasShape, suggest_subgroup_size
from tinytc_py.compiler import compile_to_spirv
from tinytc_py.ir.context import CompilerContext
from tinytc_py.ir.types import DYNAMIC, ScalarKind
from tinytc_py.numpy_types import DTYPES
from tinytc_py.passes.work_group_size import chosen_subgroup_size
from tinytc_py.target import cpu_core as cpu_core_module
from tinytc_py.target.cpu_core import (
    TARGET_ARCH_ENV,
    CpuId,
    cpu_core,
    fma_bytes_of,
    host_cpu_core,
    parse_cpuinfo,
)
from tinytc_py.target.gemm_blocking import GemmBlocking, GemmKey
from tinytc_py.text.dialect import parse

from .test_gemm_tuning import FakeTimer, cl_device, kernel, run_and_check

pytestmark = pytest.mark.timeout(300, method="thread")


def entry(n: int, vendor: str, family: int, model: int, flags: str) -> str:
    """One processor's entry of /proc/cpuinfo, with the blank line that ends it."""
    return (
        f"processor\t: {n}\nvendor_id\t: {vendor}\ncpu family\t: {family}\n"
        f"model\t\t: {model}\nmodel name\t: some CPU\nflags\t\t: {flags}\n\n"
    )


ZEN4 = ("AuthenticAMD", 25, 17)
INTEL = ("GenuineIntel", 6, 143)


def cpuinfo(vendor: str, family: int, model: int, flags: str = "fma avx2 avx512f") -> str:
    """Two processor entries: the one given, then one of another width and flags (a reader of
    the second entry would see the other width)."""
    other = INTEL if (vendor, family) == ZEN4[:2] else ZEN4
    return entry(0, vendor, family, model, flags) + entry(1, *other, "sse4_2")


@pytest.mark.parametrize(
    ("vendor", "family", "model", "fma_bytes"),
    [
        ("AuthenticAMD", 25, 17, 32),  # Zen 4 EPYC (Genoa): AVX-512 on 256-bit units
        ("AuthenticAMD", 25, 97, 32),  # Zen 4 Ryzen (Raphael)
        ("AuthenticAMD", 26, 2, 64),  # Zen 5 EPYC (Turin): 512-bit units
        ("GenuineIntel", 6, 143, 64),  # Sapphire Rapids
        ("", -1, -1, 64),  # nothing known: as wide as the vectors
    ],
)
def test_fma_width_comes_from_the_first_processor(vendor, family, model, fma_bytes):
    """Vendor and family of the first processor entry (the second one, of the other width,
    is not read) decide the width; the model does not."""
    text = cpuinfo(vendor, family, model) if vendor else ""
    cpu = parse_cpuinfo(text)
    assert (cpu.vendor, cpu.family) == (vendor, family)
    assert cpu.flags == (frozenset({"fma", "avx2", "avx512f"}) if vendor else frozenset())
    assert fma_bytes_of(cpu) == fma_bytes


@pytest.mark.parametrize(("arch", "isa"), [("", "avx512"), ("core-avx2", "avx2")])
def test_host_core_has_the_hosts_fma_width(monkeypatch, arch, isa):
    """The ISA follows CL_CONFIG_CPU_TARGET_ARCH, the FMA width the hardware: a Zen 4 host
    has 32-byte units whatever code the runtime makes; only a zmm FMA takes two passes."""
    zen4 = parse_cpuinfo(cpuinfo("AuthenticAMD", 25, 17))
    monkeypatch.setattr(cpu_core_module, "host_cpu_id", lambda: zen4)
    monkeypatch.setenv(TARGET_ARCH_ENV, arch)
    core = host_cpu_core()
    assert (core.isa, core.fma_bytes) == (isa, 32)
    assert core.fma_passes(core.vector_bytes) == (2 if isa == "avx512" else 1)
    intel = CpuId("GenuineIntel", 6, frozenset({"fma", "avx2", "avx512f"}))
    monkeypatch.setattr(cpu_core_module, "host_cpu_id", lambda: intel)
    assert host_cpu_core().fma_bytes == 64


def test_host_cpu_id_reads_the_first_entry_only(monkeypatch, tmp_path):
    """/proc/cpuinfo is read up to the end of the first processor's entry: what follows (here
    bytes that are not UTF-8, beyond the first read's buffer) is never decoded; a first entry
    that is not UTF-8 gives an empty CpuId, not an error."""
    path = tmp_path / "cpuinfo"
    rest = entry(1, *INTEL, "sse4_2") * 200 + "model name\t: \udcff\n"
    first = cpuinfo(*ZEN4)
    path.write_bytes(first.encode() + rest.encode("utf-8", "surrogateescape"))
    assert len(path.read_bytes()) > 16 * 1024
    monkeypatch.setattr(cpu_core_module, "CPUINFO", str(path))
    assert cpu_core_module.host_cpu_id() == parse_cpuinfo(first)
    assert fma_bytes_of(cpu_core_module.host_cpu_id()) == 32
    path.write_bytes(b"vendor_id\t: \xff\n")
    assert cpu_core_module.host_cpu_id() == CpuId()
    monkeypatch.setattr(cpu_core_module, "CPUINFO", str(tmp_path / "missing"))
    assert cpu_core_module.host_cpu_id() == CpuId()


@pytest.mark.parametrize(
    ("isa", "fma_bytes", "acc_size", "rows", "want"),
    [
        ("avx512", 32, 4, [23], 8),  # 3 passes in row blocks of 8 against 2 x 2 of 16
        ("avx512", 32, 4, [7], 8),
        ("avx512", 32, 4, [64], 16),  # 8 passes either way: the full vector (fewer loads)
        ("avx512", 32, 4, [48, 16], 16),
        ("avx512", 32, 4, [23, 64], 8),  # 3 + 8 against 4 + 8
        ("avx512", 32, 4, [23, -1], 16),  # an unknown M: the full vector
        ("avx512", 32, 8, [23], 8),  # f64: 6 blocks of 4 against 3 x 2 of 8, a tie
        ("avx512", 32, 8, [20], 4),  # 5 against 6
        ("avx512", 64, 4, [23], 16),  # 512-bit units: a zmm FMA is one pass
        ("avx2", 32, 4, [23], 8),  # units as wide as the ymm vectors
    ],
)
def test_subgroup_size_follows_the_fma_passes(isa, fma_bytes, acc_size, rows, want):
    cpu = cpu_core(isa, fma_bytes=fma_bytes)
    assert subgroup_size(rows, acc_size, cpu) == want
    known = [m for m in rows if m >= 0]
    native = cpu.lanes(acc_size)
    if want != native:
        fewer = sum(row_passes(m, want, acc_size, cpu) for m in known)
        assert fewer < sum(row_passes(m, native, acc_size, cpu) for m in known)


def zen4_info():
    """The CPU device's core info on a Zen 4 with AVX-512 code, pinned."""
    return lib_options.generic_cpu_core_info(cpu_core("avx512", fma_bytes=32))


def test_function_subgroup_size_uses_the_model_for_gemms_only():
    """A function with a gemm gets the model's size; other linear algebra, a dynamic M and a
    core with 512-bit units keep the lanes of one zmm."""
    ctx = CompilerContext()
    f32 = ctx.number(ScalarKind.f32)

    def shape(m: int, gemm: bool = True) -> BlasShape:
        return BlasShape(f32, f32, f32, (m, 37), gemm)

    zen4 = zen4_info()
    assert suggest_subgroup_size([shape(23)], zen4) == 8
    assert suggest_subgroup_size([shape(23, gemm=False)], zen4) == 16
    assert suggest_subgroup_size([shape(23), shape(DYNAMIC)], zen4) == 16
    assert suggest_subgroup_size([shape(23)], lib_options.core_info_for_device("cpu-avx512")) == 16
    zen4.subgroup_sizes = (4, 16, 32)  # the model's choice unsupported: one zmm's lanes
    assert suggest_subgroup_size([shape(23)], zen4) == 16


@pytest.mark.parametrize(("mnk", "t"), [((23, 37, 19), "f32"), ((20, 9, 9), "f64")])
def test_narrow_subgroup_gemm_runs(mnk, t):
    """The kernel compiled for a Zen 4 core (pinned) has the narrower subgroup and is correct
    on the CPU device."""
    cl_device()
    from tinytc_py.runtime.opencl import program

    info = zen4_info()
    binary = compile_to_spirv(parse(kernel(*mnk, t, False)), info)
    assert binary.kernel("gemm").subgroup_size == (8 if t == "f32" else 4)
    run_and_check(program(kernel(*mnk, t, False), core_info=info), *mnk, t, False)


TWO_GEMMS = """\
func @gemm(%A: memref<f32x23x19x?>, %B: memref<f32x19x37x?>, %C: memref<f32x23x37x?>,
           %D: memref<f32x32x19x?>, %E: memref<f32x32x37x?>) {
    %gid = group_id.x : index
    %a = subview %A[0:23,0:19,%gid] : memref<f32x23x19>
    %b = subview %B[0:19,0:37,%gid] : memref<f32x19x37>
    %c = subview %C[0:23,0:37,%gid] : memref<f32x23x37>
    %d = subview %D[0:32,0:19,%gid] : memref<f32x32x19>
    %e = subview %E[0:32,0:37,%gid] : memref<f32x32x37>
    %alpha = constant 1.5 : f32
    %beta = constant 0.5 : f32
    gemm.n.n %alpha, %a, %b, %beta, %c
    gemm.n.n %alpha, %d, %b, %beta, %e
}
"""


def c64_gemm(m: int, n: int, k: int, attributes: str = "") -> str:
    return (
        f"func @gemm(%A: memref<c64x{m}x{k}>, %B: memref<c64x{k}x{n}>, %C: memref<c64x{m}x{n}>)"
        f" {attributes}{{\n    %one = constant [1.0, 0.0] : c64\n"
        "    gemm.n.n %one, %A, %B, %one, %C\n}\n"
    )


def key_of(m: int, n: int, k: int, t: str) -> GemmKey:
    return GemmKey(m, n, k, (t,) * 3, (False, False))


@pytest.mark.parametrize(
    ("source", "key", "acc_size", "sgs"),
    [
        (kernel(23, 37, 19, "f32", False), key_of(23, 37, 19, "f32"), 4, 8),
        # with M = 23 in the function, M = 32 is timed at 8 too (alone it would get 16)
        (TWO_GEMMS, key_of(32, 37, 19, "f32"), 4, 8),
        # the model's 2 lanes are no CPU subgroup size: the compile's 4
        (c64_gemm(5, 7, 3), key_of(5, 7, 3, "c64"), 16, 4),
        # the function's attribute
        (c64_gemm(5, 7, 3, "attributes {subgroup_size=8} "), key_of(5, 7, 3, "c64"), 16, 8),
    ],
)
def test_tuner_times_blockings_for_the_compiled_subgroup_size(
    monkeypatch, tmp_path, source, key, acc_size, sgs
):
    """The autotuner's candidates are the model's for the subgroup size the compile gives the
    gemm's function, its kernels have that size, and the table's key says it."""
    monkeypatch.setenv("TINYTC_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(gemm_tuning, "CANDIDATES", 3)
    info = zen4_info()
    prog = parse(source)
    assert chosen_subgroup_size(prog.funcs[0], info) == sgs
    timer = FakeTimer()
    tuned = gemm_tuning.tune(prog, info, timer)
    kernels = [k for k in timer.kernels if k.params[2][0] == (key.M, key.N)]
    assert {k.binary.kernel(k.name).subgroup_size for k in timer.kernels} == {sgs}
    size = np.dtype(DTYPES[key.types[0]]).itemsize
    candidates = cpu_candidates(GemmProblem(key.M, key.N, key.K, size, size, sgs), info.cpu, 3)
    assert len(kernels) == len(candidates)
    assert tuned.gemm_blockings[key] == candidates[-1]
    model_alone = subgroup_size([key.M], acc_size, info.cpu)
    if model_alone != sgs:  # what the tuner used to time at
        others = cpu_candidates(
            GemmProblem(key.M, key.N, key.K, size, size, model_alone), info.cpu, 3
        )
        assert candidates != others
    (path,) = (tmp_path / "tuning").glob("*.json")
    assert path.name == "Fake_CPU-1.0-avx512-tuner3.json"
    assert gemm_tuning.table_key(key, sgs) in json.loads(path.read_text())


def test_tuner_times_full_width_on_512_bit_units(monkeypatch, tmp_path):
    monkeypatch.setenv("TINYTC_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(gemm_tuning, "CANDIDATES", 3)
    wide = dataclasses.replace(zen4_info(), cpu=cpu_core("avx512"))
    timer = FakeTimer()
    gemm_tuning.tune(parse(kernel(23, 37, 19, "f32", True)), wide, timer)
    assert {k.binary.kernel(k.name).subgroup_size for k in timer.kernels} == {16}


def test_a_choice_timed_at_another_subgroup_size_is_not_reused(monkeypatch, tmp_path):
    """A choice stored for the gemm at subgroup size 16 (on a core with 512-bit units, or by
    the tuner before version 3) is not taken for a compile at 8: it is timed again and both
    are kept."""
    monkeypatch.setenv("TINYTC_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(gemm_tuning, "CANDIDATES", 3)
    info = zen4_info()
    key = key_of(23, 37, 19, "f32")
    wide = gemm_tuning.table_key(key, 16)
    path = gemm_tuning.tuning_file(FakeTimer(), info)
    path.parent.mkdir(parents=True)
    old = path.with_name(path.name.replace("tuner3", "tuner2"))
    old.write_text(json.dumps({key.text(): "2x6k4"}))  # the file of the tuner before
    path.write_text(json.dumps({wide: "2x6k4"}))
    timer = FakeTimer()
    tuned = gemm_tuning.tune(parse(kernel(23, 37, 19, "f32", False)), info, timer)
    candidates = cpu_candidates(GemmProblem(23, 37, 19, 4, 4, 8), info.cpu, 3)
    assert len(timer.kernels) == 3
    assert tuned.gemm_blockings == {key: candidates[-1]} != {key: GemmBlocking(2, 6, 4)}
    table = json.loads(path.read_text())
    assert table == {wide: "2x6k4", gemm_tuning.table_key(key, 8): candidates[-1].text()}


def test_a_gemm_at_two_subgroup_sizes_keeps_the_model():
    """The core info holds one blocking per gemm key: a key that two functions compile at
    different subgroup sizes is not tuned (each function gets the model's blocking for its
    size)."""
    info = zen4_info()
    dynamic = kernel(23, 37, 19, "f32", False).replace("@gemm", "@alone") + (
        "func @with_dynamic(%A: memref<f32x23x19>, %B: memref<f32x19x37>, %C: memref<f32x23x37>,"
        " %D: memref<f32x?x19>, %E: memref<f32x?x37>) {\n"
        "    %one = constant 1.0 : f32\n"
        "    gemm.n.n %one, %A, %B, %one, %C\n"
        "    gemm.n.n %one, %D, %B, %one, %E\n}\n"
    )
    prog = parse(dynamic)
    assert [chosen_subgroup_size(f, info) for f in prog.funcs] == [8, 16]
    timer = FakeTimer()
    assert gemm_tuning.tune(prog, info, timer) is info
    assert timer.kernels == []
