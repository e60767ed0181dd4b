"""Nontemporal stores of C on SIMD CPU cores: a batched f64 gemm that prefetches the next entry
(from an A of 8 KiB up to L1) and whose C is the work-group's entry of a stack and is not read
(beta 0, or with run-time alpha and beta their branch for 1 and 0; nothing else in the kernel
touches C) stores C with Aligned|Nontemporal stores and ends with an sfence, and with AVX2 code
where the next entry goes into L2 does not prefetch its C (analysis/gemm_model.py
`stores_c_nontemporal`). The lowering and the SPIR-V conversion share the memref's alignment
test (analysis/nontemporal.py): where it fails, C stays prefetched and plain. The kernel
metadata name the alignment the stores rely on (ParamInfo.nontemporal_alignment), and memory
used in place below it is an invalid argument (the stores would fault): SVM, USE_HOST_PTR
buffers and pyopencl arrays over them, SYCL USM arrays and group members. The SPIR-V
expectations pin the core info, so they hold on any host; the kernels run on the CPU device
against NumPy, on the model's tiles (64^3 f64 on AVX2: 6 x 2, so 64 rows are two tiles of 24
and one of 16; 60 rows: 8 x 1, a tile of 32 rows and one of 28), and where the hint is dropped
(a column stride or a base that is not a multiple of 32 B). f32 keeps its plain stores (the
model's `nontemporal_candidate`: measured level), which its kernels check as well."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tinytc_py.analysis.gemm_model import (
    next_entry_operands,
    prefetches_next_entry,
    stores_c_nontemporal,
)
from tinytc_py.target.gemm_blocking import GemmKey
from tinytc_py.text.dialect import parse
from tinytc_py.text.printer import print_prog

from .test_gemm_prefetch import calls, cpu, lowered, spirv_text
from .test_gemm_tuning import cl_device

pytestmark = pytest.mark.timeout(300, method="thread")

NT_STORE = re.compile(r"OpStore %\d+ %\d+ Aligned\|Nontemporal (\d+)")

GEMM = """\
func @gemm({alpha_param}%A: memref<{t}x{m}x{k}x?>, %B: memref<{t}x{k}x{n}x?>, {beta_param}
           %C: memref<{t}x{m}x{n}x?>{c_attrs}) {{
    %gid = group_id.x : index
    %a = subview %A[0:{m},0:{k},%gid] : memref<{t}x{m}x{k}>
    %b = subview %B[0:{k},0:{n},%gid] : memref<{t}x{k}x{n}>
    %c = subview %C[0:{m},0:{n},%gid] : memref<{t}x{m}x{n}>
    gemm.n.n {alpha}, %a, %b, {beta}, %c
}}
"""


def gemm(m: int, n: int, k: int, alpha: str, beta: str, c_attrs: str = "", t: str = "f64") -> str:
    """The batched gemm of element type `t`; alpha or beta "?" is a run-time parameter."""
    return GEMM.format(
        t=t,
        m=m,
        n=n,
        k=k,
        alpha_param=f"%alpha: {t}, " if alpha == "?" else "",
        beta_param=f"%beta: {t}," if beta == "?" else "",
        alpha="%alpha" if alpha == "?" else alpha,
        beta="%beta" if beta == "?" else beta,
        c_attrs=c_attrs,
    )


def nontemporal_stores(text: str) -> list[int]:
    return [int(a) for a in NT_STORE.findall(text)]


SFENCE = re.compile(r'(%\d+) = OpAsmINTEL %\d+ %\d+ %\d+ "sfence" ""')


def sfences(text: str) -> int:
    """The calls of the sfence after the nontemporal stores (`calls` counts the calls with
    operands: the prefetches)."""
    return sum(len(re.findall(rf"OpAsmCallINTEL %\d+ {a}\b", text)) for a in SFENCE.findall(text))


def run_and_check(
    source: str,
    mnk: tuple[int, int, int],
    alpha: float,
    beta: float,
    isa: str = "avx2",
    c_offset: int = 0,
) -> None:
    """Runs `source` (compiled for the core info of `isa`) on 5 entries against NumPy; run-time
    alpha and beta are passed where the kernel has them. `c_offset` elements shift C's data
    off the 32-byte boundary."""
    cl_device()
    from tinytc_py.runtime.opencl import program

    m, n, k = mnk
    batch = 5
    rng = np.random.default_rng(7)
    dtype = np.float32 if "memref<f32x" in source else np.float64
    a = np.asfortranarray(rng.standard_normal((m, k, batch)).astype(dtype))
    b = np.asfortranarray(rng.standard_normal((k, n, batch)).astype(dtype))
    size = np.dtype(dtype).itemsize
    raw = np.zeros(m * n * batch + c_offset + 128 // size, dtype)
    skip = (-raw.ctypes.data % 128) // size + c_offset
    c = raw[skip : skip + m * n * batch].reshape((m, n, batch), order="F")
    c[...] = rng.standard_normal((m, n, batch))
    want = alpha * np.einsum("ikb,kjb->ijb", a.astype(np.float64), b) + beta * c
    args: list = [a, b, c]
    if "%beta: f" in source:
        args.insert(2, dtype(beta))
    if "%alpha: f" in source:
        args.insert(0, dtype(alpha))
    program(source, core_info=cpu(isa)).kernel("gemm")(*args, num_groups=(batch, 1, 1))
    tol = 1e-12 if dtype is np.float64 else 1e-5
    np.testing.assert_allclose(c, want, rtol=tol, atol=tol * k)


def key(m: int, t: str = "f64") -> GemmKey:
    return GemmKey(m, m, m, (t,) * 3, (False, False))


def test_model_stores_f64_c_nontemporal_from_8_kib():
    """f64 stores C nontemporal where it prefetches the next entry, which it does from an A of
    8 KiB (32^3) up to L1 (64^3; 16^3 and a 72-row A of 36 KiB are outside), with AVX2 and
    AVX-512 code; into L2 (64^3) AVX2 code then prefetches A alone, AVX-512 code still A, B
    and C. f32 keeps plain stores (measured level at 48^3 and 64^3: `nontemporal_candidate`)
    and is prefetched from 8 KiB too (48^3 9 KiB, 64^3; not 32^3, 4 KiB)."""
    for isa in ("avx2", "avx512"):
        core = cpu(isa).cpu
        assert core is not None
        assert [stores_c_nontemporal(key(m), 8, core) for m in (16, 32, 48, 64, 72)] == [
            False,
            True,
            True,
            True,
            False,
        ]
        # f32 keeps plain stores at every size; it is prefetched from 8 KiB as f64 is (48^3,
        # a 64-row A of 32 columns, 64^3; not 32^3, 4 KiB)
        assert not any(stores_c_nontemporal(key(m, "f32"), 4, core) for m in (32, 48, 64, 72))
        assert [prefetches_next_entry(key(m, "f32"), 4, core) for m in (32, 48, 64)] == [
            False,
            True,
            True,
        ]
        assert prefetches_next_entry(GemmKey(64, 32, 32, ("f32",) * 3, (False, False)), 4, core)
    avx2, avx512 = cpu("avx2").cpu, cpu("avx512").cpu
    assert avx2 is not None and avx512 is not None
    assert next_entry_operands(key(64), 8, avx2, True) == ("A",)
    assert next_entry_operands(key(64), 8, avx2, False) == ("A", "C")
    assert next_entry_operands(key(32), 8, avx2, True) == ("A", "B")
    assert next_entry_operands(key(64), 8, avx512, True) == ("A", "B", "C")


@pytest.mark.parametrize(
    ("isa", "alpha", "beta", "stores"),
    # constant beta 0; run-time alpha and beta (their branch for 1 and 0 stores nontemporal,
    # the other one reads C); a constant beta that reads C; a run-time beta with a constant
    # alpha (the epilogue tests beta per vector and reads C)
    [
        ("avx2", "1.5", "0.0", 20),
        ("avx2", "?", "?", 20),
        ("avx2", "1.5", "0.5", 0),
        ("avx2", "1.5", "?", 0),
        ("avx512", "1.5", "0.0", 16),
        ("avx512", "?", "?", 16),
        ("avx512", "1.5", "0.5", 0),
    ],
)
def test_gemm_stores_c_nontemporal_where_c_is_not_read(isa, alpha, beta, stores):
    """64^3 f64: the stores of C that do not read it are Aligned|Nontemporal with the bytes of
    one register (AVX2 6 x 2, subgroups of 4 doubles: a full tile and the 16-row tile, 12 + 8
    stores of 32 B; AVX-512 8 x 2, subgroups of 8: 16 stores of 64 B). AVX2 code then
    prefetches only the next entry's A (half the prefetch calls of A and C), AVX-512 code A, B
    and C as with C read. Every variant computes what NumPy does, with run-time alpha and beta
    at 1 and 0 (the nontemporal branch) and at 1.5 and 0.7."""
    source = gemm(64, 64, 64, alpha, beta)
    text = spirv_text(source, cpu(isa))
    vector = 32 if isa == "avx2" else 64
    assert nontemporal_stores(text) == [vector] * stores
    assert sfences(text) == (1 if stores else 0)  # one at the kernel's end
    with_c = calls(spirv_text(gemm(64, 64, 64, "1.5", "0.5"), cpu(isa)))
    assert calls(text) == (with_c // 2 if stores and isa == "avx2" else with_c)
    run_and_check(
        source, (64, 64, 64), 1.5 if alpha != "?" else 1.0, float(beta.strip("?") or 0), isa
    )
    if alpha == "?" or beta == "?":
        run_and_check(source, (64, 64, 64), float(alpha.strip("?") or 1.5), 0.7, isa)


@pytest.mark.parametrize(
    ("mnk", "c_attrs", "stores"),
    [
        # 60 rows: the model's 8 x 1, a tile of 32 rows and one of 28 (7 row blocks), column
        # stride 480 B
        ((60, 64, 64), "", 8 + 7),
        # 62 rows: column stride 496 B, not a multiple of 32, and a row-checked last block
        ((62, 64, 64), "", 0),
        # a C base aligned to 8 or 16 bytes only
        ((64, 64, 64), " {alignment=8}", 0),
        ((64, 64, 64), " {alignment=16}", 0),
        # a dynamic batch stride: the entry's base is not provably aligned
        ((64, 64, 64), "dynamic-stride", 0),
    ],
    ids=["60-rows", "62-rows", "align-8", "align-16", "dynamic-stride"],
)
def test_nontemporal_hint_needs_provable_alignment(mnk, c_attrs, stores):
    """The stores are nontemporal only where each row block's vector is provably 32-byte
    aligned (analysis/nontemporal.py, shared by the lowering and the SPIR-V conversion), and
    only then is the next entry's C not prefetched: where the stores stay plain, C is
    prefetched as with C read. Each kernel computes what NumPy does (the 8- and 16-byte
    aligned C run at an address off the 32-byte boundary)."""
    m, n, _ = mnk

    def source_of(beta: str) -> str:
        if c_attrs != "dynamic-stride":
            return gemm(*mnk, "1.5", beta, c_attrs)
        dynamic = f"%C: memref<f64x{m}x{n}x?,strided<1,{m},?>>"
        return gemm(*mnk, "1.5", beta).replace(f"%C: memref<f64x{m}x{n}x?>", dynamic)

    source = source_of("0.0")
    text = spirv_text(source, cpu("avx2"))
    assert nontemporal_stores(text) == [32] * stores
    c_read = calls(spirv_text(source_of("0.5"), cpu("avx2")))
    assert (2 if stores else 1) * calls(text) == c_read
    offset = {" {alignment=8}": 1, " {alignment=16}": 2}.get(c_attrs, 0)
    run_and_check(source, mnk, 1.5, 0.0, c_offset=offset)


@pytest.mark.parametrize(
    ("isa", "mnk", "stores"),
    # 32^3: prefetched from 8 KiB, the model's 4 x 2 once prefetched (8 stores per tile);
    # 48^3: AVX2 12 x 1 (one tile of all 48 rows), AVX-512 6 x 1
    [
        ("avx2", (32, 32, 32), 8),
        ("avx2", (48, 48, 48), 12),
        ("avx512", (32, 32, 32), 8),
        ("avx512", (48, 48, 48), 6),
    ],
)
def test_prefetched_into_l1_stores_c_nontemporal_and_prefetches_a_and_b(isa, mnk, stores):
    """An f64 entry prefetched into L1 stores C nontemporal and prefetches the next entry's A
    and B as the same gemm with C read does; the kernel computes what NumPy does."""
    source = gemm(*mnk, "1.5", "0.0")
    text = spirv_text(source, cpu(isa))
    assert nontemporal_stores(text) == [32 if isa == "avx2" else 64] * stores
    c_read = calls(spirv_text(gemm(*mnk, "1.5", "0.5"), cpu(isa)))
    assert calls(text) == c_read > 0
    run_and_check(source, mnk, 1.5, 0.0, isa)


@pytest.mark.parametrize("isa", ["avx2", "avx512"])
@pytest.mark.parametrize("mnk", [(48, 48, 48), (64, 64, 64), (32, 32, 32), (23, 37, 19)])
def test_f32_keeps_plain_stores_of_c(isa, mnk):
    """f32 stores an unread C as a read one is stored, without the hint (`nontemporal_candidate`:
    measured level at 48^3 and 64^3): subgroup block writes where C's columns are 16-byte
    aligned (23x37x19's 92-byte columns are not), and the same next-entry prefetch (48^3 and
    64^3: A and B into L1; none below 8 KiB of A). The kernel, with run-time alpha and beta (the branch for
    1 and 0, and 1.5 and 0.7), computes what NumPy does."""
    source = gemm(*mnk, "?", "?", t="f32")
    text = spirv_text(source, cpu(isa))
    read = spirv_text(gemm(*mnk, "1.5", "0.5", t="f32"), cpu(isa))
    assert nontemporal_stores(text) == []
    writes = text.count("OpSubgroupBlockWriteINTEL")
    assert (writes > 0) == (mnk[0] != 23)
    assert (read.count("OpSubgroupBlockWriteINTEL") > 0) == (mnk[0] != 23)
    assert calls(text) == calls(read)
    assert (calls(text) > 0) == (mnk[0] >= 48)
    run_and_check(source, mnk, 1.0, 0.0, isa)
    run_and_check(source, mnk, 1.5, 0.7, isa)


def test_svm_memref_below_the_parameter_alignment_is_an_invalid_argument():
    """A tinytc_py.Memref of SVM at an address 8 bytes past the 128-byte default alignment is
    rejected with the invalid-argument error naming C (its nontemporal stores, vmovntpd, would
    fault there); the same Memref at an aligned address runs and computes what NumPy does."""
    cl_device()
    import pyopencl as cl

    from tinytc_py.errors import Status, TinytcError
    from tinytc_py.runtime.opencl import Memref, program

    m = batch = 64
    rng = np.random.default_rng(3)
    a = np.asfortranarray(rng.standard_normal((m, m, batch)))
    b = np.asfortranarray(rng.standard_normal((m, m, batch)))
    kernel = program(gemm(m, m, m, "1.0", "0.0"), core_info=cpu("avx2")).kernel("gemm")
    raw = np.zeros(m * m * batch + 32)
    first = (-raw.ctypes.data % 128) // 8
    strides = (1, m, m * m)
    for skip in (first + 1, first):
        c = raw[skip : skip + m * m * batch].reshape((m, m, batch), order="F")
        c_arg = Memref(cl.SVM(c), c.shape, strides)
        if skip != first:
            with pytest.raises(TinytcError, match=r"%C.* not aligned to the parameter's 128") as e:
                kernel(a, b, c_arg, num_groups=(batch, 1, 1))
            assert e.value.status is Status.invalid_kernel_arguments
            continue
        kernel(a, b, c_arg, num_groups=(batch, 1, 1))
        np.testing.assert_allclose(c, np.einsum("ikb,kjb->ijb", a, b), rtol=1e-12, atol=1e-10)


def test_only_parameters_stored_nontemporal_need_their_alignment():
    """The kernel metadata name the alignment a kernel relies on (ParamInfo
    nontemporal_alignment): 128 for the C of a beta-0 64^3 gemm, which it stores nontemporal, 0
    for its A and B and for every parameter of the beta-1 gemm (plain stores) and of the group
    gemm's A and B. So a beta-1 gemm's C in SVM only 64-byte aligned runs (as before the check)
    and computes what NumPy does."""
    cl_device()
    import pyopencl as cl

    from tinytc_py.compiler import compile_to_spirv
    from tinytc_py.runtime.opencl import Memref, program

    def relied(source: str) -> list[int]:
        binary = compile_to_spirv(parse(source), cpu("avx2"))
        return [p.nontemporal_alignment for p in binary.kernels["gemm"].params]

    assert relied(gemm(64, 64, 64, "1.0", "0.0")) == [0, 0, 128]
    assert relied(gemm(64, 64, 64, "1.0", "0.0", " {alignment=64}")) == [0, 0, 64]
    assert relied(gemm(64, 64, 64, "1.0", "1.0")) == [0, 0, 0]
    assert relied(GROUP_GEMM) == [0, 0, 128]
    m = batch = 64
    rng = np.random.default_rng(7)
    a, b, c0 = (np.asfortranarray(rng.standard_normal((m, m, batch))) for _ in range(3))
    kernel = program(gemm(m, m, m, "1.0", "1.0"), core_info=cpu("avx2")).kernel("gemm")
    raw = np.zeros(m * m * batch + 32)
    skip = (-raw.ctypes.data % 128) // 8 + 8  # 64 bytes past 128-byte alignment
    c = raw[skip : skip + m * m * batch].reshape((m, m, batch), order="F")
    c[...] = c0
    kernel(a, b, Memref(cl.SVM(c), c.shape, (1, m, m * m)), num_groups=(batch, 1, 1))
    np.testing.assert_allclose(c, c0 + np.einsum("ikb,kjb->ijb", a, b), rtol=1e-12, atol=1e-10)


CHAIN = """\
func @chain(%A: memref<f64x64x64x?>, %B: memref<f64x64x64x?>, %C: memref<f64x64x64x?>,
            %D: memref<f64x64x64x?>) {
    %gid = group_id.x : index
    %a = subview %A[0:64,0:64,%gid] : memref<f64x64x64>
    %b = subview %B[0:64,0:64,%gid] : memref<f64x64x64>
    %c = subview %C[0:64,0:64,%gid] : memref<f64x64x64>
    %d = subview %D[0:64,0:64,%gid] : memref<f64x64x64>
    gemm.n.n 1.5, %a, %b, 0.0, %c
    gemm.n.n 1.0, %c, %b, 0.0, %d
    gemm.n.n 1.0, %a, %b, 1.0, %c
}
"""


def test_c_read_elsewhere_in_the_kernel_keeps_plain_stores():
    """A C (of beta 0) that the kernel reads again, here as the next gemm's A and as the third
    gemm's C, is stored plain: only D, which nothing else touches, gets the 20 nontemporal
    stores of a 64^3 AVX2 tile pair (the first gemm's 20 would follow the same rule without
    looking at the rest of the function). The kernel computes what NumPy does."""
    assert nontemporal_stores(spirv_text(CHAIN, cpu("avx2"))) == [32] * 20
    cl_device()
    from tinytc_py.runtime.opencl import program

    batch = 4
    rng = np.random.default_rng(5)
    a, b = (np.asfortranarray(rng.standard_normal((64, 64, batch))) for _ in range(2))
    c, d = (np.zeros((64, 64, batch), order="F") for _ in range(2))
    program(CHAIN, core_info=cpu("avx2")).kernel("chain")(a, b, c, d, num_groups=(batch, 1, 1))
    ab = np.einsum("ikb,kjb->ijb", a, b)
    np.testing.assert_allclose(d, np.einsum("ikb,kjb->ijb", 1.5 * ab, b), rtol=1e-10)
    np.testing.assert_allclose(c, 2.5 * ab, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("t", ["c32", "i64"])
def test_other_8_byte_types_keep_plain_stores(t):
    """Only f64 (of the measured types) stores C nontemporal: c32 and i64, 8 bytes too, are
    prefetched from an A of 8 KiB as every type is (32^3: 8 KiB; not 16^3) and keep their plain
    stores; a 64^3 i64 gemm of beta 0 has no nontemporal store and prefetches the next entry's
    C. The 64^3 i64 and the 32^3 c32 kernel of beta 0 compute what NumPy does."""
    core = cpu("avx2").cpu
    assert core is not None
    assert not stores_c_nontemporal(key(64, t), 8, core)
    assert not prefetches_next_entry(key(16, t), 8, core)
    assert prefetches_next_entry(key(32, t), 8, core)
    assert prefetches_next_entry(key(64, t), 8, core)
    if t == "i64":
        source = gemm(64, 64, 64, "1", "0").replace("f64", "i64")
        text = spirv_text(source, cpu("avx2"))
        assert nontemporal_stores(text) == []
        c_read = gemm(64, 64, 64, "1", "2").replace("f64", "i64")
        assert calls(text) == calls(spirv_text(c_read, cpu("avx2"))) > 0
    mnk = (64, 64, 64) if t == "i64" else (32, 32, 32)
    source = gemm(*mnk, "1", "0", t=t) if t == "i64" else gemm(*mnk, "1.0", "0.0", t=t)
    assert nontemporal_stores(spirv_text(source, cpu("avx2"))) == []
    cl_device()
    from tinytc_py.runtime.opencl import program

    batch = 5
    rng = np.random.default_rng(8)
    shape = (*mnk[:2], batch)
    if t == "i64":
        a, b = (np.asfortranarray(rng.integers(-50, 50, shape)) for _ in range(2))
    else:
        a, b = (
            np.asfortranarray(
                (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
            )
            for _ in range(2)
        )
    c = np.asfortranarray(np.full(shape, 7, dtype=a.dtype))
    program(source, core_info=cpu("avx2")).kernel("gemm")(a, b, c, num_groups=(batch, 1, 1))
    want = np.einsum("ikb,kjb->ijb", a, b)
    if t == "i64":
        np.testing.assert_array_equal(c, want)
    else:
        np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-4)


def test_printed_lowered_program_keeps_the_nontemporal_hint():
    """The lowered program prints the stores' hint ({"nontemporal"=true}) and parses it back:
    the reparsed program prints the same and compiles to the same SPIR-V as the source (the
    kernel cache keys by the printed program, so a dropped hint gave another binary)."""
    source = gemm(64, 64, 64, "1.5", "0.0")
    printed = lowered(source, cpu("avx2"))
    stores = [line for line in printed.splitlines() if "cooperative_matrix_store" in line]
    assert len(stores) == 10  # 6 + 4 row blocks, two columns each in SPIR-V
    assert all(line.endswith(' {"nontemporal"=true}') for line in stores)
    assert print_prog(parse(printed)) == printed
    text = spirv_text(printed, cpu("avx2"))
    assert nontemporal_stores(text) == [32] * 20
    assert text == spirv_text(source, cpu("avx2"))


MARKED = """\
func @k(%A: memref<f64x4x4>, %B: memref<f64x4x4>) attributes{subgroup_size=4, work_group_size=[4,1]} {
    %L = alloca : memref<f64x4x4,local>
    parallel {
        %c0 = constant 0 : index
        %m = cooperative_matrix_load %A[%c0,%c0] : coopmatrix<f64x4x4,matrix_acc>
        cooperative_matrix_store %m, %L[%c0,%c0] {"nontemporal"=true}
        %n = cooperative_matrix_load %L[%c0,%c0] : coopmatrix<f64x4x4,matrix_acc>
        cooperative_matrix_store %n, %B[%c0,%c0] {"nontemporal"=true}
    }
}
"""


def test_nontemporal_hint_needs_global_memory():
    """A store written with the hint (the attribute parses) is nontemporal into a global
    memref (4 columns of one 32-byte vector) and plain into local memory; the kernel copies A
    to B through local memory as NumPy expects."""
    text = spirv_text(MARKED, cpu("avx2"))
    assert nontemporal_stores(text) == [32] * 4
    assert sfences(text) == 1
    cl_device()
    from tinytc_py.runtime.opencl import program

    a = np.asfortranarray(np.arange(16.0).reshape(4, 4))
    b = np.zeros((4, 4), order="F")
    program(MARKED, core_info=cpu("avx2")).kernel("k")(a, b, num_groups=1)
    np.testing.assert_array_equal(b, a)


def test_nontemporal_hint_false_is_plain_and_a_non_boolean_is_an_error():
    """{"nontemporal"=false} stores plain (no Nontemporal operand, no sfence); a value that is
    not a boolean ("no") is an error of the verifier at the store's line and column."""
    from tinytc_py.errors import CompilationError, Status

    plain = MARKED.replace('"nontemporal"=true', '"nontemporal"=false')
    text = spirv_text(plain, cpu("avx2"))
    assert nontemporal_stores(text) == []
    assert sfences(text) == 0
    bad = MARKED.replace('{"nontemporal"=true}\n        %n', '{"nontemporal"="no"}\n        %n')
    assert bad != MARKED
    with pytest.raises(CompilationError) as e:
        spirv_text(bad, cpu("avx2"))
    assert e.value.status is Status.ir_expected_boolean_attribute
    assert '"nontemporal" takes true or false, got "no"' in str(e.value)
    assert (e.value.loc.begin.line, e.value.loc.begin.column) == (6, 9)


def test_host_pointer_buffer_below_the_parameter_alignment_is_an_invalid_argument():
    """A tinytc_py.Memref of a cl.Buffer made with USE_HOST_PTR is the host memory itself on the
    CPU device: over host memory 8 bytes past the 128-byte alignment (the buffer itself, and a
    sub-buffer whose origin is 128 bytes into such a buffer, and a pyopencl array over the buffer)
    it is rejected naming C; the same
    sub-buffer of a buffer at an aligned address runs and computes what NumPy does."""
    cl_device()
    import pyopencl as cl
    import pyopencl.array as cla

    from tinytc_py.errors import Status, TinytcError
    from tinytc_py.runtime.opencl import Memref, program

    m = batch = 64
    n = m * m * batch
    rng = np.random.default_rng(4)
    a = np.asfortranarray(rng.standard_normal((m, m, batch)))
    b = np.asfortranarray(rng.standard_normal((m, m, batch)))
    prog = program(gemm(m, m, m, "1.0", "0.0"), core_info=cpu("avx2"))
    kernel = prog.kernel("gemm")
    raw = np.zeros(n + 64)
    first = (-raw.ctypes.data % 128) // 8
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.USE_HOST_PTR
    strides = (1, m, m * m)
    odd = cl.Buffer(prog.context, flags, hostbuf=raw[first + 1 : first + 1 + n + 16])
    for buf in (odd, odd.get_sub_region(128, n * 8)):
        with pytest.raises(
            TinytcError, match=r"%C.* cl.Buffer at .* not aligned to the param"
        ) as e:
            kernel(a, b, Memref(buf, (m, m, batch), strides), num_groups=(batch, 1, 1))
        assert e.value.status is Status.invalid_kernel_arguments
        assert int(str(e.value).split(" at address ")[1].split(",")[0], 16) % 128 == 8
    queue = cl.CommandQueue(prog.context)
    over = cla.Array(queue, (m, m, batch), np.float64, order="F", data=odd)
    with pytest.raises(TinytcError, match=r"%C.* pyopencl array of a cl.Buffer at .* not align"):
        kernel(a, b, over, num_groups=(batch, 1, 1))
    whole = cl.Buffer(prog.context, flags, hostbuf=raw[first : first + 16 + n])
    sub = whole.get_sub_region(128, n * 8)
    kernel(a, b, Memref(sub, (m, m, batch), strides), num_groups=(batch, 1, 1))
    c = np.empty((m, m, batch), order="F")
    cl.enqueue_copy(queue, c, sub)
    np.testing.assert_allclose(c, np.einsum("ikb,kjb->ijb", a, b), rtol=1e-12, atol=1e-10)


GROUP_GEMM = """\
func @gemm(%A: memref<f64x64x64x?>, %B: memref<f64x64x64x?>, %C: group<memref<f64x64x64x?>x1>) {
    %gid = group_id.x : index
    %z = constant 0 : index
    %s = load %C[%z] : memref<f64x64x64x?>
    %a = subview %A[0:64,0:64,%gid] : memref<f64x64x64>
    %b = subview %B[0:64,0:64,%gid] : memref<f64x64x64>
    %c = subview %s[0:64,0:64,%gid] : memref<f64x64x64>
    gemm.n.n 1.0, %a, %b, 0.0, %c
}
"""


def test_sycl_usm_arrays_below_the_parameter_alignment_are_invalid_arguments():
    """On a SYCL queue, a dpnp array used in place as the C of a nontemporal gemm (directly, and
    as the member of a group, whose load and subview keep the nontemporal stores) 8 or 32 bytes
    past the 128-byte alignment is rejected naming C (the member for the group); at an aligned
    address both run and compute what NumPy does."""
    pytest.importorskip("tinytc_py.runtime.sycl")
    dpctl = pytest.importorskip("dpctl")
    dpnp = pytest.importorskip("dpnp")
    import tinytc_py
    from tinytc_py.errors import Status, TinytcError
    from tinytc_py.runtime.sycl import Group

    try:
        queue = dpctl.SyclQueue("opencl:cpu")
    except dpctl.SyclQueueCreationError:
        pytest.skip("no SYCL CPU device")
    assert len(nontemporal_stores(spirv_text(GROUP_GEMM, cpu("avx2")))) > 0
    m = batch = 64
    n = m * m * batch
    rng = np.random.default_rng(6)
    a = np.asfortranarray(rng.standard_normal((m, m, batch)))
    b = np.asfortranarray(rng.standard_normal((m, m, batch)))
    expected = np.einsum("ikb,kjb->ijb", a, b)
    raw = dpnp.zeros(n + 64, dtype=np.float64, sycl_queue=queue)
    base = raw.__sycl_usm_array_interface__["data"][0]
    first = (-base % 128) // 8
    for source, member in ((gemm(m, m, m, "1.0", "0.0"), ""), (GROUP_GEMM, r" \(member 0\)")):
        kernel = tinytc_py.compile(source, device=queue, target=cpu("avx2")).kernel("gemm")
        for skip in (first + 1, first + 4, first):
            c = raw[skip : skip + n].reshape((m, m, batch), order="F")
            arg = Group([c]) if member else c
            if skip != first:
                with pytest.raises(
                    TinytcError,
                    match=rf"parameter %C: expected \S+{member}, got a USM array at .* not aligned",
                ) as e:
                    kernel(a, b, arg, num_groups=(batch, 1, 1))
                assert e.value.status is Status.invalid_kernel_arguments
                continue
            raw[...] = 0
            kernel(a, b, arg, num_groups=(batch, 1, 1))
            np.testing.assert_allclose(dpnp.asnumpy(c), expected, rtol=1e-12, atol=1e-10)
