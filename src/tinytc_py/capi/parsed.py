"""Programs the C API parsed from text: compiling one again is a kernel-cache lookup by its
text, without parsing, printing or hashing the program.

A prog handle made by `tinytc_parse_*` remembers its text (a `ParsedSource` on its handle
entry) for as long as its program is the parse of that text. Compiling it then goes to the
kernel cache's source-text memo (kernel_cache.text_binary): a program compiled before in the
process costs two dictionary lookups. The handle forgets the text as soon as its program may
change: when any call takes the program from the handle table (`HandleTable.get`: the
builder's add-function and add-global, passes, dumps, kernel bundles).

A compile that misses takes the handle's parse for itself (or parses the text again when the
handle holds none) and dismantles it once the binary is made (ir/dismantle.py), as for a text
compiled from Python: the program is freed by reference counting before the collector's next
scan, instead of living, one web of cycles, until the handle is released and then waiting for
the collector (a quarter of a cold compile of a small program went to those scans).

The C API says that a compile runs the default pipeline on the program, in place. So the handle
records the compile (a copy of the core info and the context's optimisation level and flags
at the call), also when the kernel cache answered it, and when its program is asked for (a
dump, a pass, a second compile...) it is materialized: the text parsed again and the pipeline
run on it as the recorded compile ran it, which is deterministic, so the caller sees the
program a compile in place leaves. A compile of a handle that went through one materializes
first and compiles the lowered program in place, so at most one compile is recorded. A compile
that fails records nothing: the handle keeps the parse of its text.

A text that parsed before in the process under the same context settings parses again: such a
handle is made without parsing (the program behind it stays empty, the source is registered
in the context as a parse registers it) and is parsed when the program is first needed, under
the settings of the parse call. At most `KNOWN_TEXTS` texts are remembered.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ..binary import Binary
from ..compiler import compile_text, compile_to_spirv, text_parsing
from ..errors import CompilationError, Status
from ..gc_pause import paused_gc
from ..ir.context import CompilerContext
from ..ir.region import Prog
from ..kernel_cache.keys import FLAGS, attributes_copy, settings
from ..passes.pipeline import run_default_pipeline
from ..target.core_info import CoreInfo
from ..text.dialect import parse
from .errors import CApiError
from .handles import Entry, table

KNOWN_TEXTS = 256

_known: OrderedDict[tuple[str, tuple], None] = OrderedDict()
"""(text, settings) of the texts that parsed, the one parsed longest ago first."""


@dataclass(slots=True)
class ParsedSource:
    """The text behind a prog handle, how it is read (compiler.text_parsing: its name, the
    dialect and the context's settings at the parse call) and the id it is registered under in
    the context. `put_off`: the program behind the handle is empty, to be parsed when needed.
    `compiled`: the compile the handle went through (a copy of its core info, the context's
    `keys.settings` at the call), to be run again on the parse when the program is needed."""

    text: str
    parsing: tuple
    source_id: int
    put_off: bool
    compiled: tuple[CoreInfo, tuple] | None = None

    def settle(self, entry: Entry) -> None:
        """The program may change from here on: let the handle forget the text, and
        materialize the program: parse it now if that was put off, and run the default
        pipeline on it as the recorded compile did (a failure there leaves the program as far
        as the pipeline got, as a compile in place does)."""
        entry.source = None
        if self.put_off:
            table.replace(entry, self._parse(entry.obj.ctx))
        if self.compiled is not None:
            info, at_compile = self.compiled
            prog: Prog = entry.obj
            with _settings(prog.ctx, at_compile), paused_gc():
                run_default_pipeline(prog, info)

    def take(self, entry: Entry) -> Prog:
        """The parse of the text, for a compile to own (and dismantle): the handle's, whose
        place an empty program takes (the parse is put off until the program is needed
        again), or a new one when the handle holds none."""
        if self.put_off:
            return self._parse(entry.obj.ctx)
        prog: Prog = entry.obj
        table.replace(entry, Prog(prog.ctx))
        self.put_off = True
        return prog

    def _parse(self, ctx: CompilerContext) -> Prog:
        """The program, parsed under the settings of the parse call (a context flag may have
        changed since)."""
        name, _dialect, parsed_with = self.parsing
        if settings(ctx) == parsed_with:  # nearly always: no setting changed since the parse
            return parse(self.text, ctx, name, source_id=self.source_id)
        with _settings(ctx, parsed_with):
            return parse(self.text, ctx, name, source_id=self.source_id)


@contextmanager
def _settings(ctx: CompilerContext, states: tuple) -> Iterator[None]:
    """`ctx` under the optimisation level and flags of `states` (keys.settings) for the
    block, then back under its own."""
    now = settings(ctx)
    if now == states:
        yield
        return
    _set_settings(ctx, states)
    try:
        yield
    finally:
        _set_settings(ctx, now)


def _set_settings(ctx: CompilerContext, states: tuple) -> None:
    ctx.opt_level = states[0]
    for flag, state in zip(FLAGS, states[1:]):
        ctx.set_optimization_flag(flag, int(state))


def parse_to_handle(text: str, name: str, context: CompilerContext, ctx_addr: int) -> int:
    """A new prog handle (retaining `ctx_addr`) of `text` parsed into `context`; a parse
    error raises CApiError(parse_error) after the context reported it."""
    parsing = text_parsing(name, "auto", context)
    known = (text, parsing[2])
    source_id = context.add_source(name, text)
    put_off = known in _known
    if put_off:
        _known.move_to_end(known)
        prog = Prog(context)
    else:
        try:
            prog = parse(text, context, name, source_id=source_id)
        except CompilationError as err:
            raise CApiError(Status.parse_error, str(err)) from None
        _known[known] = None
        if len(_known) > KNOWN_TEXTS:
            _known.popitem(last=False)
    handle = table.new_shared("prog", prog, (ctx_addr,))
    entry = table.by_addr[handle]
    entry.source = ParsedSource(text, parsing, source_id, put_off)
    entry.sole = True
    return handle


def binary_of_handle(entry: Entry, info: CoreInfo) -> Binary:
    """The SPIR-V binary of the program of a prog handle. While the handle has its text and
    went through no compile, by its text (on a miss, a parse of the text is compiled and
    dismantled, `ParsedSource.take`), and the compile is recorded; else by the program
    (materialized first, `ParsedSource.settle`), compiled in place."""
    source: ParsedSource | None = entry.source
    if source is not None and source.compiled is not None:
        source.settle(entry)
        source = None
    if source is None:
        return compile_to_spirv(entry.obj, info)
    ctx = entry.obj.ctx
    binary = compile_text(
        source.text, info, ctx, lambda: source.take(entry), source.parsing, owned=True, parsed=True
    )
    source.compiled = (_snapshot(info), settings(ctx))
    return binary


_last_snapshot: tuple[weakref.ref[CoreInfo], CoreInfo] | None = None
"""The core info the last compile was for and its snapshot (`_snapshot`)."""


def _snapshot(info: CoreInfo) -> CoreInfo:
    """A copy of `info` that changes to `info` after the compile leave alone. Snapshots are
    only read, so compiles for the same core info, unchanged since the last one, share its
    snapshot: a host compiles with one core info again and again, and comparing its
    attributes costs a tenth of copying them."""
    global _last_snapshot
    last = _last_snapshot
    if last is not None and last[0]() is info and last[1].__dict__ == info.__dict__:
        return last[1]
    snapshot = CoreInfo.__new__(CoreInfo)
    snapshot.__dict__.update(attributes_copy(info))
    _last_snapshot = (weakref.ref(info), snapshot)
    return snapshot
