"""Known divisors of integer values and of memref layouts (the facts behind dump-gcd and the
alignment proofs of block IO).

`value_gcd(v)` is a number every run-time value of the integer `v` is a multiple of: 1 when
nothing is known, 0 when v is 0 (gcd's neutral element, so gcd(0, x) = x). It follows constants,
sums, differences, products, exact divisions by constants, integer casts, `size` of a memref mode
and loop variables (gcd of the lower bound and the step).

The rules hold in exact arithmetic, which is what 64-bit integers (i64, index: sizes, indices,
offsets) are taken to compute, as upstream tinytc does. The narrow types i8, i16 and i32 wrap
around modulo 2^bits (constant folding and the device alike), and wrapping subtracts a multiple
of 2^bits: of a divisor g, only gcd(g, 2^bits), its power-of-two part, survives. So a sum, a
product, a truncating cast or a loop variable of a narrow type keeps only that part (0 stays 0);
a constant is exact, taken as the signed number the device holds
(`constant 4294967232 : i32` is -64), a division by a constant that divides the dividend is
exact, and a widening cast sign-extends, keeping the value. A cast from a floating or complex
value says nothing (1): rounding and the float-to-int conversion keep no divisor.

`memref_gcd(v, default_alignment)` describes the memref `v` in elements: its base address is a
multiple of `offset` elements, shape(k) of `shape[k]` and stride(k) of `stride[k]`. Static
extents of the type are exact; dynamic ones come from the `shape_gcd` / `stride_gcd` attributes
of a parameter (for a group parameter: of its members) and from the instructions that derive a
memref (subview, expand, fuse, a group's load). Base pointers of parameters are aligned to their
`alignment` attribute, else to the core info's default alignment, as is local memory; an alloca
placed by set-stack-ptr starts `stack_ptr` bytes into it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeGuard, TypeVar

from ..ir.attrs import ArrayAttr, DictionaryAttr, IntegerAttr
from ..ir.inst import Inst
from ..ir.region import Func
from ..ir.types import DYNAMIC, GroupType, MemrefType, NumberType, element_type, int_bits, wrap
from ..ir.values import Value
from .stack import alloca_alignment, stack_ptr

T = TypeVar("T")


@dataclass(frozen=True)
class MemrefGcd:
    offset: int
    shape: tuple[int, ...]
    stride: tuple[int, ...]


def value_gcd(v: Value) -> int:
    """A number every run-time value of the integer `v` is a multiple of (0: v is 0)."""
    return _Query().value(v)


def memref_gcd(v: Value, default_alignment: int = 128) -> MemrefGcd:
    """What is known about memref `v`'s offset, shape and stride (see the module docstring)."""
    return _Query(default_alignment).memref(v)


def _is_int(ty: object) -> TypeGuard[NumberType]:
    return isinstance(ty, NumberType) and ty.is_integer


def _wrapped(g: int, ty: NumberType) -> int:
    """The divisor left of `g` (true in exact arithmetic) once a value of type `ty` wraps around:
    gcd(g, 2^bits) for i8, i16 and i32, all of it for the 64-bit types (module docstring)."""
    bits = int_bits(ty)
    if g == 0 or bits >= 64:
        return g
    return math.gcd(g, 1 << bits)


def _constant(v: Value) -> int | None:
    """The integer constant `v` holds as the device sees it: the verifier lets an i32 constant
    be written up to 2^32 - 1, and 4294967232 : i32 is -64 at run time."""
    d = v.defining_inst
    if d is not None and d.name == "constant":
        value, ty = d.props["value"], element_type(v.type)
        if isinstance(value, int) and not isinstance(value, bool) and _is_int(ty):
            return wrap(value, ty)
    return None


def _param_attrs(v: Value) -> DictionaryAttr | None:
    region = v.region
    func = region.owner if region is not None else None
    if isinstance(func, Func) and region is func.body:
        for p, attrs in zip(func.params, func.param_attrs, strict=False):
            if p is v:
                return attrs
    return None


def _attr_ints(attrs: DictionaryAttr | None, name: str) -> list[int] | None:
    a = attrs.get(name) if attrs is not None else None
    if isinstance(a, ArrayAttr):
        return [e.value if isinstance(e, IntegerAttr) else 1 for e in a.values]
    if isinstance(a, IntegerAttr):
        return [a.value]
    return None


def _from_type(mt: MemrefType, offset: int, shape=(), stride=()) -> MemrefGcd:
    """Static extents of the type, else the given gcds (else 1)."""

    def pick(static: tuple[int, ...], known) -> tuple[int, ...]:
        known = list(known)
        return tuple(
            s if s != DYNAMIC else (known[k] if k < len(known) else 1) for k, s in enumerate(static)
        )

    return MemrefGcd(max(offset, 1), pick(mt.shape, shape), pick(mt.stride, stride))


def _elements(alignment_bytes: int, mt: MemrefType) -> int:
    """An alignment in bytes as a number of elements (1 if it is not a multiple of one)."""
    size = mt.element.size
    return alignment_bytes // size if alignment_bytes % size == 0 else 1


def _remembered(memo: dict[Value, T], v: Value, compute: Callable[[Value], T]) -> T:
    """`compute(v)`, looked up in `memo` first and stored there (one question's memo)."""
    found = memo.get(v)
    if found is None:
        found = memo[v] = compute(v)
    return found


class _Query:
    """One value_gcd or memref_gcd question. Answers are remembered for the question's
    duration only, so a value shared by many terms (`%y = add %x, %x` repeated: 2^n paths) is
    looked at once, and no answer outlives the IR it was computed from."""

    __slots__ = ("default_alignment", "values", "memrefs")

    def __init__(self, default_alignment: int = 128) -> None:
        self.default_alignment = default_alignment
        self.values: dict[Value, int] = {}
        self.memrefs: dict[Value, MemrefGcd] = {}

    def value(self, v: Value) -> int:
        return _remembered(self.values, v, self._value)

    def _value(self, v: Value) -> int:
        d = v.defining_inst
        if d is None:
            return self._loop_var(v)
        name = d.name
        if name == "constant":
            c = _constant(v)
            return abs(c) if c is not None else 1
        if name in ("add", "sub"):
            g = math.gcd(self.value(d.operand("a")), self.value(d.operand("b")))
            return _wrapped(g, v.type)
        if name == "mul":
            return _wrapped(self.value(d.operand("a")) * self.value(d.operand("b")), v.type)
        if name == "div":
            a, b = self.value(d.operand("a")), _constant(d.operand("b"))
            return a // abs(b) if b and a % b == 0 else 1
        if name == "cast":
            src, dst = d.operand("a"), v.type
            if not (_is_int(src.type) and _is_int(dst)):
                return 1
            g = self.value(src)
            return _wrapped(g, dst) if dst.size < src.type.size else g
        if name == "size":
            operand = d.operand("operand")
            if isinstance(operand.type, MemrefType):
                return self.memref(operand).shape[d.props["mode"]]
        return 1

    def _loop_var(self, v: Value) -> int:
        region = v.region
        owner = region.owner if region is not None else None
        if isinstance(owner, Inst) and owner.name == "for" and v is region.params[0]:
            step = owner.operand("step")
            g = math.gcd(self.value(owner.operand("from")), self.value(step) if step else 1)
            return _wrapped(g, v.type)
        return 1

    def memref(self, v: Value) -> MemrefGcd:
        return _remembered(self.memrefs, v, self._memref)

    def _memref(self, v: Value) -> MemrefGcd:
        mt = v.type
        assert isinstance(mt, MemrefType)
        d = v.defining_inst
        if d is None:
            attrs = _param_attrs(v)
            align = _attr_ints(attrs, "alignment")
            offset = _elements(align[0] if align else self.default_alignment, mt)
            return _from_type(
                mt,
                offset,
                _attr_ints(attrs, "shape_gcd") or (),
                _attr_ints(attrs, "stride_gcd") or (),
            )
        name = d.name
        if name == "alloca":
            ptr = stack_ptr(d)
            align = (
                math.gcd(self.default_alignment, ptr) if ptr is not None else alloca_alignment(d)
            )
            return _from_type(mt, _elements(align, mt))
        if name == "load":  # a member of a group: G[i] + offset elements
            group = d.operand("operand")
            gt = group.type
            if not isinstance(gt, GroupType):
                return _from_type(mt, 1)
            attrs = _param_attrs(group)
            align = _attr_ints(attrs, "alignment")
            offset = _elements(align[0] if align else self.default_alignment, mt)
            offset = math.gcd(offset, gt.offset) if gt.offset != DYNAMIC else 1
            return _from_type(
                mt,
                offset,
                _attr_ints(attrs, "shape_gcd") or (),
                _attr_ints(attrs, "stride_gcd") or (),
            )
        if name == "subview":
            return self._subview(d, self.memref(d.operand("operand")), mt)
        if name == "expand":
            return self._expand(d, self.memref(d.operand("operand")), mt)
        if name == "fuse":
            return self._fuse(d, self.memref(d.operand("operand")), mt)
        return _from_type(mt, 1)

    def _subview(self, d: Inst, src: MemrefGcd, mt: MemrefType) -> MemrefGcd:
        offs, sizes = iter(d.operand_list("offsets")), iter(d.operand_list("sizes"))
        offset = src.offset
        shape, stride = [], []
        for k, (off, size) in enumerate(zip(d.props["static_offsets"], d.props["static_sizes"])):
            off_gcd = self.value(next(offs)) if off == DYNAMIC else abs(off)
            offset = math.gcd(offset, off_gcd * src.stride[k])
            if size != 0:  # a kept mode
                shape.append(self.value(next(sizes)) if size == DYNAMIC else size)
                stride.append(src.stride[k])
        return _from_type(mt, offset, shape, stride)

    def _expand(self, d: Inst, src: MemrefGcd, mt: MemrefType) -> MemrefGcd:
        mode = d.props["expanded_mode"]
        dyn = iter(d.operand_list("expand_shape"))
        parts = [
            self.value(next(dyn)) if s == DYNAMIC else s for s in d.props["static_expand_shape"]
        ]
        strides, step = [], src.stride[mode]
        for part in parts:
            strides.append(step)
            step *= part
        shape = [*src.shape[:mode], *parts, *src.shape[mode + 1 :]]
        stride = [*src.stride[:mode], *strides, *src.stride[mode + 1 :]]
        return _from_type(mt, src.offset, shape, stride)

    def _fuse(self, d: Inst, src: MemrefGcd, mt: MemrefType) -> MemrefGcd:
        frm, to = d.props["from"], d.props["to"]
        shape = [*src.shape[:frm], math.prod(src.shape[frm : to + 1]), *src.shape[to + 1 :]]
        stride = [*src.stride[: frm + 1], *src.stride[to + 1 :]]
        return _from_type(mt, src.offset, shape, stride)
