"""The core C API (capi/api/core.toml) over the Python compiler: reference counting of the shared
objects, compiler context (sources, error reporter, optimization settings), parser, programs,
compilation to SPIR-V modules and binaries, core info and the pass list, and the message of a
bounds-checked kernel's report record.

The enum `*_to_string`, the fp16/bf16 helpers and `tinytc_string_destroy` are C code inside the
library (capi/native.c, capi/_generated_native.c); they never enter Python.
"""

from __future__ import annotations

import inspect
import os
import sys
from dataclasses import dataclass, field
from typing import Any

from ..binary import Binary
from ..bounds_record import RECORD_LENGTH, report_message
from ..compiler import CompiledModule, assemble_module, compile_to_module
from ..errors import CompilationError, Location, Status, TinytcError, format_located
from ..ir.context import CompilerContext
from ..ir.enums import OptFlag
from ..ir.region import Prog
from ..passes.registry import PASSES
from ..spirv.dump import dump
from ..target.core_info import CoreFeature, CoreInfo, SpirvFeature
from ..text.printer import print_prog
from .errors import invalid
from .handles import (
    SHARED,
    addr,
    c_location,
    c_string,
    location,
    need,
    out,
    state,
    table,
    text,
)
from .parsed import binary_of_handle, parse_to_handle
from .registry import export, register

BUNDLE_FORMATS = {0: "spirv", 1: "native"}


@dataclass
class SpvMod:
    """A compiled but not yet assembled SPIR-V module with what its binary will need."""

    compiled: CompiledModule
    ctx: CompilerContext


@dataclass
class BinaryObj:
    """A tinytc_binary_t: the bytes, their format and the compiled kernels' metadata."""

    binary: Binary
    ctx: CompilerContext
    keep: list[Any] = field(default_factory=list)


def _write_stderr(data: str) -> None:
    raw = data.encode()
    while raw:
        raw = raw[os.write(2, raw) :]


# ---- reference counting of every shared kind ---------------------------------------------------


def _refcounting(kind: str) -> None:
    def retain(p: Any) -> None:
        a = addr(p)
        table.entry_of(kind, a)  # checks the handle
        table.retain_addr(a)

    def release(p: Any) -> None:
        a = addr(p)
        table.entry_of(kind, a)
        table.release_addr(a)

    register(f"tinytc_{kind}_retain", retain)
    register(f"tinytc_{kind}_release", release)


for _kind in SHARED:
    _refcounting(_kind)


# ---- compiler context ---------------------------------------------------------------------------


def _ctx(p: Any) -> CompilerContext:
    return table.get("compiler_context", p)


@export
def tinytc_compiler_context_create(ctx: Any) -> None:
    need(ctx)
    out(ctx, table.new_shared("compiler_context", CompilerContext()))


@export
def tinytc_compiler_context_add_source(ctx: Any, name: Any, source: Any, source_id: Any) -> None:
    need(source_id)
    context = _ctx(ctx)
    source_id[0] = context.add_source(text(name), text(source))


@export
def tinytc_compiler_context_set_error_reporter(ctx: Any, reporter: Any, user_data: Any) -> None:
    context = _ctx(ctx)
    if reporter == state.ffi.NULL:
        context.reporter = None
        return
    ffi = state.ffi

    def report(message: str, loc: Location) -> None:
        reporter(ffi.new("char[]", message.encode()), c_location(loc), user_data)

    context.reporter = report


@export
def tinytc_compiler_context_set_optimization_flag(ctx: Any, flag: int, state_: int) -> None:
    context = _ctx(ctx)
    try:
        opt = OptFlag(flag)
    except ValueError:
        invalid(f"unknown optimization flag {flag}")
    context.set_optimization_flag(opt, state_)


@export
def tinytc_compiler_context_set_optimization_level(ctx: Any, level: int) -> None:
    _ctx(ctx).opt_level = max(0, min(2, level))


@export
def tinytc_compiler_context_report_error(ctx: Any, loc: Any, what: Any) -> None:
    context = _ctx(ctx)
    message = format_located(context, location(loc), text(what)).rstrip("\n")
    if context.reporter is not None:
        context.reporter(message, location(loc))


# ---- parser ---------------------------------------------------------------------------------------


def _parse(prg: Any, source: str, name: str, ctx: Any) -> None:
    """Parses into a new prog that retains `ctx` (or owns a fresh context when ctx is NULL)."""
    need(prg)
    if ctx == state.ffi.NULL:
        context = CompilerContext()
        ctx_addr = table.new_shared("compiler_context", context)
    else:
        context = _ctx(ctx)
        ctx_addr = table.context_handle(context)
        table.retain_addr(ctx_addr)
    try:
        out(prg, parse_to_handle(source, name, context, ctx_addr))
    finally:
        table.release_addr(ctx_addr)


@export
def tinytc_parse_string(prg: Any, source_size: int, source: Any, ctx: Any) -> None:
    need(source)
    if source_size == 0:
        invalid("empty source")
    raw = state.ffi.buffer(source, source_size)[:].rstrip(b"\0")
    _parse(prg, raw.decode("utf-8", errors="replace"), "<memory>", ctx)


@export
def tinytc_parse_file(prg: Any, filename: Any, ctx: Any) -> None:
    need(prg)
    path = text(filename)
    with open(path, encoding="utf-8", errors="replace") as f:
        source = f.read()
    _parse(prg, source, path, ctx)


@export
def tinytc_parse_stdin(prg: Any, ctx: Any) -> None:
    need(prg)
    chunks = []
    while chunk := os.read(0, 1 << 16):
        chunks.append(chunk)
    _parse(prg, b"".join(chunks).decode("utf-8", errors="replace"), "<stdin>", ctx)


# ---- program --------------------------------------------------------------------------------------


def _prog(p: Any) -> Prog:
    return table.get("prog", p)


@export
def tinytc_prog_get_compiler_context(prg: Any, ctx: Any) -> None:
    need(ctx)
    out(ctx, table.entry("prog", prg).refs[0])


@export
def tinytc_prog_dump(prg: Any) -> None:
    _write_stderr(print_prog(_prog(prg)))


@export
def tinytc_prog_print_to_file(prg: Any, filename: Any) -> None:
    source = print_prog(_prog(prg))
    with open(text(filename), "w", encoding="utf-8") as f:
        f.write(source)


@export
def tinytc_prog_print_to_string(prg: Any, str_: Any) -> None:
    need(str_)
    str_[0] = c_string(print_prog(_prog(prg)))


# ---- compiler -------------------------------------------------------------------------------------

_pass_names: list[Any] = []


@export
def tinytc_list_function_passes(names_size: Any, names: Any) -> None:
    need(names_size, names)
    if not _pass_names:
        strings = [state.ffi.new("char[]", n.encode()) for n in PASSES]
        _pass_names.extend(strings)
        _pass_names.append(state.ffi.new("char *[]", strings))
    names_size[0] = len(_pass_names) - 1
    names[0] = _pass_names[-1]


def _make_pass(name: str, prog: Prog, core_info: CoreInfo | None):
    """The pass `name`, given what its constructor asks for: the core info (when the caller
    passed one) and the context's unsafe-fp-math setting."""
    cls = PASSES.get(name)
    if cls is None:
        raise TinytcError(Status.unknown_pass_name, f"unknown pass name '{name}'")
    params = inspect.signature(cls).parameters
    kwargs: dict[str, Any] = {}
    if "core_info" in params and core_info is not None:
        kwargs["core_info"] = core_info
    if "unsafe_fp_math" in params:
        kwargs["unsafe_fp_math"] = prog.ctx.optimization_flag(OptFlag.unsafe_fp_math)
    return cls(**kwargs)


@export
def tinytc_run_function_pass(pass_name: Any, prg: Any, info: Any) -> None:
    name = text(pass_name)
    prog = _prog(prg)
    core_info = None if info == state.ffi.NULL else table.get("core_info", info)
    p = _make_pass(name, prog, core_info)
    try:
        for func in prog.funcs:
            p.run(func, prog.ctx, sys.stderr)
    except CompilationError as err:
        raise prog.ctx.report(err) from None
    finally:
        sys.stderr.flush()


def compile_module(prog: Prog, info: CoreInfo) -> SpvMod:
    return SpvMod(compile_to_module(prog, info), prog.ctx)


@export
def tinytc_prog_compile_to_spirv(mod: Any, prg: Any, info: Any) -> None:
    need(mod)
    spv = compile_module(_prog(prg), table.get("core_info", info))
    out(mod, table.new_shared("spv_mod", spv, (table.entry("prog", prg).refs[0],)))


@export
def tinytc_prog_compile_to_spirv_and_assemble(bin_: Any, prg: Any, info: Any) -> None:
    need(bin_)
    entry = table.entry("prog", prg)
    binary = binary_of_handle(entry, table.get("core_info", info))
    obj = BinaryObj(binary, entry.obj.ctx)
    out(bin_, table.new_shared("binary", obj, (entry.refs[0],)))


@export
def tinytc_spirv_assemble(bin_: Any, mod: Any) -> None:
    need(bin_)
    entry = table.entry("spv_mod", mod)
    spv: SpvMod = entry.obj
    binary = assemble_module(spv.compiled)
    out(bin_, table.new_shared("binary", BinaryObj(binary, spv.ctx), (entry.refs[0],)))


# ---- SPIR-V module --------------------------------------------------------------------------------


def _spv_text(mod: Any) -> str:
    return dump(table.get("spv_mod", mod).compiled.module)


@export
def tinytc_spv_mod_dump(mod: Any) -> None:
    _write_stderr(_spv_text(mod))


@export
def tinytc_spv_mod_print_to_file(mod: Any, filename: Any) -> None:
    source = _spv_text(mod)
    with open(text(filename), "w", encoding="utf-8") as f:
        f.write(source)


@export
def tinytc_spv_mod_print_to_string(mod: Any, str_: Any) -> None:
    need(str_)
    str_[0] = c_string(_spv_text(mod))


# ---- binary ---------------------------------------------------------------------------------------


@export
def tinytc_binary_create(
    bin_: Any, ctx: Any, fmt: int, data_size: int, data: Any, core_features: int
) -> None:
    need(bin_, data)
    if fmt not in BUNDLE_FORMATS:
        invalid(f"unknown bundle format {fmt}")
    context = _ctx(ctx)
    raw = state.ffi.buffer(data, data_size)[:]
    binary = Binary(raw, {}, CoreFeature(core_features), BUNDLE_FORMATS[fmt])
    out(
        bin_,
        table.new_shared("binary", BinaryObj(binary, context), (table.context_handle(context),)),
    )


@export
def tinytc_binary_get_compiler_context(bin_: Any, ctx: Any) -> None:
    need(ctx)
    out(ctx, table.entry("binary", bin_).refs[0])


@export
def tinytc_binary_get_bounds_report(bin_: Any, kernel_name: Any, record: Any, message: Any) -> None:
    need(kernel_name, record, message)
    name = text(kernel_name)
    checks = table.get("binary", bin_).binary.kernel(name).bounds_checks
    if checks is None:
        raise TinytcError(
            Status.invalid_arguments, f"kernel {name} was not compiled with bounds checks"
        )
    found = report_message(checks, [record[i] for i in range(RECORD_LENGTH)])
    message[0] = state.ffi.NULL if found is None else c_string(f"kernel {name}: {found}")


@export
def tinytc_binary_get_core_features(bin_: Any, core_features: Any) -> None:
    need(core_features)
    core_features[0] = int(table.get("binary", bin_).binary.core_features)


@export
def tinytc_binary_get_raw(bin_: Any, fmt: Any, data_size: Any, data: Any) -> None:
    need(fmt, data_size, data)
    obj: BinaryObj = table.get("binary", bin_)
    if not obj.keep:  # the bytes themselves (immutable), alive as long as the handle
        obj.keep.append(state.ffi.from_buffer("uint8_t[]", obj.binary.data or b"\0"))
    fmt[0] = 1 if obj.binary.format == "native" else 0
    data_size[0] = len(obj.binary.data)
    data[0] = obj.keep[0]


# ---- core info ------------------------------------------------------------------------------------


def _info(p: Any) -> CoreInfo:
    return table.get("core_info", p)


def _new_info(p: Any, info: CoreInfo) -> None:
    out(p, table.new_shared("core_info", info))


def _subgroup_sizes(count: int, p: Any) -> list[int]:
    """The `int32_t const *sgs` array (non-NULL even when empty, as upstream requires)."""
    need(p)
    return list(state.ffi.unpack(state.ffi.cast("int32_t *", p), count)) if count else []


@export
def tinytc_core_info_generic_create(
    info: Any, register_space: int, max_work_group_size: int, sgs_size: int, sgs: Any
) -> None:
    need(info)
    sizes = _subgroup_sizes(sgs_size, sgs)
    _new_info(info, CoreInfo.generic(register_space, max_work_group_size, sizes))


@export
def tinytc_core_info_intel_create(
    info: Any, ip_version: int, eus: int, threads: int, sgs_size: int, sgs: Any
) -> None:
    need(info)
    sizes = _subgroup_sizes(sgs_size, sgs)
    _new_info(info, CoreInfo.intel(ip_version, eus, threads, sizes))


@export
def tinytc_core_info_intel_create_from_arch(info: Any, arch: int) -> None:
    need(info)
    _new_info(info, CoreInfo.intel_from_arch(arch))


@export
def tinytc_core_info_intel_create_from_name(info: Any, name: Any) -> None:
    need(info)
    _new_info(info, CoreInfo.intel_from_name(text(name)))


@export
def tinytc_core_info_get_core_features(info: Any, flags: Any) -> None:
    need(flags)
    flags[0] = int(_info(info).core_features)


@export
def tinytc_core_info_set_core_features(info: Any, flags: int) -> None:
    _info(info).core_features = CoreFeature(flags)


@export
def tinytc_core_info_get_default_alignment(info: Any, alignment: Any) -> None:
    need(alignment)
    alignment[0] = _info(info).default_alignment


@export
def tinytc_core_info_set_default_alignment(info: Any, alignment: int) -> None:
    if alignment <= 0:
        invalid("alignment must be positive")
    _info(info).default_alignment = alignment


@export
def tinytc_core_info_get_register_space(info: Any, space: Any) -> None:
    need(space)
    space[0] = _info(info).register_space


@export
def tinytc_core_info_get_subgroup_sizes(info: Any, sgs_size: Any, sgs: Any) -> None:
    need(sgs_size, sgs)
    entry = table.entry("core_info", info)
    sizes = list(entry.obj.subgroup_sizes)
    if entry.keep is None or list(entry.keep) != sizes:
        entry.keep = state.ffi.new("int32_t[]", sizes or [0])
    sgs_size[0] = len(sizes)
    sgs[0] = entry.keep


def _feature(feature: int) -> SpirvFeature:
    try:
        return SpirvFeature(feature)
    except ValueError:
        invalid(f"unknown SPIR-V feature {feature}")


@export
def tinytc_core_info_have_spirv_feature(info: Any, feature: int, available: Any) -> None:
    need(available)
    available[0] = 1 if _info(info).have_spirv_feature(_feature(feature)) else 0


@export
def tinytc_core_info_set_spirv_feature(info: Any, feature: int, available: int) -> None:
    _info(info).set_spirv_feature(_feature(feature), bool(available))


__all__ = ["BinaryObj", "SpvMod", "compile_module"]
