"""The builder the rewriting passes (lower-linalg, lower-foreach, lower-coopmatrix) emit code with.

`IRBuilder.insert` checks every instruction the way the parser does (the extensions flag,
collective / SPMD placement, visibility of the operands, the syntax of value names), because a
program built by hand may break any rule. What a pass appends is either a copy of an instruction
that passed those checks already or code of the lowering's own making, and the pipeline ends
with check-ir, which verifies the whole function again; repeating the checks per instruction
cost about a fifth of a lowering. `PassBuilder` keeps only the nesting limit (a lowering adds
region levels, and deeper nesting must stay a located error) and the instruction's own
verification, which runs when it is created.

Two of the skipped checks are not made again by check-ir. The lookup of a global_ref's symbol
is done by the SPIR-V conversion against the real program (the lowerings run with no program
at hand: IRBuilder's lookup against an empty one rejected every global_ref inside a foreach or
cooperative_matrix_apply body, tests/exec/test_exec_global.py::test_global_ref_inside_*), and
the syntax of result names, which the lowerings copy from checked code or make themselves.
A lowering's output is verified only by the pipeline's final check-ir: running a lowering
alone (`tinytc-opt -p lower-foreach`) is not followed by a verification.
"""

from __future__ import annotations

from ..errors import UNKNOWN_LOCATION, Location
from ..ir.builder import IRBuilder
from ..ir.inst import Inst
from ..ir.nesting import MAX_NESTING, nesting_error, region_depth


class PassBuilder(IRBuilder):
    """An IRBuilder that appends without the checks made for hand-built code, and whose
    instructions are located where the pass says (never at the pass's own Python line)."""

    def _where(self, loc: Location | None) -> Location:
        return UNKNOWN_LOCATION if loc is None else loc

    def insert(self, inst: Inst, name: str | list[str] | None = None) -> Inst:
        """Appends at the insertion point; `name` (one or one per result) names the results."""
        region = self.region
        if inst.regions and region_depth(region) >= MAX_NESTING:
            inst.drop_uses()
            raise nesting_error(inst.loc)
        if name is not None:
            for value, n in zip(inst.results, [name] if isinstance(name, str) else name):
                value.name = n
        region.append(inst)
        return inst
