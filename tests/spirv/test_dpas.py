"""The DPAS/XMX path of PVC and BMG (docs/design.md §B3.5): which ops take it, what they fall
back to, and the 2D block message constants. Nothing here runs on a GPU: every kernel goes
through compile_to_spirv, so spirv-val (with the inline-assembly constraint check of
spirv/validate.py) checks each module."""

from __future__ import annotations

import re

import pytest

from tinytc_py.compiler import compile_to_spirv
from tinytc_py.ir.context import CompilerContext
from tinytc_py.ir.enums import MatrixUse
from tinytc_py.spirv import dump
from tinytc_py.spirv.convert.coopmatrix_dpas import (
    Block2d,
    load_config,
    load_descriptor,
    prefetch_descriptor,
    store_config,
    store_descriptor,
)
from tinytc_py.spirv.validate import SpirvValidationError, validate
from tinytc_py.target.core_info import CoreInfo
from tinytc_py.text.dialect import parse

MUL_ADD = """
func @k(%A: memref<{ta}x64x64{attr}>, %B: memref<{ta}x64x64>, %C: memref<{tc}x64x64>)
    attributes {{subgroup_size={sgs}}} {{
  parallel {{
    %p = constant {pos} : index
    %a = cooperative_matrix_load.{t} %A[%p,%p] : coopmatrix<{ta}x{m}x{k},matrix_a>
    %b = cooperative_matrix_load.n %B[%p,%p] : coopmatrix<{ta}x{k}x{n},matrix_b>
    %c = cooperative_matrix_load.n %C[%p,%p] : coopmatrix<{tc}x{m}x{n},matrix_acc>
    %d = cooperative_matrix_mul_add %a, %b, %c : coopmatrix<{tc}x{m}x{n},matrix_acc>
    cooperative_matrix_prefetch 1, %A[%p,%p], 16, 32
    cooperative_matrix_store %d, %C[%p,%p]
  }}
}}
"""


def kernel(**kw) -> str:
    args = dict(ta="f16", tc="f32", m=32, n=32, k=32, t="n", sgs=16, pos=0, attr="")
    args.update(kw)
    return MUL_ADD.format(**args)


def compiled_text(src: str, arch: str = "pvc") -> str:
    binary = compile_to_spirv(parse(src, CompilerContext(), "k.ir"), CoreInfo.intel_from_name(arch))
    return dump(binary.data)


def asm_count(text: str) -> int:
    return len(re.findall(r"= OpAsmINTEL ", text))


@pytest.mark.parametrize("arch", ["pvc", "bmg"])
@pytest.mark.parametrize(
    "kw",
    [
        dict(),
        dict(tc="f16"),
        dict(ta="bf16", tc="bf16", n=16),
        dict(ta="i8", tc="i32", k=64, n=16),
        dict(ta="i8", tc="i32", m=64, k=32, n=8),
        dict(m=16, n=8, k=16),
        dict(t="t"),
        dict(ta="bf16", m=16, n=16, k=16, t="t"),
        dict(m=16, n=24, k=16),
    ],
)
def test_dpas_variants_validate(arch, kw):
    text = compiled_text(kernel(**kw), arch)
    assert "OpCapability AsmINTEL" in text
    assert 'OpExtension "SPV_INTEL_inline_assembly"' in text
    assert text.count("OpAsmTargetINTEL") == 1
    prec = {"f16": "hf", "bf16": "bf", "i8": "s8"}[kw.get("ta", "f16")]
    assert f"dpas.{prec}.{prec}.8.8 (M1,16)" in text
    assert "OpDecorate" in text and "SideEffectsINTEL" in text  # store and prefetch
    assert "OpSubgroupBlockReadINTEL" not in text


A_LOAD = "0x3000283:ud"  # the VNNI load descriptor of the f16 32x32 matrix_a


def test_fallback_subgroup_size_32():
    text = compiled_text(kernel(sgs=32))
    assert asm_count(text) == 0
    assert "AsmINTEL" not in text and "OpAsmTargetINTEL" not in text


@pytest.mark.parametrize(
    "kw",
    [
        dict(pos=3),  # pos0 not on 4 bytes for f16 (12 bytes are fine for the f32 C)
        dict(attr=",local"),  # 2D block IO is global only
    ],
)
def test_fallback_of_the_a_load(kw):
    src = kernel(**kw)
    if kw.get("attr"):
        src = src.replace("    cooperative_matrix_prefetch 1, %A[%p,%p], 16, 32\n", "")
    text = compiled_text(src)
    assert A_LOAD not in text
    assert "dpas.hf.hf.8.8" in text  # the other ops keep the DPAS path


def test_fallback_of_mul_add_outside_the_table():
    text = compiled_text(kernel(m=16, n=8, k=8))  # K = 8 is in no table row
    assert "dpas." not in text
    assert asm_count(text) == 3  # the accumulator load and store, the prefetch


def test_tgl_has_no_dpas():
    assert asm_count(compiled_text(kernel(), "tgl")) == 0


def test_unaligned_dynamic_stride_falls_back():
    src = kernel().replace("%A: memref<f16x64x64>", "%A: memref<f16x64x?,strided<1,?>>")
    text = compiled_text(src)
    # the pitch of A is unknown to be 8-byte aligned: A is loaded and prefetched without asm
    assert asm_count(text) == 4 and A_LOAD not in text


def test_gemm_lowering_uses_dpas():
    src = """
    func @g(%A: memref<f16x64x64>, %B: memref<f16x64x64>, %C: memref<f32x64x64>) {
      %one = constant 1.0 : f16
      %zero = constant 0.0 : f16
      gemm.n.n %one, %A, %B, %zero, %C
    }
    """
    text = compiled_text(src)
    assert "SubgroupSize 16" in text
    assert "dpas.hf.hf.8.8" in text and asm_count(text) >= 3


def test_load_descriptor_and_payload():
    """§B3.5: desc = 3 | vnni<<7 | log2(size)<<9 | transpose<<15 | min(31,#GRF)<<20 | 1<<25,
    payload dword 7 = (array_len-1)<<16 | (height-1)<<8 | (width-1)."""
    cfg = load_config(2, 32, 32, MatrixUse.a, False, 1024)  # f16 A, pieces of 16 dwords
    assert cfg == Block2d(2, 16, 32, 1, 2, 1, vnni=True)
    assert load_descriptor(cfg) == 3 | 1 << 7 | 1 << 9 | 16 << 20 | 1 << 25 == 0x3000283
    assert cfg.shape_dword == 31 << 8 | 15
    i8a = load_config(1, 32, 32, MatrixUse.a, False, 1024)
    assert (i8a.arr, i8a.shape_dword) == (2, 1 << 16 | 31 << 8 | 15)
    t = load_config(2, 16, 32, MatrixUse.a, True, 1024)  # bf16 A.t: d32 transpose
    assert (t.width, t.height, t.shift, t.grfs) == (8, 16, 1, 8)
    assert load_descriptor(t) == 3 | 2 << 9 | 1 << 15 | 8 << 20 | 1 << 25
    acc = load_config(4, 32, 32, MatrixUse.acc, False, 1024)
    assert (acc.width, acc.height, acc.x_msgs, acc.y_msgs) == (16, 16, 2, 2)


def test_store_and_prefetch_descriptor():
    st = store_config(4, 32, 32)
    assert (st.width, st.height, st.x_msgs, st.y_msgs) == (16, 8, 2, 4)
    assert store_descriptor(st) == 7 | 2 << 9 | 1 << 25
    pf = Block2d(2, 16, 32, 2, 1, 1)
    assert prefetch_descriptor(pf, 1) == 3 | 1 << 9 | 2 << 17 | 1 << 25
    assert prefetch_descriptor(pf, 0) == 3 | 1 << 9 | 4 << 17 | 1 << 25


def test_dpas_offsets_in_text():
    """f16 32x32x32 -> f32: 2 K steps x 2 M blocks x 4 N blocks = 16 dpas; the second K step
    reads A at (k*16 + m*Kc)*2 = 512 bytes and accumulates into the result itself."""
    text = compiled_text(kernel())
    lines = [ln for ln in text.splitlines() if ln.startswith("dpas.")]
    assert len(lines) == 16
    assert re.fullmatch(r"dpas\.hf\.hf\.8\.8 \(M1,16\) \$0\.0 \$0\.0 \w+\.512 \w+\(0,0\)", lines[8])


def test_validate_checks_asm_constraints():
    binary = compile_to_spirv(
        parse(kernel(), CompilerContext(), "k.ir"), CoreInfo.intel_from_name("pvc")
    ).data
    bad = binary.replace(b"=rw,=rw,rw.u", b"=rw,rw,=rw.u", 1)
    with pytest.raises(SpirvValidationError, match="constraints"):
        validate(bad)
