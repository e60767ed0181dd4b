"""The tinytc-py language extensions (docs/extensions.md): subgroup shuffles, work-group
collectives, printf, select, bitcast, more math, and references to program-level constant data.

Each extension is a row of the one instruction table (marked `extension=True`), so the parser,
printer, builder and C API creators know it like any other instruction; the classes here carry
the verification of the Restrictions that docs/extensions.md lists. `check_enabled` rejects an
extension when the compiler context's `extensions` flag is off (`tinytc -f no-extensions`), so
that programs can be kept portable to upstream tinytc.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import CompilationError, Location, Status
from . import checks, printf_format
from .enums import OptFlag
from .global_data import lookup
from .inst import Exec, Inst, InstSpec, Prop
from .instructions import (
    _FLOAT,
    ArithInst,
    MathInst,
    SubgroupOperationInst,
    _result,
    register,
)
from .types import CoopmatrixType, MemrefType, NumberType, Type, element_type

if TYPE_CHECKING:
    from .context import CompilerContext
    from .region import Prog

R = "result"


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
        lookup(prog, inst.props["symbol"], _result(inst), inst.loc)


def disabled_error(loc: Location, what: str) -> CompilationError:
    return CompilationError(
        loc,
        Status.ext_disabled,
        f"{what} is a tinytc-py language extension, but extensions are disabled "
        "(-f no-extensions); see docs/extensions.md",
    )


def _same_result(inst: Inst, v) -> None:
    checks.same_type(
        inst,
        v.type,
        _result(inst),
        Status.ir_operand_type_must_match_return_type,
        "result type must match the operand type",
        v,
    )


def _a_type(cls: type[Inst], operands: dict[str, Any]) -> Type | None:
    return operands["a"].type


# ---- SPMD: shuffles and work-group collectives ---------------------------------------------------


class SubgroupShuffleInst(Inst):
    """subgroup_shuffle{,_xor,_up,_down}: the value of another lane of the subgroup; `lane`
    names the second operand (lane, mask or delta)."""

    __slots__ = ()
    lane = "lane"
    infer_result_type = classmethod(_a_type)

    def verify(self) -> None:
        a = self.operand("a")
        checks.number(self, a)
        checks.i32(self, self.operand(self.lane), self.lane)
        _same_result(self, a)


class WorkGroupOperationInst(SubgroupOperationInst):
    """work_group_{reduce,inclusive_scan,exclusive_scan}_{add,max,min}: the subgroup operation's
    rules, over every work-item of the work-group."""

    __slots__ = ()


class WorkGroupBroadcastInst(Inst):
    __slots__ = ()
    infer_result_type = classmethod(_a_type)

    def verify(self) -> None:
        a = self.operand("a")
        checks.number(self, a)
        checks.i32(self, self.operand("id"), "work-item id")
        _same_result(self, a)


class PrintfInst(Inst):
    """printf "format", args...: the format's conversions must match the argument types."""

    __slots__ = ()

    def verify(self) -> None:
        args = self.operand_list("args")
        try:
            printf_format.check(self.props["format"], [v.type for v in args])
        except printf_format.FormatError as e:
            raise self.error(Status.ext_printf_format_mismatch, str(e), *args) from None


# ---- mixed: select, bitcast, math ----------------------------------------------------------------


class SelectInst(Inst):
    """%r = select %cond, %a, %b : T; T a number type or a coopmatrix, whose components all take
    the same operand (the condition is a scalar bool)."""

    __slots__ = ()
    infer_result_type = classmethod(_a_type)

    def verify(self) -> None:
        cond, a, b = self.operand("cond"), self.operand("a"), self.operand("b")
        checks.boolean(self, cond)
        if not isinstance(a.type, (NumberType, CoopmatrixType)):
            raise self.error(
                Status.ir_expected_coopmatrix_or_number, "operand must be a number or coopmatrix", a
            )
        checks.same_type(
            self, a.type, b.type, Status.ir_number_mismatch, "operand types differ", a, b
        )
        _same_result(self, a)


def _bits(ty: Type) -> int:
    return 8 * ty.size


class BitcastInst(Inst):
    """%r = bitcast %a : T; the bits of a number (or of every coopmatrix component) read as
    another type of the same width."""

    __slots__ = ()

    def verify(self) -> None:
        a = self.operand("a")
        src, dst = a.type, _result(self)
        if isinstance(src, CoopmatrixType):
            if not (
                isinstance(dst, CoopmatrixType) and dst.shape == src.shape and dst.use is src.use
            ):
                raise self.error(
                    Status.ir_incompatible_shapes,
                    f"bitcast of {src} must return a coopmatrix of the same shape and use",
                    a,
                )
        elif not isinstance(src, NumberType) or not isinstance(dst, NumberType):
            raise self.error(
                Status.ir_expected_number,
                "bitcast takes and returns numbers (or coopmatrices)",
                a,
            )
        s, d = element_type(src), element_type(dst)
        if _bits(s) != _bits(d):
            raise self.error(
                Status.ext_bitcast_size_mismatch,
                f"{s} has {_bits(s)} bits but {d} has {_bits(d)}",
                a,
            )


class MathNaryInst(ArithInst):
    """pow (a, b) and fma (a, b, c): floating scalars of one type, like the unary math."""

    __slots__ = ()
    infer_result_type = classmethod(_a_type)

    def verify(self) -> None:
        ops = self.operands
        a = ops[0]
        if not isinstance(a.type, NumberType):
            raise self.error(Status.ir_expected_number, "operand must be a scalar number", a)
        self.check_allowed(a.type, a)
        for v in ops[1:]:
            checks.same_type(
                self, a.type, v.type, Status.ir_number_mismatch, "operand types differ", a, v
            )
        _same_result(self, a)


# ---- program-level data ---------------------------------------------------------------------------


class GlobalRefInst(Inst):
    """%t = global_ref @name : memref<...>: the program's constant data of that name; the
    program is checked for the name and type when the function joins it."""

    __slots__ = ()

    def verify(self) -> None:
        ty = _result(self)
        if not isinstance(ty, MemrefType):
            raise self.error(Status.ir_expected_memref, "global_ref returns a memref")
        if not self.props["symbol"]:
            raise self.error(Status.ext_undefined_global, "global_ref needs a global's name")


# ---- the table rows -------------------------------------------------------------------------------


for _name, _lane in (
    ("subgroup_shuffle", "lane"),
    ("subgroup_shuffle_xor", "mask"),
    ("subgroup_shuffle_up", "delta"),
    ("subgroup_shuffle_down", "delta"),
):
    register(
        SubgroupShuffleInst,
        InstSpec(
            _name,
            operands=("a", _lane),
            result=R,
            exec=Exec.spmd,
            fmt=f"$a , ${_lane} : type",
            extension=True,
        ),
        lane=_lane,
    )

for _kind in ("exclusive_scan", "inclusive_scan", "reduce"):
    for _opn in ("add", "max", "min"):
        register(
            WorkGroupOperationInst,
            InstSpec(
                f"work_group_{_kind}_{_opn}",
                operands=("a",),
                result=R,
                exec=Exec.spmd,
                fmt="$a : type",
                extension=True,
            ),
            ordered=_opn != "add",
        )
register(
    WorkGroupBroadcastInst,
    InstSpec(
        "work_group_broadcast",
        operands=("a", "id"),
        result=R,
        exec=Exec.spmd,
        fmt="$a , $id : type",
        extension=True,
    ),
)
register(
    PrintfInst,
    InstSpec(
        "printf",
        (Prop("format", "string", ""),),
        ("args*",),
        exec=Exec.spmd,
        side_effects=True,
        extension=True,
    ),
)
register(
    SelectInst,
    InstSpec(
        "select",
        operands=("cond", "a", "b"),
        result=R,
        fmt="$cond , $a , $b : type",
        extension=True,
    ),
)
register(
    BitcastInst, InstSpec("bitcast", operands=("a",), result=R, fmt="$a : type", extension=True)
)
for _name in ("sqrt", "rsqrt", "tanh", "erf", "floor", "ceil", "round", "trunc"):
    register(
        MathInst,
        InstSpec(_name, operands=("a",), result=R, fmt="$a : type", extension=True),
        allowed=_FLOAT,
    )
register(
    MathNaryInst,
    InstSpec("pow", operands=("a", "b"), result=R, fmt="$a , $b : type", extension=True),
    allowed=_FLOAT,
)
register(
    MathNaryInst,
    InstSpec("fma", operands=("a", "b", "c"), result=R, fmt="$a , $b , $c : type", extension=True),
    allowed=_FLOAT,
)
register(
    GlobalRefInst,
    InstSpec(
        "global_ref",
        (Prop("symbol", "string", ""),),
        result=R,
        fmt="@symbol : type",
        extension=True,
    ),
)
