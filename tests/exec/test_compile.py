"""compile_to_spirv without a device: calling convention metadata (docs/design.md §B1.6), execution
modes, capabilities, feature checks and the not_implemented errors of the first conversion slice.
Every successful compile_to_spirv has passed spirv-val."""

from __future__ import annotations

import re

import pytest

from tinytc_py.compiler import compile_to_spirv
from tinytc_py.errors import CompilationError, Status
from tinytc_py.ir.types import DYNAMIC
from tinytc_py.spirv import dump
from tinytc_py.target.core_info import CoreInfo, SpirvFeature
from tinytc_py.text.dialect import parse

pytestmark = pytest.mark.timeout(120, method="thread")


def compile_text(text: str, info: CoreInfo | None = None):
    return compile_to_spirv(parse(text), info)


def test_calling_convention_worked_example():
    """docs/design.md §B1.6: 15 kernel arguments in this order."""
    b = compile_text("""
func @cc(%alpha: f32, %A: memref<f32x?x?>, %B: memref<f64x8x?x4,strided<1,?,?>>,
         %G: group<memref<f32x?x4>x?, offset: ?>, %n: i32) {
}
""")
    k = b.kernel("cc")
    kinds = [(a.kind, a.param, a.mode) for a in k.args]
    assert kinds == [
        ("scalar", 0, -1),
        ("memref", 1, -1),
        ("shape", 1, 0),
        ("shape", 1, 1),
        ("stride", 1, 1),
        ("memref", 2, -1),
        ("shape", 2, 1),
        ("stride", 2, 1),
        ("stride", 2, 2),
        ("group", 3, -1),
        ("group_shape", 3, 0),
        ("group_stride", 3, 1),
        ("group_size", 3, -1),
        ("group_offset", 3, -1),
        ("scalar", 4, -1),
    ]
    assert [(p.kind, p.first_arg, p.num_args) for p in k.params] == [
        ("scalar", 0, 1),
        ("memref", 1, 4),
        ("memref", 5, 4),
        ("group", 9, 5),
        ("scalar", 14, 1),
    ]
    assert k.params[3].size == DYNAMIC and k.params[3].offset == DYNAMIC
    text = dump(b.data)
    # %void %f32 %pf32 %i64 %i64 %i64 %pf64 %i64 %i64 %i64 %ppf32 %pi64 %pi64 %i64 %i64 %i32
    fnty = re.search(r"OpTypeFunction (.*)", text).group(1).split()
    assert len(fnty) == 16
    ids = {
        name: re.search(rf"(%\d+) = {pat}\n", text).group(1)
        for name, pat in {
            "f32": "OpTypeFloat 32",
            "i64": "OpTypeInt 64 0",
            "i32": "OpTypeInt 32 0",
        }.items()
    }
    assert fnty[1] == ids["f32"] and fnty[-1] == ids["i32"]
    assert [fnty[i] for i in (3, 4, 5, 7, 8, 9, 13, 14)] == [ids["i64"]] * 8


def test_execution_modes_from_attributes_and_default():
    b = compile_text("""
func @a() attributes {subgroup_size=32, work_group_size=[64,2]} {
}
func @b() {
}
""")
    text = dump(b.data)
    ka, kb = b.kernel("a"), b.kernel("b")
    assert (ka.subgroup_size, ka.work_group_size) == (32, (64, 2))
    # work-group-size on PVC with no linear algebra: the largest subgroup size (docs/design.md §B2.1)
    assert (kb.subgroup_size, kb.work_group_size) == (32, (32, 1))
    assert re.search(r"OpExecutionMode %\d+ LocalSize 64 2 1", text)
    assert re.search(r"OpExecutionMode %\d+ SubgroupSize 32", text)
    assert re.search(r"OpExecutionMode %\d+ LocalSize 32 1 1", text)
    assert "OpCapability SubgroupDispatch" in text


def test_capabilities_follow_usage():
    b = compile_text("""
func @k(%a: memref<f16x4>, %b: memref<f64x4>, %c: memref<bf16x4>, %d: memref<i8x4>) {
    %c0 = constant 0 : index
    %x = load %c[%c0] : bf16
    %y = add %x, %x : bf16
    store %y, %c[%c0]
}
""")
    text = dump(b.data)
    for cap in (
        "Addresses",
        "Kernel",
        "SubgroupDispatch",
        "Int64",
        "Float16",
        "Float64",
        "Int16",
        "Int8",
        "BFloat16ConversionINTEL",
    ):
        assert f"OpCapability {cap}\n" in text, cap
    assert 'OpExtension "SPV_INTEL_bfloat16_conversion"' in text
    plain = dump(compile_text("func @k(%a: memref<f32x4>) {\n}\n").data)
    assert "Float64" not in plain and "Float16" not in plain and "Int8" not in plain
    # Int64 is declared also without an i64 type, as upstream declares it
    no_i64 = dump(compile_text("func @k(%a: f32) {\n  %b = exp %a : f32\n}\n").data)
    assert "OpTypeInt 64" not in no_i64 and "OpCapability Int64\n" in no_i64


def test_loop_control_and_phi_in_if_merge():
    text = dump(
        compile_text("""
func @k(%a: memref<f32x?>, %n: index) {
    %c0 = constant 0 : index
    %z = constant 0.0 : f32
    %s = for %i=%c0,%n init(%acc=%z) -> (f32) {
        %x = load %a[%i] : f32
        %p = less_than %x, %z : bool
        %y = if %p -> (f32) {
            %m = neg %x : f32
            yield (%m)
        } else {
            yield (%x)
        }
        %acc2 = add %acc, %y : f32
        yield (%acc2)
    } attributes {unroll=4}
    for %i=%c0,%n {
        store %z, %a[%i]
    } attributes {unroll=false}
    store %s, %a[%c0]
}
""").data
    )
    assert re.search(r"OpLoopMerge %\d+ %\d+ PartialCount 4", text)
    assert re.search(r"OpLoopMerge %\d+ %\d+ DontUnroll", text)
    assert re.search(r"OpSelectionMerge %\d+ None", text)
    assert len(re.findall(r"OpPhi", text)) == 2 + 1 + 1  # loop var + acc, if result, loop var


def test_unsupported_subgroup_and_work_group_size():
    tgl = CoreInfo.intel_from_name("tgl")
    with pytest.raises(CompilationError) as e:
        compile_text("func @k() attributes {subgroup_size=64, work_group_size=[64,1]} {\n}\n", tgl)
    assert e.value.status is Status.unsupported_subgroup_size
    with pytest.raises(CompilationError) as e:
        compile_text("func @k() attributes {subgroup_size=32, work_group_size=[64,8]} {\n}\n", tgl)
    assert e.value.status is Status.unsupported_work_group_size


def test_required_feature_unavailable():
    """tgl has no f64; a generic core has no features at all (SubgroupDispatch is required)."""
    with pytest.raises(CompilationError) as e:
        compile_text("func @k(%a: f64) {\n}\n", CoreInfo.intel_from_name("tgl"))
    assert e.value.status is Status.spirv_required_feature_unavailable
    assert "float64" in str(e.value)
    generic = CoreInfo.generic(8192, 512, [16])
    with pytest.raises(CompilationError) as e:
        compile_text("func @k() {\n}\n", generic)
    assert "subgroup_dispatch" in str(e.value)
    generic.set_spirv_feature(SpirvFeature.subgroup_dispatch)
    compile_text("func @k() {\n}\n", generic)
