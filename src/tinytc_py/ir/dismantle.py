"""Breaking the reference cycles of IR that nothing will read again, so that reference counting
frees it at once.

An instruction points at its region and the region back at it, a value at its defining
instruction and at its uses, a use at its owner: a program is one web of cycles that only the
cyclic garbage collector can free. A compile pauses the collector (gc_pause.py), so all the IR a
compile throws away waits for the collector's next scan, which must traverse it before freeing
it (about 10 ms after compiling a chain of 1000 instructions). Clearing the back references
(parent, owner, defining instruction, use lists) leaves a tree that reference counting frees as
soon as its last holder lets go; the scan after the compile then finds little.

Only IR nobody can reach any more is dismantled: instructions the passes removed for good, a
program the compiler parsed for itself once its binary is made (compiler.py; also the parse a
C API compile takes from its handle, capi/parsed.py), and a C API handle's program that only the
handle holds, when the handle is released (capi/handles.py). A program a Python caller built or
holds keeps its cycles.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .inst import Inst
    from .region import Prog, Region


def dismantle(inst: Inst) -> None:
    """Clears the back references of a removed instruction (results unused, uses dropped) and
    of everything inside its regions."""
    inst.parent = None
    inst.uses = []
    for v in inst.results:
        v.uses.clear()
        v.defining_inst = None
    for region in inst.regions:
        dismantle_region(region)


def dismantle_region(region: Region) -> None:
    """Clears the back references inside `region` and empties it, so that an instruction or
    region something still holds (a closure of a compiled pass, say) keeps nothing else
    alive."""
    region.owner = None
    for p in region.params:
        p.uses.clear()
        p.region = None
    for inst in region.insts:
        dismantle(inst)
    region.insts = []


def dismantle_prog(prog: Prog) -> None:
    """Dismantles every function of a program nothing else holds."""
    for func in prog.funcs:
        dismantle_region(func.body)
