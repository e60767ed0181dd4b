"""Compiler driver: IR program -> validated SPIR-V binary plus kernel metadata.

`compile_to_spirv(prog, core_info)` runs the default pass pipeline (passes/pipeline.py; it
changes `prog` in place), converts every function (spirv/convert/), declares the
capabilities and extensions the module uses (spirv/capex.py), checks them against the core
info's SPIR-V features, assembles the module and runs spirv-val on the result when the
compiler's self-checks are asked for (self_checks.py: TINYTC_VALIDATE=1, which the test suite
sets) and in bounds-checked mode: an invalid module is a compiler bug, and the validator, like
LLVM's IR verifier, is a debugging aid that costs 10-20 % of a cold compile.
The result is a `Binary` (binary.py); the kernel cache below answers repeated compilations.
Every step runs with the cyclic garbage collector paused (gc_pause.py says why).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from . import corpus, kernel_cache, self_checks
from .binary import Binary, KernelInfo
from .errors import CompilationError, Status, TinytcError
from .gc_pause import paused_gc
from .ir.context import CompilerContext
from .ir.dismantle import dismantle_prog
from .ir.extensions import check_globals_enabled
from .ir.region import Prog
from .kernel_cache.keys import settings
from .passes.pipeline import run_default_pipeline
from .spirv.assembler import assemble
from .spirv.capex import capex, check_features
from .spirv.convert import convert_prog
from .spirv.module import Module
from .spirv.validate import SpirvValidationError, validate
from .target.core_info import CoreFeature, CoreInfo


@dataclass
class CompiledModule:
    """A converted, not yet assembled SPIR-V module (the C API's tinytc_spv_mod_t) with the
    kernels' metadata and the core features its binary will carry."""

    module: Module
    kernels: list[KernelInfo]
    core_features: CoreFeature


_NO_FEATURES = CoreFeature(0)
"""Made once: making an IntFlag value runs the enum module's Python code (about 2 µs)."""


def compile_to_module(
    prog: Prog, core_info: CoreInfo | None = None, parsed: bool = False
) -> CompiledModule:
    """Run the pipeline on `prog` (in place), convert it and declare capabilities; errors are
    reported through the program's context and raised. `parsed`: `prog` is a parse nothing
    has changed since (passes/pipeline.py skips verifying it again)."""
    info = core_info if core_info is not None else CoreInfo.default()
    with paused_gc():
        return _to_module(prog, info, parsed)


def _to_module(prog: Prog, info: CoreInfo, parsed: bool) -> CompiledModule:
    """`compile_to_module` under the caller's pause of the collector (`_compile` holds one
    pause for the whole compile: entering and leaving one costs a few microseconds of
    interpreted code, a percent of a small program's compile)."""
    corpus.record(lambda: _printed(prog), info, prog.ctx)
    try:
        check_globals_enabled(prog)
    except CompilationError as err:
        raise prog.ctx.report(err) from None
    run_default_pipeline(prog, info, parsed)
    try:
        module, kernels = convert_prog(prog, info)
        capex(module)
        check_features(module, info, prog.loc)
    except CompilationError as err:
        raise prog.ctx.report(err) from None
    features = CoreFeature.large_register_file if info.large_register_file else _NO_FEATURES
    return CompiledModule(module, kernels, features)


def _printed(prog: Prog) -> str:
    from .text.printer import print_prog

    return print_prog(prog)


def assemble_module(compiled: CompiledModule) -> Binary:
    """Assemble, and validate when the self-checks are asked for or in bounds-checked mode: an
    invalid module is a compiler bug, reported as one."""
    with paused_gc():
        return _assembled(compiled)


def _assembled(compiled: CompiledModule) -> Binary:
    """`assemble_module` under the caller's pause of the collector (`_to_module` says why)."""
    data = assemble(compiled.module)
    if self_checks.requested() or any(k.bounds_checks is not None for k in compiled.kernels):
        try:
            validate(data)
        except SpirvValidationError as e:
            raise TinytcError(
                Status.internal_compiler_error,
                f"generated SPIR-V is invalid (compiler bug):\n{e}",
            ) from e
    return Binary(data, {k.name: k for k in compiled.kernels}, compiled.core_features)


def compile_to_spirv(prog: Prog, core_info: CoreInfo | None = None) -> Binary:
    """Compile `prog` for `core_info` (default: PVC); raises CompilationError (rendered with
    the program's sources) or TinytcError. The kernel cache (keyed by the printed program)
    answers when it is on; then `prog` stays as it is instead of going through the passes."""
    info = core_info if core_info is not None else CoreInfo.default()
    corpus.record(lambda: _printed(prog), info, prog.ctx)
    return kernel_cache.spirv_binary(
        lambda: _printed(prog), info, prog.ctx, lambda: _compile(lambda: prog, info)
    )


def binary_of(source: str | Prog | Binary, core_info: CoreInfo) -> Binary:
    """What the runtimes' `program(...)` accepts: tensor-language text or a program is
    compiled for `core_info`, a binary is taken as it is. Text is looked up in the kernel
    cache by itself, so a hit skips the parser too."""
    if isinstance(source, Binary):
        return source
    if isinstance(source, Prog):
        return compile_to_spirv(source, core_info)
    return compile_text(
        source, core_info, _defaults(), lambda: _parsed(source), owned=True, parsed=True
    )


def compile_text(
    text: str,
    core_info: CoreInfo,
    ctx: CompilerContext,
    make_prog: Callable[[], Prog],
    parsing: tuple | None = None,
    owned: bool = False,
    parsed: bool = False,
) -> Binary:
    """The binary of source `text` under the settings of `ctx`, looked up in the kernel cache
    before anything is parsed; on a miss, `make_prog()` parses it and the program is compiled.
    `parsing` (from `text_parsing`) says how `make_prog` reads the text: its name (in the
    messages of bounds-checked kernels), dialect and the settings it is parsed under; None
    means no name, the "auto" dialect and the settings of `ctx`. `owned`: the program
    `make_prog()` returns is held by nobody else once made (parsed for this compile, or taken
    from its C API handle, capi/parsed.py), so it is dismantled after the compile. `parsed`:
    `make_prog()` returns the parse as the parser returned it, unchanged, so the pipeline may
    rely on the parser's verification; a caller that edits the parse leaves it False."""
    if parsing is not None and parsing[:2] == ("", "auto") and parsing[2] == settings(ctx):
        parsing = None  # the same key as without
    corpus.record(lambda: text, core_info, ctx)
    # the kernel cache extends the compile's pause of the collector over a miss's bookkeeping
    # (kernel_cache._stored, _uncached): the scan that the compile's allocations start comes
    # after the call with the cache on or off, and no lock wait or lookup is paused
    return kernel_cache.text_binary(
        text, core_info, ctx, lambda: _compile(make_prog, core_info, owned, parsed), parsing
    )


def text_parsing(
    name: str = "", dialect: str = "auto", ctx: CompilerContext | None = None
) -> tuple:
    """How a text is read (`compile_text`'s `parsing`): its name, its dialect and the
    settings of the context it is parsed into (default: a new one)."""
    return (name, dialect, settings(ctx or _defaults()))


@functools.cache
def _defaults() -> CompilerContext:
    """A context of the default settings, only read: the settings part of a key."""
    return CompilerContext()


def _parsed(text: str) -> Prog:
    from .text.dialect import parse

    return parse(text, CompilerContext())


def _compile(
    make_prog: Callable[[], Prog], info: CoreInfo, owned: bool = False, parsed: bool = False
) -> Binary:
    """`make_prog()` (a parse, or the program at hand) compiled to a validated binary, all
    under one garbage-collector pause. An `owned` program (parsed for this compile, held by
    nobody else) is dismantled afterwards, so that reference counting frees it before the
    collector's next scan (ir/dismantle.py). `parsed`: `make_prog()` returns a parse unchanged
    since (compile_text's contract: a C API handle's program while it keeps its text)."""
    with paused_gc():
        prog = make_prog()
        compiled = _to_module(prog, info, parsed)
        binary = _assembled(compiled)
        # the module's functions and blocks point back at it: dropped, it is a tree that
        # reference counting frees now instead of a web of cycles left for the collector
        compiled.module.functions.clear()
        if owned:
            dismantle_prog(prog)
        return binary


__all__ = [
    "CompiledModule",
    "assemble_module",
    "binary_of",
    "compile_to_module",
    "compile_text",
    "compile_to_spirv",
    "text_parsing",
]
