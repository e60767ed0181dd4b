"""The uniformity analysis (ir/uniformity.py): which values are varying within a subgroup,
and the "dynamically uniform" restrictions it enforces, through the parser, the builder and the
check-ir pass alike."""

from __future__ import annotations

import pytest

from tinytc_py.errors import CompilationError, Status
from tinytc_py.ir.builder import IRBuilder
from tinytc_py.ir.context import CompilerContext
from tinytc_py.ir.region import Func
from tinytc_py.ir.uniformity import Uniformity, must_be_uniform
from tinytc_py.ir.values import Value
from tinytc_py.passes.registry import get_pass
from tinytc_py.text.dialect import parse

SOURCES = """
func @k(%A: memref<f32x64x64>, %p: memref<i32x16>, %G: group<memref<f32x64x64>x?>, %x: f32) {
    %c0 = constant 0 : index
    %c64 = constant 64 : index
    %outer = load %p[%c0] : i32
    parallel {
        %z = constant 0 : i32
        %lid = subgroup_local_id : i32
        %sgid = subgroup_id.x : i32
        %sglin = subgroup_linear_id : i32
        %sgs = subgroup_size : i32
        %gid = group_id.x : index
        %li = cast %lid : index
        %lid2 = add %lid, %sgid : i32
        %vload = load %p[%li] : i32
        %uload = load %p[%c0] : i32
        %vmem = load %G[%li] : memref<f32x64x64>
        %umem = load %G[%gid] : memref<f32x64x64>
        %aload = atomic_load %p[%c0] : i32
        %aadd = atomic_add %z, %p[%c0] : i32
        %bcast = subgroup_broadcast %lid, %z : i32
        %red = subgroup_reduce_add %lid : i32
        %scan = subgroup_exclusive_scan_add %z : i32
        %m = cooperative_matrix_load %A[%c0, %c0] : coopmatrix<f32x16x16,matrix_acc>
        %ext = cooperative_matrix_extract %m[0] : f32
        %ins = cooperative_matrix_insert %ext, %m[0] : coopmatrix<f32x16x16,matrix_acc>
        %sc = cooperative_matrix_scale %ext, %m : coopmatrix<f32x16x16,matrix_acc>
        %ap = cooperative_matrix_apply (%ai,%aj,%av)=%m -> coopmatrix<f32x16x16,matrix_acc> {
            %aw = add %av, %x : f32
            yield (%aw)
        }
    }
}
"""

CONTROL = """
func @k(%n: index, %flag: bool) {
    %c0 = constant 0 : index
    %c1 = constant 1 : index
    parallel {
        %lid = subgroup_local_id : i32
        %li = cast %lid : index
        %vcond = equal %li, %c0 : bool
        %uloop = for %i=%c0,%n init(%u=%c0) -> (index) {
            %u1 = add %u, %i : index
            yield (%u1)
        }
        %vbound = for %j=%c0,%li init(%w=%c0) -> (index) {
            yield (%w)
        }
        %carried, %steady = for %k=%c0,%n init(%a=%c0, %b=%c1) -> (index, index) {
            %a1 = add %b, %c1 : index
            %b1 = add %li, %c1 : index
            yield (%a1, %b)
        }
        %vif = if %vcond -> (index) {
            yield (%c0)
        } else {
            yield (%c1)
        }
        %f0, %f1 = if %flag -> (index, index) {
            yield (%c0, %li)
        } else {
            yield (%c1, %c0)
        }
    }
    foreach (%fi) = (%c0), (%n) {
        %fa = add %fi, %c1 : index
    }
    foreach_tile (%ti,%tj) = (%c0,%c0), (%n,%n) as (%ts,%tt) <= (32,32) {
        %ta = add %ti, %ts : index
    }
}
"""


def values(func: Func) -> dict[str, Value]:
    """Every named value of a function (parameters, region parameters, results)."""
    out = {v.name: v for v in func.params}
    for inst in func.body.walk():
        for v in inst.results:
            out[v.name] = v
        for region in inst.regions:
            out.update((p.name, p) for p in region.params)
    return out


def varying_names(text: str) -> set[str]:
    func = parse(text).funcs[0]
    info = Uniformity(func)
    return {name for name, v in values(func).items() if name and not info.is_uniform(v)}


def test_sources_and_sinks() -> None:
    varying = varying_names(SOURCES)
    # subgroup_local_id and what depends on it; scans, extract, atomics and apply parameters
    expected = {"lid", "li", "lid2", "vload", "vmem", "aload", "aadd", "scan", "ext", "aw"}
    expected |= {"ai", "aj", "av"}
    assert varying == expected


def test_control_flow() -> None:
    expected = {"lid", "li", "vcond"}
    expected |= {"j", "w", "vbound"}  # varying trip count: loop variable, carried value, result
    expected |= {"b1"}  # %b is yielded back unchanged, so only %b1 itself is varying
    expected |= {"vif"}  # varying condition
    expected |= {"f1"}  # a branch yields a varying value (%f0 stays uniform)
    expected |= {"fi", "fa"}  # foreach loop variables are varying; foreach_tile's are not
    assert varying_names(CONTROL) == expected


def test_loop_fixed_point() -> None:
    text = """
func @k(%n: index) {
    %c0 = constant 0 : index
    parallel {
        %lid = subgroup_local_id : i32
        %li = cast %lid : index
        %r, %s = for %k=%c0,%n init(%a=%c0, %b=%c0) -> (index, index) {
            %a1 = add %b, %k : index
            %b1 = add %li, %k : index
            yield (%a1, %b1)
        }
    }
}
"""
    # %b is varying from the first yield, %a only through %b in the next iteration.
    assert varying_names(text) == {"lid", "li", "a", "a1", "b", "b1", "r", "s"}


def test_collective_values_are_uniform() -> None:
    text = """
func @k(%p: memref<i32x16>) {
    %c0 = constant 0 : index
    %v = load %p[%c0] : i32
    %w = atomic_add %v, %p[%c0] : i32
    parallel {
        %lid = subgroup_local_id : i32
    }
}
"""
    assert varying_names(text) == {"lid"}


def test_must_be_uniform_operands() -> None:
    func = parse(SOURCES).funcs[0]
    insts = {i.results[0].name: i for i in func.body.walk() if i.results}
    assert must_be_uniform(insts["m"]) == [(0, "memref"), (1, "row index"), (2, "column index")]
    assert must_be_uniform(insts["bcast"]) == [(1, "subgroup local index")]
    assert must_be_uniform(insts["ins"]) == [(1, "coopmatrix argument")]
    assert must_be_uniform(insts["sc"]) == [(1, "coopmatrix argument")]
    assert must_be_uniform(insts["vload"]) == []


BROADCAST = """
func @k(%x: f32) {
    parallel {
        %lid = subgroup_local_id : i32
        %y = subgroup_broadcast %x, %lid : f32
    }
}
"""
DETAIL = "subgroup local index of subgroup_broadcast must be dynamically uniform"


def test_parser_error() -> None:
    with pytest.raises(CompilationError) as info:
        parse(BROADCAST, name="b.ir")
    err = info.value
    assert err.status is Status.compilation_error
    assert err.detail == DETAIL
    assert str(err.loc) == "5.14-46"
    assert [v.name for v in err.values] == ["lid"]


def test_builder_error_matches_parser() -> None:
    ctx = CompilerContext()
    b = IRBuilder(ctx)
    # The check runs when the function scope closes.
    with (
        pytest.raises(CompilationError) as info,
        b.function("k", [ctx.f32], ["x"]) as f,
        b.parallel(),
    ):
        lid = b.subgroup_local_id(name="lid")
        b.subgroup_broadcast(f.params[0], lid, name="y")
    err = info.value
    assert err.status is Status.compilation_error
    assert err.detail == DETAIL
    assert [v.name for v in err.values] == ["lid"]
    assert not b.prog.funcs


def test_check_ir_pass_rechecks() -> None:
    """A program that becomes non-uniform after parsing is caught by the check-ir pass."""
    text = """
func @k(%x: f32) {
    parallel {
        %c = constant 0 : i32
        %lid = subgroup_local_id : i32
        %y = subgroup_broadcast %x, %c : f32
    }
}
"""
    prog = parse(text)
    func = prog.funcs[0]
    v = values(func)
    v["c"].replace_all_uses_with(v["lid"])
    with pytest.raises(CompilationError) as info:
        get_pass("check-ir").run(func, prog.ctx, None)
    assert info.value.detail == DETAIL
