"""Rewrite a SPIR-V module compiled for an Intel GPU into one the CPU OpenCL runtime runs.

Every OpAsmINTEL (SPV_INTEL_inline_assembly) becomes a function in portable SPIR-V that does
what its vISA text says (codegen.py), and each OpAsmCallINTEL a call of it; the asm
declarations, their decorations and names, the AsmINTEL capability and the extension go. The
kernels' arguments, execution modes (subgroup size, work-group size) and everything else stay
as they are, so a host launches the result exactly like the original. The other GPU
extensions the project's GPU code uses (SPV_INTEL_subgroups block reads and writes, the Groups
capability) are ones the CPU runtime implements and are kept; anything the emulator cannot
translate is an `UnsupportedConstruct` naming it, never a silently different kernel.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass

from ..errors import Status, TinytcError
from ..spirv.assembler import assemble
from ..spirv.module import Module, iter_instructions
from ..spirv.tables import (
    HAS_RESULT_TYPE,
    BuiltIn,
    Capability,
    Decoration,
    ExecutionMode,
    Op,
    StorageClass,
)
from ..spirv.validate import SpirvValidationError, validate
from .blockio import block_io_function
from .codegen import GRF, Emitter, RegisterFile, Signature, register_file
from .reader import literal_string, read_module
from .visa import Program, UnsupportedConstruct, parse

ASM_EXTENSION = "SPV_INTEL_inline_assembly"
#: Extensions whose instructions the CPU OpenCL runtime executes itself (cl_intel_subgroups,
#: cl_intel_bfloat16_conversions, cl_ext_float_atomics).
KEPT_EXTENSIONS = frozenset(
    {
        "SPV_INTEL_subgroups",
        "SPV_INTEL_bfloat16_conversion",
        "SPV_EXT_shader_atomic_float_add",
        "SPV_EXT_shader_atomic_float_min_max",
        "SPV_EXT_shader_atomic_float16_add",
    }
)
DEVICES = ("pvc", "bmg")
#: A kernel keeps one register file per subgroup in Workgroup memory if they take at most this
#: many bytes together and fit beside the kernel's own local memory, else a copy per work-item
#: in Function memory (every lane then runs the instructions).
SHARED_REGISTER_BUDGET = 64 * 1024
#: The local memory of the CPU device (CL_DEVICE_LOCAL_MEM_SIZE; 32 KiB is OpenCL's minimum),
#: assumed where the caller does not name the device.
LOCAL_MEMORY = 256 * 1024
#: The largest register file a work-item keeps a private copy of (the CPU runtime's private
#: memory is the work-item's stack).
PRIVATE_REGISTER_LIMIT = 64 * 1024


def emulate_spirv(binary: bytes, device: str = "pvc", local_memory: int = LOCAL_MEMORY) -> bytes:
    """The emulated module of `binary`, a SPIR-V module compiled for `device` ("pvc" or
    "bmg"; the instructions are the same, the kernels' subgroup sizes must be the device's),
    for a device with `local_memory` bytes of local memory per work-group."""
    if device not in DEVICES:
        raise TinytcError(Status.invalid_arguments, f"tinytc-emulate: unknown device {device!r}")
    mod = read_module(binary)
    _check_subgroup_sizes(mod, device)
    unknown = [e for e in mod.extensions if e != ASM_EXTENSION and e not in KEPT_EXTENSIONS]
    if unknown:
        raise UnsupportedConstruct(f"SPIR-V extension {unknown[0]}")
    asms, targets = _asm_declarations(mod)
    ops = {op for f in mod.functions for op, _, _ in iter_instructions(f.code)}
    if not asms and not ops & (
        {Op.SubgroupBlockReadINTEL, Op.SubgroupBlockWriteINTEL} | _ATOMIC_MOVES
    ):
        return binary  # nothing GPU-only (multi-index extracts come with asm results only)
    sgs = _subgroup_sizes(mod)
    ctx = _Context(mod, asms, _type_table(mod), sgs, local_memory)
    ctx.lane = _builtin_variable(mod, BuiltIn.SubgroupLocalInvocationId)
    for function in list(mod.functions):  # not the emulation functions added on the way
        function.code = _rewrite_function(ctx, function)
    _drop(mod, set(asms) | targets)
    data = assemble(mod)
    try:
        validate(data)
    except SpirvValidationError as e:
        try:
            validate(binary)
        except SpirvValidationError as bad:
            raise TinytcError(
                Status.invalid_arguments, f"tinytc-emulate: the input is invalid SPIR-V:\n{bad}"
            ) from bad
        raise TinytcError(
            Status.internal_compiler_error, f"tinytc-emulate produced invalid SPIR-V (bug):\n{e}"
        ) from e
    return data


class _Context:
    """The module being rewritten and what its functions share: the asm declarations, the
    type table, the kernels' subgroup sizes, the device's local memory, the lane and subgroup
    id inputs, each asm's parsed program and register files, and the emulation functions made
    so far (by key)."""

    def __init__(self, mod: Module, asms, types, sgs: dict[int, int], local_memory: int):
        self.mod, self.asms, self.types, self.sgs = mod, asms, types, sgs
        self.local_memory = local_memory
        self.lane = self._subgroup = 0
        self.made: dict[tuple[object, ...], int] = {}
        self.programs: dict[int, Program] = {}
        self.files: dict[tuple[int, int], RegisterFile] = {}  # (asm, subgroup size) ->
        self.local = _local_sizes(mod)

    @property
    def subgroup(self) -> int:
        """The SubgroupId input (declared when a kernel first needs it)."""
        if not self._subgroup:
            self._subgroup = _builtin_variable(self.mod, BuiltIn.SubgroupId)
        return self._subgroup

    def signature(self, asm: int) -> Signature:
        ret, fty, _, constraints = self.asms[asm]
        params = tuple(_function_params(self.mod, fty))
        return Signature(ret, params, tuple(c.strip() for c in constraints.split(",")))

    def program(self, asm: int) -> Program:
        if asm not in self.programs:
            self.programs[asm] = parse(self.asms[asm][2])
        return self.programs[asm]

    def file(self, asm: int, sgs: int) -> RegisterFile:
        key = (asm, sgs)
        if key not in self.files:
            self.files[key] = register_file(self.mod, self.program(asm), self.signature(asm), sgs)
        return self.files[key]


@dataclass(frozen=True)
class _Images:
    """Where a kernel keeps the register files of its asm calls: a Workgroup array of one
    file of `stride` bytes per subgroup, or (`private`) a Function array of `stride` bytes
    per work-item."""

    var: int
    stride: int
    private: bool


def _kernel_images(ctx: _Context, function, sgs: int) -> _Images | None:
    """The register-file storage of `function` sized by its own asm calls (None without
    any): shared while its work-group's files fit SHARED_REGISTER_BUDGET and, beside the
    kernel's own Workgroup variables, the device's local memory; else private (at most
    PRIVATE_REGISTER_LIMIT bytes per work-item)."""
    mod, code = ctx.mod, function.code
    called = {code[off + 3] for op, off, _ in iter_instructions(code) if op == Op.AsmCallINTEL}
    if not called:
        return None
    if function.id not in _entry_ids(mod):
        raise UnsupportedConstruct("inline assembly outside a kernel function")
    if function.id not in ctx.local:
        raise UnsupportedConstruct("inline assembly in a kernel without a fixed work-group size")
    stride = max(ctx.file(asm, sgs).size for asm in called)
    x, y, z = ctx.local[function.id]
    subgroups = -(-x // sgs) * y * z
    own = _workgroup_bytes(mod, code)
    if subgroups * stride <= min(SHARED_REGISTER_BUDGET, ctx.local_memory - own):
        arr = mod.type_array(mod.type_int(8), subgroups * stride)
        var = mod.variable(mod.type_pointer(StorageClass.Workgroup, arr), StorageClass.Workgroup)
        mod.decorate(var, Decoration.Alignment, GRF)
        _add_to_interfaces(mod, var, function.id)
        return _Images(var, stride, False)
    if stride > PRIVATE_REGISTER_LIMIT:
        raise UnsupportedConstruct(
            f"inline assembly in kernel {_entry_name(mod, function.id)!r}: its register file"
            f" of {stride} bytes exceeds the {PRIVATE_REGISTER_LIMIT} bytes a work-item keeps"
            f" a copy of, and its work-group's {subgroups} files do not fit in local memory"
        )
    return _Images(mod.new_id(), stride, True)  # the OpVariable goes into the entry block


def _workgroup_bytes(mod: Module, code: array) -> int:
    """The bytes of the module's Workgroup variables that `code` uses (the kernel's own local
    memory)."""
    g = mod.globals
    used = {w for _, off, n in iter_instructions(code) for w in code[off + 1 : off + n]}
    pointee = {
        g[off + 1]: g[off + 3] for op, off, _ in iter_instructions(g) if op == Op.TypePointer
    }
    sizes = _type_sizes(g)
    return sum(
        sizes.get(pointee.get(g[off + 1], 0), 0)
        for op, off, _ in iter_instructions(g)
        if op == Op.Variable and g[off + 3] == StorageClass.Workgroup and g[off + 2] in used
    )


def _type_sizes(g: array) -> dict[int, int]:
    """The size in bytes of every scalar, vector, array and struct type of the globals `g`
    (vectors of 3 take the room of 4, as in OpenCL)."""
    sizes: dict[int, int] = {}
    consts: dict[int, int] = {}
    for op, off, n in iter_instructions(g):
        if op in (Op.TypeInt, Op.TypeFloat):
            sizes[g[off + 1]] = g[off + 2] // 8
        elif op == Op.Constant and n >= 4:
            consts[g[off + 2]] = g[off + 3] | (g[off + 4] << 32 if n > 4 else 0)
        elif op == Op.TypeVector:
            sizes[g[off + 1]] = sizes.get(g[off + 2], 0) * (4 if g[off + 3] == 3 else g[off + 3])
        elif op == Op.TypeArray:
            sizes[g[off + 1]] = sizes.get(g[off + 2], 0) * consts.get(g[off + 3], 0)
        elif op == Op.TypeStruct:
            sizes[g[off + 1]] = sum(sizes.get(m, 0) for m in g[off + 2 : off + n])
    return sizes


def _rewrite_function(ctx: _Context, function) -> array:
    """The code of `function` with asm calls and non-32-bit block IO turned into calls of
    emulation functions (an asm call gets its register file first)."""
    mod, types, made = ctx.mod, ctx.types, ctx.made
    sgs = ctx.sgs.get(function.id) or _only(ctx.sgs)
    code = function.code
    images = _kernel_images(ctx, function, sgs)
    value_types = {
        code[off + 2]: code[off + 1]
        for op, off, _ in iter_instructions(code)
        if op in HAS_RESULT_TYPE
    }
    value_types.update(types["values"])
    i64 = mod.type_int(64)
    out = array("I")
    first_label = _first_label(code) if images is not None and images.private else -1
    for op, off, n in iter_instructions(code):
        inst = code[off : off + n]
        if op == Op.Label and images is not None and images.private and off == first_label:
            out.extend(inst)
            arr = mod.type_array(i64, images.stride // 8)  # 8-byte aligned
            ptr = mod.type_pointer(StorageClass.Function, arr)
            inst = array("I", [4 << 16 | Op.Variable, ptr, images.var, StorageClass.Function])
        elif op == Op.AsmCallINTEL:
            assert images is not None
            asm = inst[3]
            key: tuple[object, ...] = ("asm", asm, sgs, images.private)
            if key not in made:
                made[key] = Emitter(
                    mod,
                    ctx.program(asm),
                    ctx.signature(asm),
                    ctx.file(asm, sgs),
                    sgs,
                    ctx.lane,
                    images.private,
                ).build()
            sc = StorageClass.Function if images.private else StorageClass.Workgroup
            p_u8 = mod.type_pointer(sc, mod.type_int(8))
            base, regfile = mod.new_id(), mod.new_id()
            out.extend([4 << 16 | Op.Bitcast, p_u8, base, images.var])
            if images.private:
                regfile = base
            else:
                sg32, sg, start = mod.new_id(), mod.new_id(), mod.new_id()
                out.extend([4 << 16 | Op.Load, mod.type_int(32), sg32, ctx.subgroup])
                out.extend([4 << 16 | Op.UConvert, i64, sg, sg32])
                out.extend([5 << 16 | Op.IMul, i64, start, sg, mod.constant(i64, images.stride)])
                out.extend([5 << 16 | Op.InBoundsPtrAccessChain, p_u8, regfile, base, start])
            inst = array("I", [(n + 1) << 16 | Op.FunctionCall, *inst[1:3], made[key], regfile])
            inst.extend(code[off + 4 : off + n])
        elif op in _ATOMIC_MOVES:
            inst = _atomic_bits(mod, op, inst, value_types, types)
        elif op == Op.CompositeExtract and n > 5:
            inst = _split_extract(mod, inst, value_types[inst[3]], types)
        elif op in (Op.SubgroupBlockReadINTEL, Op.SubgroupBlockWriteINTEL):
            write = op == Op.SubgroupBlockWriteINTEL
            ptr = inst[1] if write else inst[3]
            data_ty = value_types[inst[2]] if write else inst[1]
            ptr_ty = value_types[ptr]
            comp_ty, count = types["vectors"].get(data_ty, (data_ty, 1))
            width = types["ints"].get(comp_ty)
            if width is None:
                raise UnsupportedConstruct(f"subgroup block IO of type %{data_ty}")
            if width != 32:
                key = ("block", write, ptr_ty, data_ty, sgs)
                if key not in made:
                    made[key] = block_io_function(
                        mod, write, ptr_ty, data_ty, comp_ty, count, width // 8, sgs, ctx.lane
                    )
                if write:
                    inst = array(
                        "I",
                        [
                            6 << 16 | Op.FunctionCall,
                            mod.type_void(),
                            mod.new_id(),
                            made[key],
                            ptr,
                            inst[2],
                        ],
                    )
                else:
                    inst = array("I", [5 << 16 | Op.FunctionCall, inst[1], inst[2], made[key], ptr])
        out.extend(inst)
    return out


_ATOMIC_MOVES = frozenset({Op.AtomicLoad, Op.AtomicStore, Op.AtomicExchange})


def _atomic_bits(mod: Module, op: int, inst: array, value_types, types) -> array:
    """An atomic load, store or exchange of a float as one of its bits: the CPU runtime has no
    64-bit float atomic exchange (`atomic_xchg(double)` is missing at link time), which the
    GPU code uses where the CPU code moves bits."""
    ty = value_types[inst[4]] if op == Op.AtomicStore else inst[1]
    width = types["floats"].get(ty)
    if width is None:
        return inst
    ptr = inst[1] if op == Op.AtomicStore else inst[3]
    storage = types["pointers"][value_types[ptr]]
    ity = mod.type_int(width)
    if width == 64:
        mod.add_capability(Capability.Int64Atomics)
    out = array("I")

    def add(opcode: int, *words: int) -> None:
        out.extend([(len(words) + 1) << 16 | opcode, *words])

    iptr = mod.new_id()
    add(Op.Bitcast, mod.type_pointer(storage, ity), iptr, ptr)
    if op == Op.AtomicStore:
        ival = mod.new_id()
        add(Op.Bitcast, ity, ival, inst[4])
        add(Op.AtomicStore, iptr, inst[2], inst[3], ival)
        return out
    bits = mod.new_id()
    if op == Op.AtomicLoad:
        add(Op.AtomicLoad, ity, bits, iptr, inst[4], inst[5])
    else:
        ival = mod.new_id()
        add(Op.Bitcast, ity, ival, inst[6])
        add(Op.AtomicExchange, ity, bits, iptr, inst[4], inst[5], ival)
    add(Op.Bitcast, inst[1], inst[2], bits)
    return out


def _split_extract(mod: Module, inst: array, ty: int, types: dict[str, dict]) -> array:
    """An OpCompositeExtract with several indices as a chain of one-index extracts: the CPU
    runtime's SPIR-V reader crashes on `OpCompositeExtract %f %s 0 1` into a struct of vectors
    (the DPAS path returns such structs from its asm)."""
    out = array("I")
    value = inst[3]
    indices = list(inst[4:])
    for k, index in enumerate(indices):
        if k == len(indices) - 1:
            ty, result = inst[1], inst[2]
        else:
            members = types["composites"].get(ty)
            if members is None:
                raise UnsupportedConstruct(f"composite extract from type %{ty}")
            ty, result = members(index), mod.new_id()
        out.extend([5 << 16 | Op.CompositeExtract, ty, result, value, index])
        value = result
    return out


def _type_table(mod: Module) -> dict[str, dict]:
    """Integer widths, vector shapes, composite member types and the types of global values,
    by id."""
    g = mod.globals
    ints, floats, pointers, vectors, values, composites = {}, {}, {}, {}, {}, {}
    for op, off, n in iter_instructions(g):
        if op == Op.TypeInt:
            ints[g[off + 1]] = g[off + 2]
        elif op == Op.TypeFloat:
            floats[g[off + 1]] = g[off + 2]
        elif op == Op.TypePointer:
            pointers[g[off + 1]] = g[off + 2]
        elif op == Op.TypeVector:
            vectors[g[off + 1]] = (g[off + 2], g[off + 3])
            composites[g[off + 1]] = lambda i, c=g[off + 2]: c
        elif op == Op.TypeArray:
            composites[g[off + 1]] = lambda i, c=g[off + 2]: c
        elif op == Op.TypeStruct:
            composites[g[off + 1]] = lambda i, ms=tuple(g[off + 2 : off + n]): ms[i]
        elif op in HAS_RESULT_TYPE:
            values[g[off + 2]] = g[off + 1]
    return {
        "ints": ints,
        "floats": floats,
        "pointers": pointers,
        "vectors": vectors,
        "values": values,
        "composites": composites,
    }


def _asm_declarations(mod: Module) -> tuple[dict[int, tuple[int, int, str, str]], set[int]]:
    g = mod.globals
    asms, targets = {}, set()
    for op, off, _ in iter_instructions(g):
        if op == Op.AsmTargetINTEL:
            targets.add(g[off + 1])
        elif op == Op.AsmINTEL:
            text = literal_string(g, off + 5)
            after = off + 5 + len(text.encode()) // 4 + 1
            asms[g[off + 2]] = (g[off + 1], g[off + 3], text, literal_string(g, after))
    return asms, targets


def _function_params(mod: Module, fty: int) -> list[int]:
    g = mod.globals
    for op, off, n in iter_instructions(g):
        if op == Op.TypeFunction and g[off + 1] == fty:
            return list(g[off + 3 : off + n])
    raise UnsupportedConstruct(f"inline assembly of unknown function type %{fty}")


def _subgroup_sizes(mod: Module) -> dict[int, int]:
    em = mod.execution_modes
    return {
        em[off + 1]: em[off + 3]
        for op, off, _ in iter_instructions(em)
        if op == Op.ExecutionMode and em[off + 2] == ExecutionMode.SubgroupSize
    }


def _check_subgroup_sizes(mod: Module, device: str) -> None:
    from ..target.core_info import CoreInfo, IntelGpuArchitecture

    allowed = CoreInfo.intel_from_arch(IntelGpuArchitecture[device]).subgroup_sizes
    for size in _subgroup_sizes(mod).values():
        if size not in allowed:
            raise TinytcError(
                Status.invalid_arguments,
                f"tinytc-emulate: a kernel has subgroup size {size}, which {device} does not"
                f" have ({', '.join(map(str, allowed))}): not a {device} binary",
            )


def _only(sgs: dict[int, int]) -> int:
    sizes = set(sgs.values())
    if len(sizes) != 1:
        raise UnsupportedConstruct("inline assembly in a function without one subgroup size")
    return sizes.pop()


def _builtin_variable(mod: Module, builtin: int) -> int:
    """The input variable of `builtin` (an i32), declared if needed and listed by every entry
    point (an interface may name more variables than the entry point uses)."""
    an = mod.annotations
    var = next(
        (
            an[off + 1]
            for op, off, n in iter_instructions(an)
            if op == Op.Decorate
            and n == 4
            and an[off + 2] == Decoration.BuiltIn
            and an[off + 3] == builtin
        ),
        0,
    )
    if not var:
        var = mod.builtin(builtin, mod.type_pointer(StorageClass.Input, mod.type_int(32)))
    _add_to_interfaces(mod, var)
    return var


def _entry_name(mod: Module, function: int) -> str:
    ep = mod.entry_points
    return next(
        literal_string(ep, off + 3)
        for _, off, _ in iter_instructions(ep)
        if ep[off + 2] == function
    )


def _entry_ids(mod: Module) -> set[int]:
    ep = mod.entry_points
    return {ep[off + 2] for _, off, _ in iter_instructions(ep)}


def _add_to_interfaces(mod: Module, var: int, entry: int = 0) -> None:
    """List `var` in the interface of every entry point (or of `entry` only)."""
    ep = mod.entry_points
    out = array("I")
    for _, off, n in iter_instructions(ep):
        inst = list(ep[off : off + n])
        name_words = len(literal_string(ep, off + 3).encode()) // 4 + 1
        if (not entry or inst[2] == entry) and var not in inst[3 + name_words :]:
            inst.append(var)
        inst[0] = (len(inst) << 16) | Op.EntryPoint
        out.extend(inst)
    mod.entry_points = out


def _local_sizes(mod: Module) -> dict[int, tuple[int, int, int]]:
    em = mod.execution_modes
    return {
        em[off + 1]: (em[off + 3], em[off + 4], em[off + 5])
        for op, off, _ in iter_instructions(em)
        if op == Op.ExecutionMode and em[off + 2] == ExecutionMode.LocalSize
    }


def _first_label(code: array) -> int:
    return next(off for op, off, _ in iter_instructions(code) if op == Op.Label)


def _drop(mod: Module, ids: set[int]) -> None:
    """Remove the asm declarations and whatever names or decorates them."""

    def keep(section: array, test) -> array:
        out = array("I")
        for op, off, n in iter_instructions(section):
            if test(op, section[off : off + n]):
                out.extend(section[off : off + n])
        return out

    mod.globals = keep(mod.globals, lambda op, inst: op not in (Op.AsmINTEL, Op.AsmTargetINTEL))
    mod.annotations = keep(mod.annotations, lambda op, inst: inst[1] not in ids)
    mod.debug = keep(mod.debug, lambda op, inst: op != Op.Name or inst[1] not in ids)
    mod.capabilities.pop(Capability.AsmINTEL, None)
    mod.extensions.pop(ASM_EXTENSION, None)
    for cap in (Capability.Int8, Capability.Int16, Capability.Int64, Capability.Float16):
        mod.add_capability(cap)


__all__ = ["DEVICES", "emulate_spirv"]
