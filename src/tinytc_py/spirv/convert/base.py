"""Converter state, types, kernel parameters (calling convention, docs/design.md §B1) and dope vectors.

Memrefs and groups are not SPIR-V values: they are *dope vectors* holding the ids of the base
pointer and of every shape/stride entry (constants or parameters), so subview/expand/fuse/size
cost no code beyond the address arithmetic."""

from __future__ import annotations

from collections.abc import Callable

from ...analysis.coopmatrix_layout import CoopLayout, coop_layout
from ...analysis.kernel_interface import kernel_interface
from ...binary import KernelInfo
from ...errors import UNKNOWN_LOCATION, CompilationError, Status
from ...ir.enums import AddressSpace
from ...ir.inst import Inst
from ...ir.ops.control import YieldInst
from ...ir.region import Func, Prog, Region
from ...ir.types import (
    DYNAMIC,
    BooleanType,
    CoopmatrixType,
    GroupType,
    MemrefType,
    NumberType,
    ScalarKind,
    Type,
    as_coopmatrix,
)
from ...ir.values import Value
from ...target.core_info import CoreInfo
from ..module import VECTOR_LENGTHS, Block, Function, Module
from ..tables import (
    ExecutionMode,
    Op,
    StorageClass,
)
from .metadata import (
    annotate,
    arg_info,
    kernel_sizes,
    mark_nontemporal,
    param_facts,
    param_info,
)

# ---- dope vectors ------------------------------------------------------------------------------


# The dope vectors are plain classes, not dataclasses: a dataclass's generated __init__ runs
# interpreted even in the compiled module (about 0.7 us), and the conversion makes one per
# memref value and one per coopmatrix vector.


class MemrefDV:
    def __init__(self, ty: MemrefType, ptr: int, shape: list[int], stride: list[int]) -> None:
        self.ty = ty
        self.ptr = ptr
        self.shape = shape
        self.stride = stride


class GroupDV:
    def __init__(
        self,
        ty: GroupType,
        ptr: int,
        shape: list[int | None],  # pointer to an i64 array for dynamic modes
        stride: list[int | None],
        size: int,
        offset: int | None,  # None: static 0
    ) -> None:
        self.ty = ty
        self.ptr = ptr
        self.shape = shape
        self.stride = stride
        self.size = size
        self.offset = offset


class CoopVector:
    """A coopmatrix value defined as one vector of its work-item components. `comps` are its
    component ids where they exist without code (constants) or dominate every use (the
    components an insert started from). Not changed once made."""

    def __init__(self, vec: int, comps: list[int] | None = None) -> None:
        self.vec = vec
        self.comps = comps


HandlerRows = tuple[tuple[type[Inst], bool, str], ...]
"""A mixin's handlers: (instruction class, coopmatrix result only, name of the method). The
method converts instructions of the class and of its subclasses (unless a subclass has a handler
of its own); coopmatrix-only handlers are tried before the others for instructions with a
coopmatrix result (component-wise versions)."""

Handlers = dict[tuple[type, bool], str]


def handler_table(*mixins: HandlerRows) -> Handlers:
    """(instruction class, coopmatrix-only) -> method name, from the HANDLERS rows of the mixins
    (base first: a subclass may override a method, not give a class to a second method)."""
    names: Handlers = {}
    for rows in mixins:
        for cls, coop, attr in rows:
            key = (cls, coop)
            if names.get(key, attr) != attr:
                raise TypeError(f"{cls.__name__}: two handlers, {names[key]} and {attr}")
            names[key] = attr
    return names


def not_implemented(inst: Inst, what: str = "") -> CompilationError:
    detail = what or f"SPIR-V conversion of '{inst.name}' is not implemented yet"
    return inst.error(Status.not_implemented, detail)


Handler = Callable[["ConverterBase", Inst], None]
"""A handler method as its class holds it (called with the converter and the instruction)."""

_HANDLERS: dict[tuple[type, type, bool], Handler | None] = {}
"""(converter class, instruction class, coopmatrix result) -> its handler method, taken from the
converter class (None: none): the same for every converter of a class, so the MRO is searched
once per process, and a converter binds no method (getattr of each handler on each new
converter cost about 0.5 us per instruction class, per compile)."""


class ConverterBase:
    """State shared by the conversion mixins: the module, the current function and block, and
    the map from IR values to SPIR-V ids or dope vectors.

    Each mixin lists its conversion methods in its module's HANDLERS rows, and the converter
    combines them (`handler_names`, handler_table); an instruction goes to the handler of the first class along its class's MRO that has one (so `AtomicLoadInst`
    finds its own handler before `LoadInst`'s, whatever the order of the definitions), and the
    choice is remembered per class."""

    def __init__(self, core_info: CoreInfo) -> None:
        self.core_info = core_info
        self.mod = Module()
        self.ocl = 0
        self.kernels: list[KernelInfo] = []
        # instruction class -> handler, found once per class: for instructions without and
        # with a coopmatrix result (two maps keyed by the class alone, so that dispatching an
        # instruction builds no key)
        self._dispatch: dict[type, Handler] = {}
        self._coop_dispatch: dict[type, Handler] = {}
        self._type_ids: dict[Type, int] = {}  # see ty()
        self._c64: dict[int, int] = {}  # value -> i64 constant

    # ---- types ----------------------------------------------------------------------------------
    # The conversion asks for the same few types and i64 constants for nearly every instruction
    # it emits; their ids are remembered here per IR type (types are unique per context) and
    # per value. The module makes each type or constant at the first request, as before.

    def ty(self, ty: Type, inst: Inst | None = None) -> int:
        """SPIR-V type of a scalar value (bool, number)."""
        r = self._type_ids.get(ty)
        if r is None:
            r = self._type_ids[ty] = self._scalar_type(ty, inst)
        return r

    def _scalar_type(self, ty: Type, inst: Inst | None) -> int:
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
        return self.ty(self.ctx.f32)

    def i64(self) -> int:
        return self.ty(self.ctx.i64)

    def i32(self) -> int:
        return self.ty(self.ctx.i32)

    def c64(self, value: int) -> int:
        r = self._c64.get(value)
        if r is None:
            r = self._c64[value] = self.mod.constant(self.i64(), value)
        return r

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
        self.prog = prog
        self.ctx = prog.ctx
        self.global_vars: dict[str, int] = {}  # global name -> its module-scope variable
        for func in prog.funcs:
            self.function(func)
        return self.mod

    def function(self, func: Func) -> None:
        sgs, wgs = kernel_sizes(func, self.core_info)
        self.sgs, self.wgs = sgs, wgs
        self._layouts: dict[CoopmatrixType, CoopLayout] = {}  # see layout_of()
        self.values: dict[Value, object] = {}
        # (coopmatrix value, block label, vector form?) -> ids made by cm()/cm_vec() there
        self._cm_forms: dict[tuple[Value, int, bool], object] = {}
        self.interface: dict[int, None] = {}
        self.func = func
        self.stack = 0  # the function's local-memory (SLM) array (MemoryConversion.declare_stack)
        # the roots (analysis/memory.py) of the memrefs stored into nontemporal
        self.nontemporal_roots: set[Value] = set()
        info = KernelInfo(func.name, wgs, sgs, bounds_checks=func.bounds_checks)
        # the launch facts (written parameters, grid use) go into the metadata as it is made;
        # the conversion does not change the IR they are read from
        self.facts = kernel_interface(func)
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
        self.declare_stack()
        self.region(func.body)
        self.before_return()
        mark_nontemporal(info, func, self.nontemporal_roots)
        self.block.emit(Op.Return)
        m.add_entry_point(fn.id, func.name, list(self.interface))
        m.add_execution_mode(fn.id, ExecutionMode.LocalSize, wgs[0], wgs[1], 1)
        m.add_execution_mode(fn.id, ExecutionMode.SubgroupSize, sgs)
        annotate(info, self.facts)
        self.kernels.append(info)

    def before_return(self) -> None:
        """Emits what the kernel's end needs after all of its code (the fence after
        nontemporal stores, spirv/convert/coopmatrix_memory.py); nothing here."""

    def declare_stack(self) -> None:
        """Declare the function's local memory, if it needs any (see MemoryConversion)."""

    def parameter(self, k: int, p: Value, info: KernelInfo):
        """SPIR-V parameter types of IR parameter k and a function binding the ids to `p`."""
        ty = p.type
        first = len(info.args)
        if isinstance(ty, MemrefType):
            types = [self.memref_ptr_ty(ty)]
            info.args.append(arg_info("memref", k))
            dyn_shape = [i for i, s in enumerate(ty.shape) if s == DYNAMIC]
            dyn_stride = [i for i, s in enumerate(ty.stride) if s == DYNAMIC]
            info.args += [arg_info("shape", k, i) for i in dyn_shape]
            info.args += [arg_info("stride", k, i) for i in dyn_stride]
            types += [self.i64()] * (len(dyn_shape) + len(dyn_stride))
            local = ty.addrspace is AddressSpace.local
            name, text, written, alignment = param_facts(
                self.func, k, self.facts, self.core_info, not local
            )
            info.params.append(
                param_info(
                    "memref",
                    ty.element.kind.text,
                    first,
                    len(types),
                    ty.shape,
                    ty.stride,
                    local=local,
                    name=name,
                    type=text,
                    written=written,
                    alignment=alignment,
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
        info.args.append(arg_info("scalar", k))
        name, text, written, alignment = param_facts(
            self.func, k, self.facts, self.core_info, False
        )
        info.params.append(
            param_info(
                "scalar",
                text,
                first,
                1,
                name=name,
                type=text,
                written=written,
                alignment=alignment,
            )
        )

        def bind_scalar(ids: list[int]) -> None:
            self.values[p] = ids[0]

        return types, bind_scalar

    def group_parameter(self, k: int, p: Value, ty: GroupType, info: KernelInfo):
        mt = ty.memref
        first = len(info.args)
        types = [self.group_ptr_ty(ty)]
        info.args.append(arg_info("group", k))
        dyn_shape = [i for i, s in enumerate(mt.shape) if s == DYNAMIC]
        dyn_stride = [i for i, s in enumerate(mt.stride) if s == DYNAMIC]
        info.args += [arg_info("group_shape", k, i) for i in dyn_shape]
        info.args += [arg_info("group_stride", k, i) for i in dyn_stride]
        types += [self.i64_array_ptr_ty()] * (len(dyn_shape) + len(dyn_stride))
        if ty.size == DYNAMIC:
            info.args.append(arg_info("group_size", k))
            types.append(self.i64())
        if ty.offset == DYNAMIC:
            info.args.append(arg_info("group_offset", k))
            types.append(self.i64())
        name, text, written, alignment = param_facts(self.func, k, self.facts, self.core_info, True)
        info.params.append(
            param_info(
                "group",
                mt.element.kind.text,
                first,
                len(types),
                mt.shape,
                mt.stride,
                ty.size,
                ty.offset,
                name=name,
                type=text,
                written=written,
                alignment=alignment,
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

    def region(self, region: Region) -> list[int | list[int]]:
        """Convert the instructions of `region`; return the ids its yield passes on (as
        any_val gives them)."""
        for inst in region.insts:
            if isinstance(inst, YieldInst):
                return [self.any_val(v, inst) for v in inst.operand_list("yielded_vals")]
            self.inst(inst)
        return []

    def inst(self, inst: Inst) -> None:
        results = inst.results
        coop = bool(results) and isinstance(results[0].type, CoopmatrixType)
        table = self._coop_dispatch if coop else self._dispatch
        cls = type(inst)
        handler = table.get(cls)
        if handler is None:
            found = self._find_handler(cls, coop)
            if found is None:
                raise not_implemented(inst)
            handler = table[cls] = found
        handler(self, inst)

    def handler_names(self) -> Handlers:
        """The converter's handler table (handler_table of its mixins' HANDLERS)."""
        return {}

    def _find_handler(self, cls: type, coop: bool) -> Handler | None:
        """The handler of instructions of class `cls` (None: it has none)."""
        key = (type(self), cls, coop)
        if key in _HANDLERS:
            return _HANDLERS[key]
        name = self._handler_name(cls, coop)
        found = _HANDLERS[key] = getattr(type(self), name) if name is not None else None
        return found

    def _handler_name(self, cls: type, coop: bool) -> str | None:
        """The name of the handler method of `cls` along its MRO (None: it has none)."""
        names = self.handler_names()
        mro = cls.__mro__
        # a coopmatrix result: the component-wise handlers first (arith, cast, constant)
        for want_coop in (True, False) if coop else (False,):
            for klass in mro:
                name = names.get((klass, want_coop))
                if name is not None:
                    return name
        return None

    def val(self, v: Value, inst: Inst) -> int:
        r = self.values.get(v)
        if isinstance(r, int):
            return r
        raise CompilationError(inst.loc, Status.spirv_undefined_value, f"undefined value {v}", [v])

    # ---- coopmatrix values (§B3.1) --------------------------------------------------------------
    # A coopmatrix value is held as its work-item components (a list of scalar ids, the form
    # arithmetic works on) or as one vector of them (a CoopVector: phi results, constants,
    # inserts), and converted between the two forms where needed: components are extracted from a
    # vector, or a vector is constructed from components, at most once per value and block (a
    # conversion made in a block serves the rest of that block; other blocks need not be
    # dominated by it).

    def cm_vector_type(self, ct: CoopmatrixType, inst: Inst) -> int:
        """The SPIR-V vector type of a coopmatrix that is held as a vector at control-flow
        boundaries: V in 2, 3, 4, 8, 16 components of a real type; 0 for the others (one scalar
        per component everywhere)."""
        n = self.layout_of(ct, inst).V
        if n not in VECTOR_LENGTHS or ct.component.is_complex:
            return 0
        return self.mod.type_vector(self.ty(ct.component), n)

    def cm(self, v: Value, inst: Inst) -> list[int]:
        """The component ids of coopmatrix `v`."""
        r = self.values.get(v)
        if isinstance(r, list):
            return r
        if not isinstance(r, CoopVector):
            raise CompilationError(
                inst.loc, Status.spirv_undefined_value, f"undefined value {v}", [v]
            )
        if r.comps is not None:
            return r.comps
        key = (v, self.block.label, False)
        comps = self._cm_forms.get(key)
        if comps is None:
            ct, blk = as_coopmatrix(v.type), self.block
            comp = self.ty(ct.component)
            n = self.layout_of(ct, inst).V
            comps = [blk.op(Op.CompositeExtract, comp, r.vec, k) for k in range(n)]
            self._cm_forms[key] = comps
        return comps

    def cm_extracted(self, v: Value) -> list[int] | None:
        """The components of CoopVector `v` if they are at hand in the current block."""
        r = self.values.get(v)
        if isinstance(r, CoopVector) and r.comps is None:
            return self._cm_forms.get((v, self.block.label, False))
        return None

    def cm_vec(self, v: Value, inst: Inst) -> int:
        """The vector id of coopmatrix `v` (its type must have a cm_vector_type)."""
        r = self.values.get(v)
        if isinstance(r, CoopVector):
            return r.vec
        key = (v, self.block.label, True)
        vec = self._cm_forms.get(key)
        if vec is None:
            vty = self.cm_vector_type(v.type, inst)
            vec = self._cm_forms[key] = self.block.op(Op.CompositeConstruct, vty, *self.cm(v, inst))
        return vec

    def any_val(self, v: Value, inst: Inst) -> int | list[int]:
        """What a yield passes to a phi: a scalar's id, a coopmatrix's vector id (if it has a
        vector type) or its component ids."""
        if not isinstance(v.type, CoopmatrixType):
            return self.val(v, inst)
        if self.cm_vector_type(v.type, inst):
            return self.cm_vec(v, inst)
        return self.cm(v, inst)

    def layout_of(self, ct: CoopmatrixType, inst: Inst) -> CoopLayout:
        """The layout of `ct` at the function's subgroup size; asked for per instruction, so
        remembered per type (types are unique per context) for the function."""
        lay = self._layouts.get(ct)
        if lay is None:
            found = coop_layout(ct, self.sgs)
            if found is None:
                raise inst.error(
                    Status.ir_unsupported_coopmatrix_shape,
                    f"{ct}: the number of rows must be a power of two",
                )
            lay = self._layouts[ct] = found
        return lay

    def fresh_ids(self, ty: Type, inst: Inst) -> int | list[int] | CoopVector:
        """Ids allocated ahead of their definition (loop-carried values)."""
        if isinstance(ty, CoopmatrixType):
            if self.cm_vector_type(ty, inst):
                return CoopVector(self.mod.new_id())
            return [self.mod.new_id() for _ in range(self.layout_of(ty, inst).V)]
        return self.mod.new_id()

    def phi(
        self,
        block: Block,
        ty: Type,
        inst: Inst,
        incoming: list[tuple[int | list[int], int]],
        result: int | list[int] | CoopVector = 0,
    ) -> int | list[int] | CoopVector:
        """OpPhi of (value, label) pairs (values as any_val gives them); for a coopmatrix one
        OpPhi of its vector type, or one per component if it has none."""
        if not isinstance(ty, CoopmatrixType):
            ops = [x for val, label in incoming for x in (val, label)]
            return block.op(Op.Phi, self.ty(ty, inst), *ops, result_id=result)
        vty = self.cm_vector_type(ty, inst)
        if vty:
            ops = [x for val, label in incoming for x in (val, label)]
            rid = result.vec if isinstance(result, CoopVector) else 0
            return CoopVector(block.op(Op.Phi, vty, *ops, result_id=rid))
        comp = self.ty(ty.component)
        n = self.layout_of(ty, inst).V
        ids = result if isinstance(result, list) else [0] * n
        return [
            block.op(
                Op.Phi,
                comp,
                *[x for vals, label in incoming for x in (vals[k], label)],
                result_id=ids[k],
            )
            for k in range(n)
        ]

    def dv(self, v: Value, inst: Inst):
        r = self.values.get(v)
        if isinstance(r, (MemrefDV, GroupDV)):
            return r
        raise CompilationError(
            inst.loc, Status.spirv_missing_dope_vector, f"no dope vector for {v}", [v]
        )

    def require(self, inst: Inst, feature, capability: int, extension: str = "") -> None:
        """Declare `capability` (and `extension`) for an instruction whose SPIR-V form needs a
        core-info feature the converter can only tell at the emission point (e.g. float atomics
        depend on the pointer's storage class); a missing feature is a located error."""
        if not self.core_info.have_spirv_feature(feature):
            raise inst.error(
                Status.spirv_required_feature_unavailable,
                f"'{inst.name}' needs the SPIR-V feature {feature.name}, which the target lacks",
            )
        self.mod.add_capability(capability)
        if extension:
            self.mod.add_extension(extension)

    def set(self, inst: Inst, rid: object) -> None:
        self.values[inst.results[0]] = rid
