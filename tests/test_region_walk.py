"""Region.walk: every instruction of a region and its subregions in pre-order, reading each
instruction list when the walk gets there, so that what a pass adds while walking is seen (the
passes rely on it: ir/region.py)."""

from __future__ import annotations

from tinytc_py.ir.context import CompilerContext
from tinytc_py.ir.inst import Inst
from tinytc_py.ir.ops import INSTRUCTIONS
from tinytc_py.ir.region import Region
from tinytc_py.text.dialect import parse

NESTED = """\
func @k(%x: memref<f32x?>, %c: bool) {
    %c0 = constant 0 : index
    %n = size %x[0] : index
    if %c {
        %a = constant 1.0 : f32
        foreach (%i) = (%c0), (%n) {
            %b = load %x[%i] : f32
            store %b, %x[%i]
        }
    } else {
        %d = constant 2.0 : f32
    }
    %e = constant 3.0 : f32
    parallel {
        %f = constant 4.0 : f32
    }
}
"""


def recursive(region: Region) -> list[Inst]:
    out = []
    for inst in region.insts:
        out.append(inst)
        for r in inst.regions:
            out.extend(recursive(r))
    return out


def body() -> Region:
    return parse(NESTED, CompilerContext()).funcs[0].body


def names(insts: list[Inst]) -> list[str]:
    return [i.name for i in insts]


def test_pre_order_over_all_regions() -> None:
    region = body()
    walked = list(region.walk())
    assert walked == recursive(region)
    assert names(walked) == [
        "constant",
        "size",
        "if",
        "constant",  # %a, then-branch
        "foreach",
        "load",
        "store",
        "constant",  # %d, else-branch
        "constant",  # %e
        "parallel",
        "constant",  # %f
    ]


def constant(ctx: CompilerContext, value: float) -> Inst:
    return INSTRUCTIONS["constant"]({}, {"value": value}, ctx.f32)


def test_sees_instructions_added_while_walking() -> None:
    region = body()
    ctx = region.params[0].type.ctx
    seen = []
    for inst in region.walk():
        seen.append(inst)
        if inst.name == "if":
            # appended to the top region (after the walk's position) and to the else branch
            # (not reached yet): both are walked
            top = region.append(constant(ctx, 5.0))
            inner = inst.regions[1].append(constant(ctx, 6.0))
    assert top in seen and inner in seen
    assert seen == recursive(region)
    assert seen.index(inner) < seen.index(top)


def test_regions_read_after_yielding_the_instruction() -> None:
    region = body()
    ctx = region.params[0].type.ctx
    seen = []
    for inst in region.walk():
        seen.append(inst)
        if inst.name == "parallel":
            added = inst.regions[0].insert(0, constant(ctx, 7.0))
    assert seen[-2] is added
    assert seen == recursive(region)


def test_empty_region() -> None:
    assert list(Region(body().kind).walk()) == []


def test_erasing_the_yielded_instruction_skips_the_next() -> None:
    # The position in a list is an index (ir/region.py): erasing what was just yielded moves
    # its successor to that index, past the walk; a pass that erases collects first.
    region = body()
    seen = []
    for inst in region.walk():
        seen.append(inst.name)
        if inst.name == "size":  # %n: used by the foreach, so drop its uses first
            inst.results[0].replace_all_uses_with(region.params[0])
            region.erase(inst)
    assert seen[:3] == ["constant", "size", "constant"]  # "if" skipped, and its regions too
    assert "foreach" not in seen and seen[-2:] == ["parallel", "constant"]
    collected = [inst.name for inst in list(region.walk())]
    assert collected == [
        "constant",
        "if",
        "constant",
        "foreach",
        "load",
        "store",
        "constant",
        "constant",
        "parallel",
        "constant",
    ]


def test_replaced_list_is_not_seen_by_a_walk_inside_it() -> None:
    region = body()
    ctx = region.params[0].type.ctx
    seen = []
    for inst in region.walk():
        seen.append(inst)
        if inst.name == "size":
            old = region.insts
            region.insts = [*old, constant(ctx, 8.0)]  # a new list: the walk reads the old one
    assert region.insts[-1] not in seen
    assert seen == [i for i in recursive(region) if i is not region.insts[-1]]
