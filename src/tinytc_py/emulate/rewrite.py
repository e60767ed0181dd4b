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

from ..errors import Status, TinytcError
from ..spirv.assembler import assemble
from ..spirv.module import Module, emit, iter_instructions
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
from .codegen import GRF, Shared, Signature, emulation_function
from .reader import literal_string, read_module
from .visa import UnsupportedConstruct, parse

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


def emulate_spirv(binary: bytes, device: str = "pvc") -> bytes:
    """The emulated module of `binary`, a SPIR-V module compiled for `device` ("pvc" or
    "bmg"; the instructions are the same, the kernels' subgroup sizes must be the device's)."""
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
    lane = _builtin_variable(mod, BuiltIn.SubgroupLocalInvocationId)
    shared = Shared(lane, 0, mod.new_id(), [])
    if asms:
        shared.subgroup = _builtin_variable(mod, BuiltIn.SubgroupId)
    types = _type_table(mod)
    made: dict[tuple[object, ...], int] = {}
    images: dict[int, int] = {}  # kernel -> its Workgroup array of register files
    for function in list(mod.functions):  # not the emulation functions added on the way
        size = sgs.get(function.id) or _only(sgs)
        function.code = _rewrite_function(mod, function, asms, types, made, size, shared, images)
    if asms:
        _define_images(mod, shared, images, sgs)
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


def _rewrite_function(
    mod, function, asms, types, made, sgs: int, shared: Shared, images: dict[int, int]
) -> array:
    """The code of `function` with asm calls and non-32-bit block IO turned into calls of
    emulation functions (an asm call gets the kernel's register-file array first)."""
    code = function.code
    value_types = {
        code[off + 2]: code[off + 1]
        for op, off, _ in iter_instructions(code)
        if op in HAS_RESULT_TYPE
    }
    value_types.update(types["values"])
    out = array("I")
    for op, off, n in iter_instructions(code):
        inst = code[off : off + n]
        if op == Op.AsmCallINTEL:
            asm = inst[3]
            key: tuple[object, ...] = ("asm", asm, sgs)
            if key not in made:
                ret, fty, text, constraints = asms[asm]
                params = tuple(_function_params(mod, fty))
                sig = Signature(ret, params, tuple(c.strip() for c in constraints.split(",")))
                made[key] = emulation_function(mod, parse(text), sig, sgs, shared)
            if function.id not in images:
                if function.id not in _entry_ids(mod):
                    raise UnsupportedConstruct("inline assembly outside a kernel function")
                images[function.id] = mod.new_id()
                _add_to_interfaces(mod, images[function.id], function.id)
            p_u8 = mod.type_pointer(StorageClass.Workgroup, mod.type_int(8))
            image = mod.new_id()
            out.extend([4 << 16 | Op.Bitcast, p_u8, image, images[function.id]])
            inst = array("I", [(n + 1) << 16 | Op.FunctionCall, *inst[1:3], made[key], image])
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
                        mod, write, ptr_ty, data_ty, comp_ty, count, width // 8, sgs, shared.lane
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


def _define_images(
    mod: Module, shared: Shared, images: dict[int, int], sgs: dict[int, int]
) -> None:
    """Each kernel's Workgroup array of one register file per subgroup of its work-group, and
    their stride, the largest register file of the module."""
    stride = -(-max(shared.sizes, default=GRF) // GRF) * GRF
    i64 = mod.type_int(64)
    emit(mod.globals, Op.Constant, i64, shared.stride, stride & 0xFFFFFFFF, stride >> 32)
    em = mod.execution_modes
    local = {
        em[off + 1]: tuple(em[off + 3 : off + 6])
        for op, off, _ in iter_instructions(em)
        if op == Op.ExecutionMode and em[off + 2] == ExecutionMode.LocalSize
    }
    for kernel, var in images.items():
        if kernel not in local:
            raise UnsupportedConstruct(
                "inline assembly in a kernel without a fixed work-group size"
            )
        x, y, z = local[kernel]
        groups = -(-x // (sgs.get(kernel) or _only(sgs))) * y * z
        arr = mod.type_array(mod.type_int(8), groups * stride)
        ptr = mod.type_pointer(StorageClass.Workgroup, arr)
        emit(mod.globals, Op.Variable, ptr, var, StorageClass.Workgroup)
        mod.decorate(var, Decoration.Alignment, GRF)


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
