"""Cooperative-matrix SPIR-V without a device: when the block-IO path (docs/design.md §B3.4) is taken,
the representation (scalars per component; one vector of 2, 3, 4, 8 or 16 of them across phis,
no odd vector lengths), capabilities and
extensions, and compile-time errors. Every module here has passed spirv-val.

Coverage: no execution here (see test_exec_coopmatrix.py / test_exec_coopmatrix_tiles.py for
the instruction x transpose x shape x type x atomic grid); every module built by any exec test
goes through compile_to_spirv, which always runs spirv-val."""

from __future__ import annotations

import re

import pytest

from tinytc_py.compiler import compile_to_spirv
from tinytc_py.errors import CompilationError, Status
from tinytc_py.spirv import dump
from tinytc_py.target.core_info import CoreInfo, SpirvFeature
from tinytc_py.text.dialect import parse

pytestmark = pytest.mark.timeout(120, method="thread")


def pvc() -> CoreInfo:
    """PVC without its matrix extension, so the block and generic paths are what is tested
    (the DPAS path has tests/spirv/test_dpas.py)."""
    info = CoreInfo.intel_from_name("pvc")
    info.matrix = None
    return info


def cpu_like() -> CoreInfo:
    """A generic core with every SPIR-V feature (like the CPU OpenCL runtime's)."""
    info = CoreInfo.generic(2048, 1024, (8, 16, 32))
    info.spirv_features = set(SpirvFeature)
    return info


def spv(params: str, body: str, S: int = 16, info: CoreInfo | None = None) -> str:
    text = (
        f"func @k({params}) attributes {{subgroup_size={S}, work_group_size=[{S},1]}} {{\n"
        f"    parallel {{\n{body}\n    }}\n}}\n"
    )
    return dump(compile_to_spirv(parse(text), info or pvc()).data)


def copy(ty: str, M: int, N: int, src: str, dst: str, pos: str = "%c0,%c0", mods: str = "") -> str:
    return f"""        %c0 = constant 0 : index
        %a = cooperative_matrix_load{mods} %A[{pos}] : coopmatrix<{ty}x{M}x{N},matrix_acc>
        cooperative_matrix_store{mods} %a, %B[{pos}]"""


def blocks(text: str) -> tuple[int, int]:
    return text.count("OpSubgroupBlockReadINTEL"), text.count("OpSubgroupBlockWriteINTEL")


ROW_IN_FLOATS = """
        %f = cast %x4 : f32
        %half = constant 0.5 : f32
        %h = mul %f, %half : f32
        %row = cast %h : index"""


@pytest.mark.parametrize(
    "params,pos,expected",
    [
        # reads need 4-byte alignment (f32 always has it); writes 16 bytes: stride1 unknown
        ("%A: memref<f32x?x?>, %B: memref<f32x?x?>", "%c0,%c0", (5, 0)),
        # static stride 64 (256 B), base 128 B, row 0: both
        ("%A: memref<f32x64x5>, %B: memref<f32x64x5>", "%c0,%c0", (5, 5)),
        # stride_gcd and alignment attributes
        ("%A: memref<f32x?x?>, %B: memref<f32x?x?> {stride_gcd=[1,4]}", "%c0,%c0", (5, 5)),
        (
            "%A: memref<f32x?x?>, %B: memref<f32x?x?> {alignment=8, stride_gcd=[1,4]}",
            "%c0,%c0",
            (5, 0),
        ),
        # the row position must be a multiple of 4 elements for writes
        ("%A: memref<f32x64x5>, %B: memref<f32x64x5>, %x: index", "%x,%c0", (5, 0)),
        ("%A: memref<f32x64x5>, %B: memref<f32x64x5>, %x: index", "%x4,%x", (5, 5)),
        # row 2x computed as (4x as f32) * 0.5: a float -> index cast keeps no divisor of 4x
        ("%A: memref<f32x64x5>, %B: memref<f32x64x5>, %x: index", "%row,%c0", (5, 0)),
    ],
)
def test_block_io_alignment(params, pos, expected):
    body = copy("f32", 32, 5, "A", "B", pos)
    body = body.replace(
        "        %c0 = constant 0 : index",
        "        %c0 = constant 0 : index\n        %four = constant 4 : index\n"
        + ("        %x4 = mul %x, %four : index" if "%x" in params else "")
        + (ROW_IN_FLOATS if "%row" in pos else ""),
    )
    assert blocks(spv(params, body)) == expected


def test_block_io_loop_variable_and_subview_offsets():
    """gcd facts: a loop variable from 0 in steps of 8 rows, a subview offset of 4 rows keeps
    the 16-byte alignment; an offset of 1 row loses it."""
    body = """        %c0 = constant 0 : index
        %c8 = constant 8 : index
        %c64 = constant 64 : index
        %S4 = subview %B[4:32, 0:5] : memref<f32x32x5,strided<1,64>>
        %S1 = subview %B[1:32, 0:5] : memref<f32x32x5,strided<1,64>>
        for %i=%c0,%c64,%c8 {
            %a = cooperative_matrix_load %A[%i,%c0] : coopmatrix<f32x32x5,matrix_acc>
            cooperative_matrix_store %a, %B[%i,%c0]
            cooperative_matrix_store %a, %S4[%c0,%c0]
            cooperative_matrix_store %a, %S1[%c0,%c0]
        }"""
    text = spv("%A: memref<f32x96x5>, %B: memref<f32x64x5>", body)
    assert blocks(text) == (5, 10)


@pytest.mark.parametrize(
    "ty,M,N,mods,params",
    [
        ("f32", 8, 5, "", ""),  # rows < S
        ("f32", 16, 5, ".t", ""),  # transposed
        ("f32", 16, 5, ".n.rows_checked", ""),
        ("f32", 16, 5, ".n.both_checked", ""),
        ("c64", 16, 5, "", ""),
        ("f32", 16, 5, "", ",local"),
    ],
)
def test_block_io_falls_back(ty, M, N, mods, params):
    body = copy(ty, M, N, "A", "B", mods=mods)
    shape = f"{ty}x{max(M, N)}x{max(M, N)}{params}"
    text = spv(f"%A: memref<{shape}>, %B: memref<{shape}>", body)
    assert blocks(text) == (0, 0)
    assert "SubgroupBufferBlockIOINTEL" not in text


def test_block_io_columns_and_io_types():
    """A memref exactly as tall as the matrix moves 8 columns per IO; f16 travels as i16 on an
    Intel GPU core and not at all on a generic (CPU) core; cols_checked keeps block IO."""
    text = spv("%A: memref<f32x16x8>, %B: memref<f32x16x8>", copy("f32", 16, 8, "A", "B"))
    assert blocks(text) == (1, 1)
    assert re.search(r"OpSubgroupBlockReadINTEL %\d+ %\d+", text)
    assert re.search(r"OpTypeVector %\d+ 8", text)
    params = "%A: memref<f16x32x5>, %B: memref<f16x32x5>"
    text = spv(params, copy("f16", 32, 5, "A", "B"))
    assert blocks(text) == (5, 5)
    assert "OpCapability Int16" in text and 'OpExtension "SPV_INTEL_subgroups"' in text
    assert blocks(spv(params, copy("f16", 32, 5, "A", "B"), info=cpu_like())) == (0, 0)
    mods = ".n.cols_checked"
    text = spv("%A: memref<f32x?x?>, %B: memref<f32x64x9>", copy("f32", 32, 5, "A", "B", mods=mods))
    assert blocks(text) == (5, 5)
    assert text.count("OpSelectionMerge") == 10


def test_representation_has_no_odd_vectors_and_phis_per_component():
    """A 16x13 f32 matrix (V = 13 at S = 16) through a loop: 13 OpPhi in the loop header."""
    body = """        %c0 = constant 0 : index
        %c4 = constant 4 : index
        %a = cooperative_matrix_load %A[%c0,%c0] : coopmatrix<f32x16x13,matrix_acc>
        %r = for %i=%c0,%c4 init(%x=%a) -> (coopmatrix<f32x16x13,matrix_acc>) {
            %y = add %x, %x : coopmatrix<f32x16x13,matrix_acc>
            yield (%y)
        }
        cooperative_matrix_store %r, %A[%c0,%c0]"""
    text = spv("%A: memref<f32x?x?>", body)
    assert text.count("OpPhi") == 1 + 13
    for n in re.findall(r"OpTypeVector %\d+ (\d+)", text):
        assert int(n) in (2, 3, 4, 8, 16)


def loop_of(ty: str, M: int, N: int) -> str:
    """A loop carrying a loaded matrix, doubled in each step, stored after the loop."""
    mt = f"coopmatrix<{ty}x{M}x{N},matrix_acc>"
    return f"""        %c0 = constant 0 : index
        %c4 = constant 4 : index
        %a = cooperative_matrix_load %A[%c0,%c0] : {mt}
        %r = for %i=%c0,%c4 init(%x=%a) -> ({mt}) {{
            %y = add %x, %x : {mt}
            yield (%y)
        }}
        cooperative_matrix_store %r, %A[%c0,%c0]"""


@pytest.mark.parametrize(
    "ty,M,N,V,vector16",
    [("f32", 16, 4, 4, False), ("f64", 16, 8, 8, True), ("i16", 16, 16, 16, True)],
)
def test_loop_carries_2_to_16_components_in_one_vector_phi(ty, M, N, V, vector16):
    text = spv(f"%A: memref<{ty}x?x?>", loop_of(ty, M, N))
    phis = re.findall(r"OpPhi (%\d+)", text)
    assert len(phis) == 2  # the loop variable and the matrix
    vec = re.search(rf"(%\d+) = OpTypeVector %\d+ {V}\n", text)
    assert vec and phis[1] == vec.group(1)
    assert text.count("OpCompositeExtract") >= V and "OpCompositeConstruct" in text
    assert ("OpCapability Vector16\n" in text) == vector16


def test_complex_matrices_keep_phis_per_component():
    text = spv("%A: memref<c32x?x?>", loop_of("c32", 16, 4))
    assert text.count("OpPhi") == 1 + 4


def test_reduce_column_uses_shuffle_xor_with_capability():
    body = """        %c0 = constant 0 : index
        %a = cooperative_matrix_load %A[%c0,%c0] : coopmatrix<f32x16x5,matrix_acc>
        %r = cooperative_matrix_reduce_add.column %a : coopmatrix<f32x1x5,matrix_acc>
        cooperative_matrix_store %r, %B[%c0,%c0]"""
    text = spv("%A: memref<f32x16x5>, %B: memref<f32x1x5>", body, S=16)
    assert text.count("OpGroupNonUniformShuffleXor") == 15  # S - 1 exchanges for one chunk
    assert "OpCapability GroupNonUniformShuffle\n" in text


def test_float_atomics_declare_extension_and_check_feature():
    body = """        %c0 = constant 0 : index
        %a = cooperative_matrix_load %A[%c0,%c0] : coopmatrix<f32x16x4,matrix_acc>
        %o = cooperative_matrix_atomic_max %a, %B[%c0,%c0] : coopmatrix<f32x16x4,matrix_acc>"""
    text = spv("%A: memref<f32x16x4>, %B: memref<f32x16x4>", body)
    assert 'OpExtension "SPV_EXT_shader_atomic_float_min_max"' in text
    assert "OpCapability AtomicFloat32MinMaxEXT" in text
    assert text.count("OpAtomicFMaxEXT") == 4
    info = pvc()
    info.spirv_features.discard(SpirvFeature.atomic_float32_min_max_global)
    with pytest.raises(CompilationError) as e:
        spv("%A: memref<f32x16x4>, %B: memref<f32x16x4>", body, info=info)
    assert e.value.status is Status.spirv_required_feature_unavailable


def test_atomics_on_small_types_are_rejected():
    body = """        %c0 = constant 0 : index
        %a = cooperative_matrix_load %A[%c0,%c0] : coopmatrix<i16x16x4,matrix_acc>
        cooperative_matrix_atomic_store %a, %A[%c0,%c0]"""
    with pytest.raises(CompilationError) as e:
        spv("%A: memref<i16x16x4>", body)
    assert e.value.status is Status.spirv_unsupported_atomic_data_type


def test_rows_must_be_a_power_of_two():
    body = """        %c0 = constant 0 : index
        %a = cooperative_matrix_load %A[%c0,%c0] : coopmatrix<f32x12x4,matrix_acc>
        cooperative_matrix_store %a, %A[%c0,%c0]"""
    with pytest.raises(CompilationError) as e:
        spv("%A: memref<f32x16x4>", body)
    assert e.value.status is Status.ir_unsupported_coopmatrix_shape
