"""Helpers for passes that rewrite IR: copying instructions through a builder (each copy is
as valid as its original) with a value map for operands."""

from __future__ import annotations

from ..ir.builder import IRBuilder
from ..ir.inst import Inst
from ..ir.region import Region
from ..ir.values import Value


def clone_inst(b: IRBuilder, inst: Inst, vmap: dict[Value, Value], named: bool = True) -> Inst:
    """Appends a copy of `inst` (with its regions) at the builder's insertion point. A copy
    whose operands keep their types is valid as the original is and skips verification
    (Inst.copy_with); the others are verified as they are created.

    Operands found in `vmap` are replaced; results and region parameters of the copy are added
    to `vmap`. With `named` false the copies are unnamed (the printer numbers them), as
    upstream's copies are."""
    # Plain loops rather than comprehensions, all() and zip(): a lowering copies every
    # instruction of a foreach body once or twice, and the compiled module runs a loop over
    # lists without the iterator objects those make.
    get = vmap.get
    mapped: list[Value] = []
    same_types = True
    for u in inst.uses:
        old = u.value
        m = get(old, old)
        if m.type is not old.type:
            same_types = False
        mapped.append(m)
    results = inst.results
    if same_types:
        new = inst.copy_with(mapped)  # valid as the original is
    else:
        operands: dict[str, Value | list[Value] | None] = {}
        for key, suffix in inst.spec.operand_slots:
            if suffix == "*":
                operands[key] = [get(v, v) for v in inst.operand_list(key)]
            else:
                v = inst.operand(key)
                operands[key] = None if v is None else get(v, v)
        types = [r.type for r in results] if inst.spec.result else None
        new = type(inst)(operands, inst.props, types, inst.loc, inst.attrs)  # props are copied
    b.insert(new)
    new_results = new.results
    if named:  # names of checked code: valid, as the builder would check them
        for k in range(len(results)):
            new_results[k].name = results[k].name
    if inst.regions:
        for old_region, new_region in zip(inst.regions, new.regions, strict=True):
            for old_p, new_p in zip(old_region.params, new_region.params, strict=True):
                if named:
                    new_p.name = old_p.name
                vmap[old_p] = new_p
            clone_region(b, old_region, new_region, vmap, named)
    for k in range(len(results)):
        vmap[results[k]] = new_results[k]
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
