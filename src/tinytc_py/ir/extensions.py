"""Whether the tinytc-py language extensions (docs/extensions.md; their instructions are in
ops/extensions.py) may be used. `check_enabled` rejects an
extension when the compiler context's `extensions` flag is off (`tinytc -f no-extensions`), so
that programs can be kept portable to upstream tinytc.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import CompilationError, Location, Status
from .enums import OptFlag
from .global_data import lookup
from .inst import Inst
from .ops.extensions import GlobalRefInst

if TYPE_CHECKING:
    from .context import CompilerContext
    from .region import Prog


def check_enabled(inst: Inst, ctx: CompilerContext) -> None:
    """Raises for an extension instruction when the context's extensions flag is off."""
    if inst.spec.extension and not ctx.optimization_flag(OptFlag.extensions):
        raise disabled_error(inst.loc, f"'{inst.name}'")


def check_globals_enabled(prog: Prog) -> None:
    """Raises for a program with global data when its context's extensions flag is off (the
    instructions are checked by the check-ir pass)."""
    if prog.globals and not prog.ctx.optimization_flag(OptFlag.extensions):
        raise disabled_error(next(iter(prog.globals.values())).loc, "'global'")


def check_extension(inst: Inst, ctx: CompilerContext, prog: Prog | None) -> None:
    """What the parser and builder check when an instruction joins a function of `prog`: the
    flag, and that a global_ref names a global of the program with its type (without a
    program, the SPIR-V conversion checks that)."""
    check_enabled(inst, ctx)
    if prog is not None and isinstance(inst, GlobalRefInst):
        lookup(prog, inst.props["symbol"], inst.results[0].type, inst.loc)


def disabled_error(loc: Location, what: str) -> CompilationError:
    return CompilationError(
        loc,
        Status.ext_disabled,
        f"{what} is a tinytc-py language extension, but extensions are disabled "
        "(-f no-extensions); see docs/extensions.md",
    )
