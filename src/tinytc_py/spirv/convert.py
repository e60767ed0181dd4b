"""IR program -> SPIR-V module (backend.md §1, §2.2, §6).

Each function becomes an OpenCL kernel entry point whose parameters follow the calling
convention of backend.md §1 (a memref is a pointer plus its dynamic shape and stride entries as
i64; a group is a pointer to pointers plus per-member i64 arrays, size and offset). Memrefs and
groups are not SPIR-V values: they are *dope vectors* holding the ids of the base pointer and of
every shape/stride entry (constants or parameters), so subview/expand/fuse/size cost no code
beyond the address arithmetic.

Scalar types: bool, i8..i64 (index is i64; all ints have signedness 0), bf16 as i16 bits (every
operation converts to f32 and back), f16/f32/f64, and c32/c64 as 2-vectors (re, im).

Control flow is structured: `if` uses OpSelectionMerge and OpPhi for its results in the merge
block (so yielded values never need to dominate their uses after the if); `for` has a header
block with OpPhi for the loop variable and each loop-carried value, OpLoopMerge, a continue
block and a merge block.

Anything without a rule raises a located CompilationError with Status.not_implemented; no
instruction is ever emitted half-way into an invalid module. Capabilities are added afterwards
by capex.py from what the module contains.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import UNKNOWN_LOCATION, CompilationError, Status, TinytcError
from ..ir import instructions as I
from ..ir.attrs import ArrayAttr, BooleanAttr, IntegerAttr
from ..ir.enums import AddressSpace
from ..ir.inst import Inst
from ..ir.region import Func, Prog, Region
from ..ir.types import (
    DYNAMIC,
    BooleanType,
    CoopmatrixType,
    GroupType,
    MemrefType,
    NumberType,
    ScalarKind,
    Type,
)
from ..ir.values import Value
from ..target.core_info import CoreInfo
from .module import Block, Function, Module
from .tables import (
    BuiltIn,
    ExecutionMode,
    LoopControl,
    MemoryAccess,
    Op,
    OpenCLStd,
    SelectionControl,
    StorageClass,
)

DEFAULT_SUBGROUP_SIZE = 16

# ---- metadata ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ArgInfo:
    """One kernel argument. `kind`: scalar, memref, shape, stride, group, group_shape,
    group_stride, group_size or group_offset; `param` is the IR parameter it belongs to and
    `mode` the shape/stride mode (-1 otherwise)."""

    kind: str
    param: int
    mode: int = -1


@dataclass(frozen=True)
class ParamInfo:
    """An IR parameter as the host sees it: `kind` scalar/memref/group, `dtype` the (element)
    type's text, static `shape`/`stride` (DYNAMIC for '?'), group `size`/`offset`, and the range
    [first_arg, first_arg + num_args) of its kernel arguments."""

    kind: str
    dtype: str
    first_arg: int
    num_args: int
    shape: tuple[int, ...] = ()
    stride: tuple[int, ...] = ()
    size: int = 0
    offset: int = 0
    local: bool = False


@dataclass
class KernelInfo:
    name: str
    work_group_size: tuple[int, int]
    subgroup_size: int
    params: list[ParamInfo] = field(default_factory=list)
    args: list[ArgInfo] = field(default_factory=list)


# ---- dope vectors ------------------------------------------------------------------------------


@dataclass
class MemrefDV:
    ty: MemrefType
    ptr: int
    shape: list[int]
    stride: list[int]


@dataclass
class GroupDV:
    ty: GroupType
    ptr: int
    shape: list[int | None]  # pointer to an i64 array for dynamic modes
    stride: list[int | None]
    size: int
    offset: int | None  # None: static 0


def not_implemented(inst: Inst, what: str = "") -> CompilationError:
    detail = what or f"SPIR-V conversion of '{inst.name}' is not implemented yet"
    return inst.error(Status.not_implemented, detail)


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
_BUILTIN_VEC = {"group_id": BuiltIn.WorkgroupId, "num_groups": BuiltIn.NumWorkgroups}
_BUILTIN_I32 = {
    "subgroup_size": BuiltIn.SubgroupSize,
    "subgroup_linear_id": BuiltIn.SubgroupId,
    "subgroup_local_id": BuiltIn.SubgroupLocalInvocationId,
}
_LN2 = 0.6931471805599453


def _int_attr(attr, default: int | None = None) -> int | None:
    return attr.value if isinstance(attr, IntegerAttr) else default


def kernel_sizes(func: Func, core_info: CoreInfo) -> tuple[int, tuple[int, int]]:
    """Subgroup size and work-group size from the function attributes (backend.md §2.2).

    Without attributes: subgroup size 16 (or the smallest supported size above it) and
    work-group size [S, 1]; the work-group-size pass will choose properly later.
    """
    attrs = func.attrs
    sgs = _int_attr(attrs.get("subgroup_size")) if attrs is not None else None
    wgs_attr = attrs.get("work_group_size") if attrs is not None else None
    if sgs is None:
        sizes = sorted(core_info.subgroup_sizes)
        sgs = next((s for s in sizes if s >= DEFAULT_SUBGROUP_SIZE), sizes[-1])
    if sgs not in core_info.subgroup_sizes:
        raise CompilationError(
            func.loc, Status.unsupported_subgroup_size, f"subgroup size {sgs} is not supported"
        )
    if isinstance(wgs_attr, ArrayAttr):
        wgs = tuple(_int_attr(v, 0) for v in wgs_attr.values)
        w0, w1 = (wgs + (1,))[:2]
    else:
        w0, w1 = sgs, 1
    max_wgs = core_info.max_work_group_size(sgs)
    if w0 <= 0 or w1 <= 0 or w0 % sgs or w0 * w1 > max_wgs:
        raise CompilationError(
            func.loc,
            Status.unsupported_work_group_size,
            f"work-group size [{w0}, {w1}] is not supported with subgroup size {sgs}"
            f" (maximum {max_wgs})",
        )
    return sgs, (w0, w1)


# ---- the converter -----------------------------------------------------------------------------


class Converter:
    """Converts the functions of one program into one module."""

    def __init__(self, core_info: CoreInfo) -> None:
        self.core_info = core_info
        self.mod = Module()
        self.ocl = 0
        self.kernels: list[KernelInfo] = []
        self._handlers: list[tuple[type, Callable[[Inst], None]]] = [
            (I.ConstantInst, self.constant),
            (I.ArithBinaryInst, self.arith_binary),
            (I.ArithUnaryInst, self.arith_unary),
            (I.MathInst, self.math),
            (I.CompareInst, self.compare),
            (I.CastInst, self.cast),
            (I.BuiltinInst, self.builtin),
            (I.AtomicLoadInst, self.unsupported),
            (I.LoadInst, self.load),
            (I.StoreInst, self.store),
            (I.SizeInst, self.size),
            (I.SubviewInst, self.subview),
            (I.ExpandInst, self.expand),
            (I.FuseInst, self.fuse),
            (I.AssociatedInst, self.associated),
            (I.ForInst, self.for_),
            (I.IfInst, self.if_),
            (I.ParallelInst, self.parallel),
        ]

    # ---- types --------------------------------------------------------------------------------

    def ty(self, ty: Type, inst: Inst | None = None) -> int:
        """SPIR-V type of a scalar value (bool, number)."""
        m = self.mod
        if isinstance(ty, BooleanType):
            return m.type_bool()
        if isinstance(ty, NumberType):
            k = ty.kind
            if k in (ScalarKind.c32, ScalarKind.c64):
                return m.type_vector(m.type_float(32 if k is ScalarKind.c32 else 64), 2)
            if ty.is_float and k is not ScalarKind.bf16:
                return m.type_float(8 * ty.size)
            return m.type_int(8 * ty.size)
        where = inst.loc if inst is not None else UNKNOWN_LOCATION
        raise CompilationError(
            where, Status.not_implemented, f"values of type {ty} not supported yet"
        )

    def f32(self) -> int:
        return self.mod.type_float(32)

    def i64(self) -> int:
        return self.mod.type_int(64)

    def i32(self) -> int:
        return self.mod.type_int(32)

    def c64(self, value: int) -> int:
        return self.mod.constant(self.i64(), value)

    def memref_ptr_ty(self, mt: MemrefType) -> int:
        sc = (
            StorageClass.Workgroup
            if mt.addrspace is AddressSpace.local
            else StorageClass.CrossWorkgroup
        )
        return self.mod.type_pointer(sc, self.ty(mt.element), mt.element.size)

    def group_ptr_ty(self, gt: GroupType) -> int:
        return self.mod.type_pointer(StorageClass.CrossWorkgroup, self.memref_ptr_ty(gt.memref), 8)

    def i64_array_ptr_ty(self) -> int:
        return self.mod.type_pointer(StorageClass.CrossWorkgroup, self.i64(), 8)

    # ---- program / function -------------------------------------------------------------------

    def convert(self, prog: Prog) -> Module:
        self.ocl = self.mod.ext_inst_import("OpenCL.std")
        for func in prog.funcs:
            self.function(func)
        return self.mod

    def function(self, func: Func) -> None:
        sgs, wgs = kernel_sizes(func, self.core_info)
        self.sgs, self.wgs = sgs, wgs
        self.values: dict[Value, object] = {}
        self.interface: dict[int, None] = {}
        info = KernelInfo(func.name, wgs, sgs)
        param_types: list[int] = []
        binders: list[tuple[int, Callable[[list[int]], None]]] = []
        for k, p in enumerate(func.params):
            types, binder = self.parameter(k, p, info)
            param_types.extend(types)
            binders.append((len(types), binder))
        m = self.mod
        void = m.type_void()
        fn = m.add_function(void, m.type_function(void, param_types), name=func.name)
        ids = [fn.add_parameter(t) for t in param_types]
        pos = 0
        for count, binder in binders:
            binder(ids[pos : pos + count])
            pos += count
        self.fn: Function = fn
        self.block: Block = fn.add_block()
        self.region(func.body)
        self.block.emit(Op.Return)
        m.add_entry_point(fn.id, func.name, list(self.interface))
        m.add_execution_mode(fn.id, ExecutionMode.LocalSize, wgs[0], wgs[1], 1)
        m.add_execution_mode(fn.id, ExecutionMode.SubgroupSize, sgs)
        self.kernels.append(info)

    def parameter(self, k: int, p: Value, info: KernelInfo):
        """SPIR-V parameter types of IR parameter k and a function binding the ids to `p`."""
        ty = p.type
        first = len(info.args)
        if isinstance(ty, MemrefType):
            types = [self.memref_ptr_ty(ty)]
            info.args.append(ArgInfo("memref", k))
            dyn_shape = [i for i, s in enumerate(ty.shape) if s == DYNAMIC]
            dyn_stride = [i for i, s in enumerate(ty.stride) if s == DYNAMIC]
            info.args += [ArgInfo("shape", k, i) for i in dyn_shape]
            info.args += [ArgInfo("stride", k, i) for i in dyn_stride]
            types += [self.i64()] * (len(dyn_shape) + len(dyn_stride))
            info.params.append(
                ParamInfo(
                    "memref",
                    ty.element.kind.text,
                    first,
                    len(types),
                    ty.shape,
                    ty.stride,
                    local=ty.addrspace is AddressSpace.local,
                )
            )

            def bind(ids: list[int]) -> None:
                it = iter(ids[1:])
                shape = [next(it) if s == DYNAMIC else self.c64(s) for s in ty.shape]
                stride = [next(it) if s == DYNAMIC else self.c64(s) for s in ty.stride]
                self.values[p] = MemrefDV(ty, ids[0], shape, stride)

            return types, bind
        if isinstance(ty, GroupType):
            return self.group_parameter(k, p, ty, info)
        types = [self.ty(ty)]
        info.args.append(ArgInfo("scalar", k))
        info.params.append(ParamInfo("scalar", str(ty), first, 1))

        def bind_scalar(ids: list[int]) -> None:
            self.values[p] = ids[0]

        return types, bind_scalar

    def group_parameter(self, k: int, p: Value, ty: GroupType, info: KernelInfo):
        mt = ty.memref
        first = len(info.args)
        types = [self.group_ptr_ty(ty)]
        info.args.append(ArgInfo("group", k))
        dyn_shape = [i for i, s in enumerate(mt.shape) if s == DYNAMIC]
        dyn_stride = [i for i, s in enumerate(mt.stride) if s == DYNAMIC]
        info.args += [ArgInfo("group_shape", k, i) for i in dyn_shape]
        info.args += [ArgInfo("group_stride", k, i) for i in dyn_stride]
        types += [self.i64_array_ptr_ty()] * (len(dyn_shape) + len(dyn_stride))
        if ty.size == DYNAMIC:
            info.args.append(ArgInfo("group_size", k))
            types.append(self.i64())
        if ty.offset == DYNAMIC:
            info.args.append(ArgInfo("group_offset", k))
            types.append(self.i64())
        info.params.append(
            ParamInfo(
                "group",
                mt.element.kind.text,
                first,
                len(types),
                mt.shape,
                mt.stride,
                ty.size,
                ty.offset,
            )
        )

        def bind(ids: list[int]) -> None:
            it = iter(ids[1:])
            shape = [next(it) if s == DYNAMIC else None for s in mt.shape]
            stride = [next(it) if s == DYNAMIC else None for s in mt.stride]
            size = next(it) if ty.size == DYNAMIC else self.c64(ty.size)
            if ty.offset == DYNAMIC:
                offset: int | None = next(it)
            else:
                offset = self.c64(ty.offset) if ty.offset else None
            self.values[p] = GroupDV(ty, ids[0], shape, stride, size, offset)

        return types, bind

    # ---- regions and values -------------------------------------------------------------------

    def region(self, region: Region) -> list[int]:
        """Convert the instructions of `region`; return the ids its yield passes on."""
        for inst in region.insts:
            if isinstance(inst, I.YieldInst):
                return [self.val(v, inst) for v in inst.operand_list("yielded_vals")]
            self.inst(inst)
        return []

    def inst(self, inst: Inst) -> None:
        for v in inst.results:
            if isinstance(v.type, CoopmatrixType):
                raise not_implemented(
                    inst, f"'{inst.name}' on coopmatrix values is not implemented yet"
                )
        for cls, handler in self._handlers:
            if isinstance(inst, cls):
                handler(inst)
                return
        raise not_implemented(inst)

    def val(self, v: Value, inst: Inst) -> int:
        r = self.values.get(v)
        if isinstance(r, int):
            return r
        if r is None and isinstance(v.type, CoopmatrixType):
            raise not_implemented(
                inst, f"'{inst.name}' on coopmatrix values is not implemented yet"
            )
        raise CompilationError(inst.loc, Status.spirv_undefined_value, f"undefined value {v}", [v])

    def dv(self, v: Value, inst: Inst):
        r = self.values.get(v)
        if isinstance(r, (MemrefDV, GroupDV)):
            return r
        raise CompilationError(
            inst.loc, Status.spirv_missing_dope_vector, f"no dope vector for {v}", [v]
        )

    def set(self, inst: Inst, rid: object) -> None:
        self.values[inst.results[0]] = rid

    def unsupported(self, inst: Inst) -> None:
        raise not_implemented(inst)

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
        return self.block.op(Op.CompositeConstruct, vty, re, im)

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
            self.set(inst, blk.op(_BOOL_BINARY[name], self.ty(ty), a, b))
        elif ty.is_integer:
            rty = self.ty(ty)
            if name in _INT_EXT:
                self.set(inst, self.ext(rty, _INT_EXT[name], a, b))
            else:
                self.set(inst, blk.op(_INT_BINARY[name], rty, a, b))
        elif ty.is_float:
            self.set(inst, self.via_f32(ty, lambda t, x: self.float_binary(name, t, *x), a, b))
        else:
            self.set(inst, self.complex_binary(name, ty, a, b))

    def float_binary(self, name: str, t: int, a: int, b: int) -> int:
        if name in _FLOAT_EXT:
            return self.ext(t, _FLOAT_EXT[name], a, b)
        return self.block.op(_FLOAT_BINARY[name], t, a, b)

    def complex_binary(self, name: str, ty: NumberType, a: int, b: int) -> int:
        vty, comp = self.ty(ty), self.ty(ty.component_type)
        blk = self.block
        if name in ("add", "sub"):
            return blk.op(_FLOAT_BINARY[name], vty, a, b)
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
        # abs
        sq = blk.op(Op.FAdd, comp, blk.op(Op.FMul, comp, re, re), blk.op(Op.FMul, comp, im, im))
        return self.ext(comp, OpenCLStd.sqrt, sq)

    def math(self, inst: Inst) -> None:
        a = self.val(inst.operand("a"), inst)
        ty = inst.results[0].type
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
            self.set(inst, blk.op(_INT_CMP[inst.name], bool_ty, a, b))
            return
        if ty.kind is ScalarKind.bf16:
            a, b = self.bf16_to_f32(a), self.bf16_to_f32(b)
        if ty.is_complex:
            vb = self.mod.type_vector(bool_ty, 2)
            both = blk.op(_FLOAT_CMP[inst.name], vb, a, b)
            self.set(inst, blk.op(Op.All if inst.name == "equal" else Op.Any, bool_ty, both))
            return
        self.set(inst, blk.op(_FLOAT_CMP[inst.name], bool_ty, a, b))

    # ---- casts --------------------------------------------------------------------------------

    def cast(self, inst: Inst) -> None:
        src = inst.operand("a").type
        dst = inst.results[0].type
        a = self.val(inst.operand("a"), inst)
        blk = self.block
        if src is dst:
            self.set(inst, blk.op(Op.CopyObject, self.ty(dst), a))
        elif dst.is_complex and src.is_complex:
            self.set(inst, blk.op(Op.FConvert, self.ty(dst), a))
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
            return blk.op(Op.CopyObject if src.size == dst.size else Op.SConvert, t, a)
        if src.is_integer:
            return blk.op(Op.ConvertSToF, t, a)
        if dst.is_integer:
            return blk.op(Op.ConvertFToS, t, a)
        return blk.op(Op.FConvert, t, a)

    # ---- builtins -----------------------------------------------------------------------------

    def load_builtin(self, builtin: int, ty: int, alignment: int) -> int:
        var = self.mod.builtin(builtin, self.mod.type_pointer(StorageClass.Input, ty, alignment))
        self.interface[var] = None
        return self.block.op(Op.Load, ty, var, MemoryAccess.Aligned, alignment)

    def builtin(self, inst: Inst) -> None:
        name = inst.name
        i32 = self.i32()
        m = self.mod
        blk = self.block
        mode = inst.props.get("mode")
        if name in _BUILTIN_VEC:
            vec = self.load_builtin(_BUILTIN_VEC[name], m.type_vector(self.i64(), 3), 32)
            self.set(inst, blk.op(Op.CompositeExtract, self.i64(), vec, int(mode)))
        elif name in _BUILTIN_I32:
            self.set(inst, self.load_builtin(_BUILTIN_I32[name], i32, 4))
        elif name == "num_subgroups":
            values = (self.wgs[0] // self.sgs, self.wgs[1], 1)
            self.set(inst, m.constant(i32, values[int(mode)]))
        elif name == "subgroup_id":
            if int(mode) == 2:
                self.set(inst, m.constant(i32, 0))
                return
            sid = self.load_builtin(BuiltIn.SubgroupId, i32, 4)
            tiles = m.constant(i32, self.wgs[0] // self.sgs)
            self.set(inst, blk.op(Op.UMod if int(mode) == 0 else Op.UDiv, i32, sid, tiles))
        else:
            raise not_implemented(inst)

    # ---- memory -------------------------------------------------------------------------------

    def address(self, d: MemrefDV, indices: list[int]) -> int:
        if not indices:
            return d.ptr
        blk = self.block
        off = None
        for idx, st, static in zip(indices, d.stride, d.ty.stride, strict=False):
            term = idx if static == 1 else blk.op(Op.IMul, self.i64(), idx, st)
            off = term if off is None else blk.op(Op.IAdd, self.i64(), off, term)
        return blk.op(Op.InBoundsPtrAccessChain, self.memref_ptr_ty(d.ty), d.ptr, off)

    def load(self, inst: Inst) -> None:
        d = self.dv(inst.operand("operand"), inst)
        indices = [self.val(v, inst) for v in inst.operand_list("index_list")]
        if isinstance(d, GroupDV):
            self.set(inst, self.load_group(d, indices[0]))
            return
        ptr = self.address(d, indices)
        self.set(inst, self.block.op(Op.Load, self.ty(d.ty.element), ptr))

    def load_group(self, g: GroupDV, idx: int) -> MemrefDV:
        """Member idx: base G[idx] + offset, dynamic shape/stride entries array[idx] (§1.3)."""
        blk = self.block
        mt = g.ty.memref
        mptr = self.memref_ptr_ty(mt)
        slot = blk.op(Op.InBoundsPtrAccessChain, self.group_ptr_ty(g.ty), g.ptr, idx)
        base = blk.op(Op.Load, mptr, slot, MemoryAccess.Aligned, 8)
        if g.offset is not None:
            base = blk.op(Op.InBoundsPtrAccessChain, mptr, base, g.offset)

        def entry(arr: int | None, static: int) -> int:
            if arr is None:
                return self.c64(static)
            p = blk.op(Op.InBoundsPtrAccessChain, self.i64_array_ptr_ty(), arr, idx)
            return blk.op(Op.Load, self.i64(), p, MemoryAccess.Aligned, 8)

        shape = [entry(a, s) for a, s in zip(g.shape, mt.shape, strict=False)]
        stride = [entry(a, s) for a, s in zip(g.stride, mt.stride, strict=False)]
        return MemrefDV(mt, base, shape, stride)

    def store(self, inst: Inst) -> None:
        if inst.name != "store":
            raise not_implemented(inst)
        d = self.dv(inst.operand("operand"), inst)
        val = self.val(inst.operand("val"), inst)
        indices = [self.val(v, inst) for v in inst.operand_list("index_list")]
        self.block.emit(Op.Store, self.address(d, indices), val)

    def size(self, inst: Inst) -> None:
        d = self.dv(inst.operand("operand"), inst)
        if isinstance(d, GroupDV):
            self.set(inst, d.size)
        else:
            self.set(inst, d.shape[inst.props["mode"]])

    def result_dv(self, inst: Inst, ptr: int, shape: list[int], stride: list[int]) -> MemrefDV:
        """Prefer the result type's static entries (constants) over computed ids."""
        rt = inst.results[0].type
        shape = [s if e == DYNAMIC else self.c64(e) for s, e in zip(shape, rt.shape, strict=False)]
        stride = [
            s if e == DYNAMIC else self.c64(e) for s, e in zip(stride, rt.stride, strict=False)
        ]
        return MemrefDV(rt, ptr, shape, stride)

    def subview(self, inst: Inst) -> None:
        d = self.dv(inst.operand("operand"), inst)
        dyn_offs = iter(self.val(v, inst) for v in inst.operand_list("offsets"))
        dyn_sizes = iter(self.val(v, inst) for v in inst.operand_list("sizes"))
        blk = self.block
        off = None
        shape, stride = [], []
        for k, (o, s) in enumerate(
            zip(inst.props["static_offsets"], inst.props["static_sizes"], strict=False)
        ):
            oid = next(dyn_offs) if o == DYNAMIC else None
            if o != 0:
                oid = oid if oid is not None else self.c64(o)
                term = oid if d.ty.stride[k] == 1 else blk.op(Op.IMul, self.i64(), oid, d.stride[k])
                off = term if off is None else blk.op(Op.IAdd, self.i64(), off, term)
            if s == 0:
                continue
            shape.append(next(dyn_sizes) if s == DYNAMIC else self.c64(s))
            stride.append(d.stride[k])
        ptr = d.ptr
        if off is not None:
            ptr = blk.op(Op.InBoundsPtrAccessChain, self.memref_ptr_ty(d.ty), d.ptr, off)
        self.set(inst, self.result_dv(inst, ptr, shape, stride))

    def expand(self, inst: Inst) -> None:
        d = self.dv(inst.operand("operand"), inst)
        mode = inst.props["expanded_mode"]
        dyn = iter(self.val(v, inst) for v in inst.operand_list("expand_shape"))
        sub_shape = [
            next(dyn) if s == DYNAMIC else self.c64(s) for s in inst.props["static_expand_shape"]
        ]
        sub_stride = [d.stride[mode]]
        for s in sub_shape[:-1]:
            sub_stride.append(self.block.op(Op.IMul, self.i64(), sub_stride[-1], s))
        shape = d.shape[:mode] + sub_shape + d.shape[mode + 1 :]
        stride = d.stride[:mode] + sub_stride + d.stride[mode + 1 :]
        self.set(inst, self.result_dv(inst, d.ptr, shape, stride))

    def fuse(self, inst: Inst) -> None:
        d = self.dv(inst.operand("operand"), inst)
        frm, to = inst.props["from"], inst.props["to"]
        size = d.shape[frm]
        for s in d.shape[frm + 1 : to + 1]:
            size = self.block.op(Op.IMul, self.i64(), size, s)
        shape = d.shape[:frm] + [size] + d.shape[to + 1 :]
        stride = d.stride[: frm + 1] + d.stride[to + 1 :]
        self.set(inst, self.result_dv(inst, d.ptr, shape, stride))

    def associated(self, inst: Inst) -> None:
        d = self.dv(inst.operand("operand"), inst)
        pty = self.memref_ptr_ty(d.ty) if isinstance(d, MemrefDV) else self.group_ptr_ty(d.ty)
        null = self.mod.constant_null(pty)
        self.set(inst, self.block.op(Op.PtrNotEqual, self.mod.type_bool(), d.ptr, null))

    # ---- control flow -------------------------------------------------------------------------

    def parallel(self, inst: Inst) -> None:
        self.region(inst.regions[0])

    def if_(self, inst: Inst) -> None:
        m = self.mod
        cond = self.val(inst.operand("condition"), inst)
        then_r, else_r = inst.regions
        then_l, merge_l = m.new_id(), m.new_id()
        else_l = m.new_id() if else_r.insts else merge_l
        self.block.emit(Op.SelectionMerge, merge_l, SelectionControl.None_)
        self.block.emit(Op.BranchConditional, cond, then_l, else_l)
        incoming: list[tuple[list[int], int]] = []
        start = self.block.label
        for region, label in ((then_r, then_l), (else_r, else_l)):
            if label == merge_l:
                incoming.append(([], start))
                continue
            self.block = self.fn.add_block(label)
            yielded = self.region(region)
            incoming.append((yielded, self.block.label))
            self.block.emit(Op.Branch, merge_l)
        self.block = self.fn.add_block(merge_l)
        for k, r in enumerate(inst.results):
            if any(len(vals) <= k for vals, _ in incoming):
                raise CompilationError(inst.loc, Status.ir_yield_mismatch, "missing yield")
            ops = [x for vals, lbl in incoming for x in (vals[k], lbl)]
            self.values[r] = self.block.op(Op.Phi, self.ty(r.type, inst), *ops)

    def for_(self, inst: Inst) -> None:
        m = self.mod
        frm = self.val(inst.operand("from"), inst)
        to = self.val(inst.operand("to"), inst)
        lty = inst.operand("from").type
        ity = self.ty(lty)
        step_v = inst.operand("step")
        step = self.val(step_v, inst) if step_v is not None else m.constant(ity, 1)
        init = [self.val(v, inst) for v in inst.operand_list("iter_init")]
        pre = self.block
        header_l, body_l, cont_l, merge_l = (m.new_id() for _ in range(4))
        pre.emit(Op.Branch, header_l)
        header = self.fn.add_block(header_l)
        iv, iv_next = m.new_id(), m.new_id()
        carried = [m.new_id() for _ in inst.results]
        body = inst.regions[0]
        self.values[body.params[0]] = iv
        for p, c in zip(body.params[1:], carried, strict=False):
            self.values[p] = c
        self.block = self.fn.add_block(body_l)
        yielded = self.region(body)
        if len(yielded) != len(carried):
            raise CompilationError(
                inst.loc, Status.ir_yield_mismatch, "loop yields the wrong count"
            )
        self.block.emit(Op.Branch, cont_l)
        cont = self.fn.add_block(cont_l)
        cont.op(Op.IAdd, ity, iv, step, result_id=iv_next)
        cont.emit(Op.Branch, header_l)
        header.op(Op.Phi, ity, frm, pre.label, iv_next, cont_l, result_id=iv)
        for r, c, i0, y in zip(inst.results, carried, init, yielded, strict=False):
            header.op(Op.Phi, self.ty(r.type, inst), i0, pre.label, y, cont_l, result_id=c)
        cond = header.op(Op.SLessThan, m.type_bool(), iv, to)
        header.emit(Op.LoopMerge, merge_l, cont_l, *loop_control(inst))
        header.emit(Op.BranchConditional, cond, body_l, merge_l)
        for r, c in zip(inst.results, carried, strict=False):
            self.values[r] = c
        self.block = self.fn.add_block(merge_l)


def loop_control(inst: Inst) -> tuple[int, ...]:
    unroll = inst.attrs.get("unroll") if inst.attrs is not None else None
    if isinstance(unroll, BooleanAttr):
        return (LoopControl.Unroll if unroll.value else LoopControl.DontUnroll,)
    if isinstance(unroll, IntegerAttr) and unroll.value > 0:
        return (LoopControl.PartialCount, unroll.value)
    return (LoopControl.None_,)


def float_to_bf16_bits(value: float) -> int:
    """Round an f32 to bf16 (round to nearest even; NaN stays NaN)."""
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    if (bits & 0x7F800000) == 0x7F800000 and bits & 0x7FFFFF:
        return (bits >> 16) | 0x40
    bits += 0x7FFF + ((bits >> 16) & 1)
    return (bits >> 16) & 0xFFFF


def convert_prog(prog: Prog, core_info: CoreInfo) -> tuple[Module, list[KernelInfo]]:
    """The module (without capabilities; see capex) and the kernels' metadata."""
    conv = Converter(core_info)
    try:
        module = conv.convert(prog)
    except TinytcError:
        raise
    except (ValueError, KeyError) as e:  # a module-layer refusal is a compiler bug
        raise CompilationError(
            getattr(prog, "loc", UNKNOWN_LOCATION), Status.internal_compiler_error, str(e)
        ) from e
    return module, conv.kernels


__all__ = [
    "ArgInfo",
    "Converter",
    "KernelInfo",
    "ParamInfo",
    "convert_prog",
    "kernel_sizes",
]
