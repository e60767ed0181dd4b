"""Scalar conversion: constants, arithmetic, math, comparisons and casts (docs/design.md §B6.9).

bf16 values are i16 bits; every operation converts to f32 and back. Complex numbers are
2-vectors (re, im)."""

from __future__ import annotations

import math
import struct
from collections.abc import Callable

from ...ir.inst import Inst
from ...ir.ops.arith import (
    ArithBinaryInst,
    ArithUnaryInst,
    CastInst,
    CompareInst,
    ConstantInst,
    MathInst,
)
from ...ir.types import (
    BooleanType,
    NumberType,
    ScalarKind,
    Type,
    as_number,
)
from ...ir.values import Value
from ..tables import (
    Op,
    OpenCLStd,
)
from .base import HandlerRows
from .memory import MemoryConversion

_INT_BINARY = {
    "add": Op.IAdd,
    "sub": Op.ISub,
    "mul": Op.IMul,
    "div": Op.SDiv,
    "rem": Op.SRem,
    "shl": Op.ShiftLeftLogical,
    "shr": Op.ShiftRightArithmetic,
    "and": Op.BitwiseAnd,
    "or": Op.BitwiseOr,
    "xor": Op.BitwiseXor,
}
_INT_EXT = {"min": OpenCLStd.s_min, "max": OpenCLStd.s_max}
_FLOAT_BINARY = {
    "add": Op.FAdd,
    "sub": Op.FSub,
    "mul": Op.FMul,
    "div": Op.FDiv,
    "rem": Op.FRem,
}
_FLOAT_EXT = {"min": OpenCLStd.fmin, "max": OpenCLStd.fmax}
_BOOL_BINARY = {"and": Op.LogicalAnd, "or": Op.LogicalOr, "xor": Op.LogicalNotEqual}
_MATH = {
    "cos": OpenCLStd.cos,
    "sin": OpenCLStd.sin,
    "exp": OpenCLStd.exp,
    "exp2": OpenCLStd.exp2,
    "log": OpenCLStd.log,
    "log2": OpenCLStd.log2,
    "native_cos": OpenCLStd.native_cos,
    "native_sin": OpenCLStd.native_sin,
    "native_exp": OpenCLStd.native_exp,
    "native_exp2": OpenCLStd.native_exp2,
    "native_log": OpenCLStd.native_log,
    "native_log2": OpenCLStd.native_log2,
    # language extensions (docs/extensions.md)
    "sqrt": OpenCLStd.sqrt,
    "rsqrt": OpenCLStd.rsqrt,
    "tanh": OpenCLStd.tanh,
    "erf": OpenCLStd.erf,
    "floor": OpenCLStd.floor,
    "ceil": OpenCLStd.ceil,
    "round": OpenCLStd.round,
    "trunc": OpenCLStd.trunc,
}
_INT_CMP = {
    "equal": Op.IEqual,
    "not_equal": Op.INotEqual,
    "greater_than": Op.SGreaterThan,
    "greater_than_equal": Op.SGreaterThanEqual,
    "less_than": Op.SLessThan,
    "less_than_equal": Op.SLessThanEqual,
}
_FLOAT_CMP = {
    "equal": Op.FOrdEqual,
    "not_equal": Op.FUnordNotEqual,
    "greater_than": Op.FOrdGreaterThan,
    "greater_than_equal": Op.FOrdGreaterThanEqual,
    "less_than": Op.FOrdLessThan,
    "less_than_equal": Op.FOrdLessThanEqual,
}
_LN2 = 0.6931471805599453


class ScalarConversion(MemoryConversion):
    # ---- bf16 / float helpers -----------------------------------------------------------------

    def ext(self, rty: int, number: int, *args: int) -> int:
        return self.block.ext_inst(rty, self.ocl, number, *args)

    def bf16_to_f32(self, v: int) -> int:
        return self.block.op(Op.ConvertBF16ToFINTEL, self.f32(), v)

    def f32_to_bf16(self, v: int) -> int:
        return self.block.op(Op.ConvertFToBF16INTEL, self.mod.type_int(16), v)

    def via_f32(self, ty: NumberType, fn: Callable[[int, list[int]], int], *args: int) -> int:
        """Apply fn(f32 type, operands) in f32 for bf16 and return bf16 bits; directly otherwise."""
        if ty.kind is not ScalarKind.bf16:
            return fn(self.ty(ty), list(args))
        return self.f32_to_bf16(fn(self.f32(), [self.bf16_to_f32(a) for a in args]))

    def parts(self, v: int, comp: int) -> tuple[int, int]:
        b = self.block
        return b.op(Op.CompositeExtract, comp, v, 0), b.op(Op.CompositeExtract, comp, v, 1)

    def make_complex(self, vty: int, re: int, im: int) -> int:
        """(re, im) inserted into an undefined complex, as upstream builds it (its lit tests
        check this form; the device JIT makes the same code of it as of OpCompositeConstruct)."""
        blk = self.block
        z = blk.op(Op.Undef, vty)
        return blk.op(Op.CompositeInsert, vty, im, blk.op(Op.CompositeInsert, vty, re, z, 0), 1)

    # ---- constants ----------------------------------------------------------------------------

    def constant(self, inst: Inst) -> None:
        ty = inst.results[0].type
        value = inst.props["value"]
        self.set(inst, self.const(ty, value))

    def const(self, ty: Type, value) -> int:
        m = self.mod
        if isinstance(ty, BooleanType):
            return m.constant_bool(bool(value))
        assert isinstance(ty, NumberType)
        if ty.is_complex:
            comp = m.type_float(8 * ty.component_type.size)
            re, im = value
            return m.constant_composite(self.ty(ty), [m.constant(comp, re), m.constant(comp, im)])
        if ty.kind is ScalarKind.bf16:
            return m.constant(m.type_int(16), float_to_bf16_bits(float(value)))
        return m.constant(self.ty(ty), value)

    # ---- arithmetic ---------------------------------------------------------------------------

    def arith_binary(self, inst: Inst) -> None:
        a, b = self.val(inst.operand("a"), inst), self.val(inst.operand("b"), inst)
        ty = inst.results[0].type
        name = inst.name
        blk = self.block
        if isinstance(ty, BooleanType):
            self.set(inst, blk.op2(_BOOL_BINARY[name], self.ty(ty), a, b))
            return
        num = as_number(ty)
        if num.is_integer:
            rty = self.ty(num)
            if name in _INT_EXT:
                self.set(inst, self.ext(rty, _INT_EXT[name], a, b))
            else:
                self.set(inst, blk.op2(_INT_BINARY[name], rty, a, b))
        elif num.is_float:
            self.set(inst, self.via_f32(num, lambda t, x: self.float_binary(name, t, *x), a, b))
        else:
            self.set(inst, self.complex_arith(inst, a, b))

    def complex_arith(self, inst: Inst, a: int, b: int) -> int:
        """A complex add/sub/mul/div; a factor or divisor known to be real (see real_part)
        scales the other operand, two multiplies or divides instead of the full formula (as
        C99's mixed real/complex arithmetic; the same values for finite operands)."""
        ty = inst.results[0].type
        vty = self.ty(ty)
        blk = self.block
        if inst.name == "mul":
            for known, other in ((inst.operand("a"), b), (inst.operand("b"), a)):
                r = self.real_part(known)
                if r is not None:
                    return blk.op(Op.VectorTimesScalar, vty, other, r)
        if inst.name == "div" and (r := self.real_part(inst.operand("b"))) is not None:
            return blk.op(Op.FDiv, vty, a, self.make_complex(vty, r, r))
        return self.complex_binary(inst.name, ty, a, b)

    def real_part(self, v: Value) -> int | None:
        """The id of the real number complex value `v` is, if its imaginary part is visibly
        zero: a cast from a real type or a constant (re, 0); None otherwise."""
        d = v.defining_inst
        comp = self.ty(as_number(v.type).component_type)
        if isinstance(d, CastInst) and not d.operand("a").type.is_complex:
            return self.block.op(Op.CompositeExtract, comp, self.values[v], 0)
        if isinstance(d, ConstantInst) and d.props["value"][1] == 0:
            return self.mod.constant(comp, d.props["value"][0])
        return None

    def float_binary(self, name: str, t: int, a: int, b: int) -> int:
        if name in _FLOAT_EXT:
            return self.ext(t, _FLOAT_EXT[name], a, b)
        return self.block.op2(_FLOAT_BINARY[name], t, a, b)

    def complex_binary(self, name: str, ty: NumberType, a: int, b: int) -> int:
        vty, comp = self.ty(ty), self.ty(ty.component_type)
        blk = self.block
        if name in ("add", "sub"):
            return blk.op2(_FLOAT_BINARY[name], vty, a, b)
        ar, ai = self.parts(a, comp)
        br, bi = self.parts(b, comp)
        mul, add, sub = (
            lambda x, y, o=o: blk.op(o, comp, x, y) for o in (Op.FMul, Op.FAdd, Op.FSub)
        )
        if name == "mul":
            return self.make_complex(
                vty, sub(mul(ar, br), mul(ai, bi)), add(mul(ar, bi), mul(ai, br))
            )
        # a / b = a * conj(b) / |b|^2
        den = add(mul(br, br), mul(bi, bi))
        re = blk.op(Op.FDiv, comp, add(mul(ar, br), mul(ai, bi)), den)
        im = blk.op(Op.FDiv, comp, sub(mul(ai, br), mul(ar, bi)), den)
        return self.make_complex(vty, re, im)

    def arith_unary(self, inst: Inst) -> None:
        a = self.val(inst.operand("a"), inst)
        src = inst.operand("a").type
        name = inst.name
        blk = self.block
        if isinstance(src, BooleanType):
            self.set(inst, blk.op(Op.LogicalNot, self.ty(src), a))
        elif src.is_integer:
            t = self.ty(src)
            ops = {
                "abs": lambda: self.ext(t, OpenCLStd.s_abs, a),
                "neg": lambda: blk.op(Op.SNegate, t, a),
                "not": lambda: blk.op(Op.Not, t, a),
            }
            self.set(inst, ops[name]())
        elif src.kind is ScalarKind.bf16:
            # sign-bit operations on the bits: exact for every input (the f32 round trip would
            # turn each NaN into the runtime's default NaN 0xFFC1, sign bit set, even for abs)
            i16 = self.mod.type_int(16)
            op, mask = (Op.BitwiseAnd, 0x7FFF) if name == "abs" else (Op.BitwiseXor, 0x8000)
            self.set(inst, blk.op(op, i16, a, self.mod.constant(i16, mask)))
        elif src.is_float:
            fn = {
                "abs": lambda t, x: self.ext(t, OpenCLStd.fabs, x[0]),
                "neg": lambda t, x: self.block.op(Op.FNegate, t, x[0]),
            }[name]
            self.set(inst, self.via_f32(src, fn, a))
        else:
            self.set(inst, self.complex_unary(name, src, a))

    def complex_unary(self, name: str, ty: NumberType, a: int) -> int:
        vty, comp = self.ty(ty), self.ty(ty.component_type)
        blk = self.block
        if name == "neg":
            return blk.op(Op.FNegate, vty, a)
        if name in ("re", "im"):
            return blk.op(Op.CompositeExtract, comp, a, 0 if name == "re" else 1)
        re, im = self.parts(a, comp)
        if name == "conj":
            return blk.op(Op.CompositeInsert, vty, blk.op(Op.FNegate, comp, im), a, 1)
        # abs: hypot does not overflow for magnitudes near the type's range, unlike sqrt(re²+im²)
        return self.ext(comp, OpenCLStd.hypot, re, im)

    def math(self, inst: Inst) -> None:
        a = self.val(inst.operand("a"), inst)
        ty = as_number(inst.results[0].type)
        number = _MATH[inst.name]
        if ty.is_complex:
            self.set(inst, self.complex_exp(inst.name, ty, a))
            return
        native = inst.name.startswith("native_")
        if ty.kind is ScalarKind.bf16 or (native and ty.kind is ScalarKind.f16):
            # bf16 has no math at all; the CPU runtime has no f16 native_* builtins
            t = self.ty(ty)
            x = (
                self.bf16_to_f32(a)
                if ty.kind is ScalarKind.bf16
                else self.block.op(Op.FConvert, self.f32(), a)
            )
            r = self.ext(self.f32(), number, x)
            if ty.kind is ScalarKind.bf16:
                self.set(inst, self.f32_to_bf16(r))
            else:
                self.set(inst, self.block.op(Op.FConvert, t, r))
            return
        self.set(inst, self.ext(self.ty(ty), number, a))

    def complex_exp(self, name: str, ty: NumberType, a: int) -> int:
        """exp(z) = e^re (cos im, sin im); exp2(z) = 2^re (cos(im ln2), sin(im ln2))."""
        vty, comp = self.ty(ty), self.ty(ty.component_type)
        native = "native_" if name.startswith("native_") else ""
        base = name.removeprefix("native_")
        re, im = self.parts(a, comp)
        if base == "exp2":
            im = self.block.op(Op.FMul, comp, im, self.mod.constant(comp, _LN2))
        mag = self.ext(comp, _MATH[native + base], re)
        c = self.ext(comp, _MATH[native + "cos"], im)
        s = self.ext(comp, _MATH[native + "sin"], im)
        blk = self.block
        return self.make_complex(vty, blk.op(Op.FMul, comp, mag, c), blk.op(Op.FMul, comp, mag, s))

    def compare(self, inst: Inst) -> None:
        ty = inst.operand("a").type
        a, b = self.val(inst.operand("a"), inst), self.val(inst.operand("b"), inst)
        bool_ty = self.mod.type_bool()
        blk = self.block
        if ty.is_integer:
            self.set(inst, blk.op2(_INT_CMP[inst.name], bool_ty, a, b))
            return
        if ty.kind is ScalarKind.bf16:
            a, b = self.bf16_to_f32(a), self.bf16_to_f32(b)
        if ty.is_complex:
            vb = self.mod.type_vector(bool_ty, 2)
            both = blk.op(_FLOAT_CMP[inst.name], vb, a, b)
            self.set(inst, blk.op(Op.All if inst.name == "equal" else Op.Any, bool_ty, both))
            return
        self.set(inst, blk.op2(_FLOAT_CMP[inst.name], bool_ty, a, b))

    # ---- casts --------------------------------------------------------------------------------

    def cast(self, inst: Inst) -> None:
        src = as_number(inst.operand("a").type)
        dst = as_number(inst.results[0].type)
        a = self.val(inst.operand("a"), inst)
        blk = self.block
        if src is dst:
            self.set(inst, blk.op1(Op.CopyObject, self.ty(dst), a))
        elif dst.is_complex and src.is_complex:
            self.set(inst, blk.op1(Op.FConvert, self.ty(dst), a))
        elif dst.is_complex:
            re = self.convert_scalar(a, src, dst.component_type)
            null = self.mod.constant_null(self.ty(dst))
            self.set(inst, blk.op(Op.CompositeInsert, self.ty(dst), re, null, 0))
        else:
            self.set(inst, self.convert_scalar(a, src, dst))

    def convert_scalar(self, a: int, src: NumberType, dst: NumberType) -> int:
        ctx = src.ctx
        blk = self.block
        if src is dst:
            return a
        if src.kind is ScalarKind.bf16:
            return self.convert_scalar(self.bf16_to_f32(a), ctx.f32, dst)
        if dst.kind is ScalarKind.bf16:
            return self.f32_to_bf16(self.convert_scalar(a, src, ctx.f32))
        t = self.ty(dst)
        if src.is_integer and dst.is_integer:
            return blk.op1(Op.CopyObject if src.size == dst.size else Op.SConvert, t, a)
        if src.is_integer:
            return blk.op1(Op.ConvertSToF, t, a)
        if dst.is_integer:
            return blk.op1(Op.ConvertFToS, t, a)
        return blk.op1(Op.FConvert, t, a)


def float_to_bf16_bits(value: float) -> int:
    """Round a Python float (a double) to the nearest bf16, ties to even, in one rounding.

    Rounding to f32 first and then to bf16 would round twice (1.00390625000001 is just above a
    bf16 tie, but its nearest f32 is the tie itself). So the f32 step rounds to odd instead:
    truncate toward zero and set the last bit if anything was cut off; with 16 extra bits the
    second rounding is then exact. Values beyond the f32 range give inf; NaN stays NaN.
    """
    if math.isnan(value):
        return (0x8000 if math.copysign(1.0, value) < 0 else 0) | 0x7FC0
    try:
        bits = struct.unpack("<I", struct.pack("<f", value))[0]
    except OverflowError:  # beyond f32 rounding range, so beyond bf16 max as well
        return 0xFF80 if value < 0 else 0x7F80
    f32 = struct.unpack("<f", struct.pack("<I", bits))[0]
    if f32 != value:
        if abs(f32) > abs(value):
            bits -= 1  # one f32 step toward zero (same sign)
        bits |= 1
    bits += 0x7FFF + ((bits >> 16) & 1)
    return (bits >> 16) & 0xFFFF


HANDLERS: HandlerRows = (
    (ConstantInst, False, "constant"),
    (ArithBinaryInst, False, "arith_binary"),
    (ArithUnaryInst, False, "arith_unary"),
    (MathInst, False, "math"),
    (CompareInst, False, "compare"),
    (CastInst, False, "cast"),
)
"""The instructions ScalarConversion converts: (instruction class, coopmatrix result only, method)."""
