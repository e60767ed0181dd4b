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
the collector (a quarter of a cold compile of a small program went to those scans). The handle
keeps its text, and its program is parsed again when it is needed, so it stays the parse of
the text, as after a compile that the kernel cache answered.

A text that parsed before in the process under the same context settings parses again: such a
handle is made without parsing (the program behind it stays empty, the source is registered
in the context as a parse registers it) and is parsed when the program is first needed, under
the settings of the parse call. At most `KNOWN_TEXTS` texts are remembered.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from ..binary import Binary
from ..compiler import compile_text, compile_to_spirv, text_parsing
from ..errors import CompilationError, Status
from ..ir.context import CompilerContext
from ..ir.region import Prog
from ..kernel_cache.keys import FLAGS, settings
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
    the context. `put_off`: the program behind the handle is empty, to be parsed when needed."""

    text: str
    parsing: tuple
    source_id: int
    put_off: bool

    def settle(self, entry: Entry) -> None:
        """The program may change from here on: parse it now if that was put off, and let
        the handle forget the text."""
        if self.put_off:
            table.replace(entry, self._parse(entry.obj.ctx))
        entry.source = None

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
        now = settings(ctx)
        changed = now[1:] != parsed_with[1:]
        if changed:
            _set_flags(ctx, parsed_with)
        try:
            return parse(self.text, ctx, name, source_id=self.source_id)
        finally:
            if changed:
                _set_flags(ctx, now)


def _set_flags(ctx: CompilerContext, states: tuple) -> None:
    """The flags of `states` (keys.settings) set in `ctx`."""
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
    """The SPIR-V binary of the program of a prog handle: by its text while it has one (on a
    miss, a parse of the text is compiled and dismantled, `ParsedSource.take`), else by the
    program, compiled in place."""
    source: ParsedSource | None = entry.source
    if source is None:
        return compile_to_spirv(entry.obj, info)
    return compile_text(
        source.text, info, entry.obj.ctx, lambda: source.take(entry), source.parsing, owned=True
    )
