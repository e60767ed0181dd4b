"""Helpers for passes that rewrite IR: copying instructions through a builder (each copy
verifies itself when created) with a value map for operands."""

from __future__ import annotations

from ..ir.builder import IRBuilder
from ..ir.inst import Inst
from ..ir.region import Region
from ..ir.values import Value


def clone_inst(b: IRBuilder, inst: Inst, vmap: dict[Value, Value], named: bool = True) -> Inst:
    """Appends a copy of `inst` (with its regions) at the builder's insertion point.

    Operands found in `vmap` are replaced; results and region parameters of the copy are added
    to `vmap`. With `named` false the copies are unnamed (the printer numbers them), as
    upstream's copies are."""
    operands: dict[str, Value | list[Value] | None] = {}
    for key, suffix in inst.spec.operand_slots:
        values = [vmap.get(v, v) for v in inst.operand_list(key)]
        operands[key] = values if suffix == "*" else (values[0] if values else None)
    types = [r.type for r in inst.results] if inst.spec.result else None
    new = type(inst)(operands, dict(inst.props), types, inst.loc, inst.attrs)
    b.insert(new, [r.name for r in inst.results] if named else None)
    for old_region, new_region in zip(inst.regions, new.regions, strict=True):
        for old_p, new_p in zip(old_region.params, new_region.params, strict=True):
            if named:
                new_p.name = old_p.name
            vmap[old_p] = new_p
        clone_region(b, old_region, new_region, vmap, named)
    for old_r, new_r in zip(inst.results, new.results, strict=True):
        vmap[old_r] = new_r
    return new


def clone_region(
    b: IRBuilder, src: Region, dest: Region, vmap: dict[Value, Value], named: bool = True
) -> None:
    """Appends copies of `src`'s instructions to `dest`."""
    saved = b.region
    b.region = dest
    try:
        for inst in src.insts:
            clone_inst(b, inst, vmap, named)
    finally:
        b.region = saved
