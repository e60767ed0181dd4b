"""Which language a source is written in: the current tensor language or the legacy one (tinytc
v0.3, with the transitional forms code generators such as yateto emit).

Auto-detection never changes the meaning of a current-language program: the current parser
reads every source first, and only a source it rejects is read as legacy text. When both fail,
the current language's error is reported, with a hint when the source looks legacy.

`parse` and `parse_file`, the front end's entry points, are here: this module sits on top of
both parsers (parser.py, legacy_parser.py), so neither imports it.
"""

from __future__ import annotations

import re

from ..errors import CompilationError
from ..gc_pause import paused_gc
from ..ir.context import CompilerContext
from ..ir.enums import OptFlag
from ..ir.region import Prog
from .legacy_parser import LegacyParser
from .parser import Parser

DIALECTS = ("auto", "current", "legacy")

LEGACY_HINT = "this looks like the legacy language: use --legacy or tinytc-upgrade"

# Spellings that only the legacy language (or its transitional forms) has.
_LEGACY_MARKERS = re.compile(
    r"\b(?:arith|cmp)\.[a-z]+\b"
    r"|\bgroup_size\b(?!\s*=)"
    r"|\bhadamard_product\b"
    r"|\balloca\s*->"
    r"|=\s*group_id\s*(?:$|;|%|\})"
    r"|\bgroup<\s*memref<[^<>]*(?:<[^<>]*>)?[^<>]*>\s*(?:,\s*offset\s*:\s*[0-9?]+\s*)?>"
    r"|\b(?:work_group_size|subgroup_size)\s*\("
    r"|\bfor\s+%\w+\s*=\s*[-+]?[0-9]"
    r"|:\s*[a-z0-9]+\s*->\s*[a-z0-9]+\b",
    re.MULTILINE,
)


def looks_legacy(text: str) -> bool:
    """True when the source uses a spelling only the legacy language has."""
    return _LEGACY_MARKERS.search(text) is not None


def check_dialect(dialect: str) -> None:
    """Raises ValueError for a dialect name that is not one of DIALECTS."""
    if dialect not in DIALECTS:
        raise ValueError(f"unknown dialect '{dialect}' (choose from {', '.join(DIALECTS)})")


def resolve(dialect: str, ctx: CompilerContext) -> str:
    check_dialect(dialect)
    if dialect == "auto" and ctx.optimization_flag(OptFlag.legacy_language):
        return "legacy"
    return dialect


def parse_dialect(
    text: str, ctx: CompilerContext, name: str, dialect: str, source_id: int = 0
) -> Prog:
    """Parses in the given dialect; raises CompilationError without reporting it.
    `source_id`: the text's id when it is registered in `ctx` already."""
    dialect = resolve(dialect, ctx)
    if dialect == "legacy":
        return LegacyParser(ctx, text, name, source_id).parse_prog()
    parser = Parser(ctx, text, name, source_id)
    try:
        prog = parser.parse_prog()
        # verified as it was read (placement and yields per region, the rest by finish_func,
        # definitions before use by the parser's scopes); the legacy parser adds instructions
        # of its own making on the way, so its programs are not marked
        prog.verified_by_parser = True
        return prog
    except CompilationError as err:
        if dialect == "current":
            raise
        try:
            return LegacyParser(ctx, text, name, parser.c.source_id).parse_prog()
        except CompilationError:
            if looks_legacy(text):
                err.hint = LEGACY_HINT
            raise err from None


def parse(
    text: str,
    ctx: CompilerContext | None = None,
    name: str = "",
    dialect: str = "auto",
    source_id: int = 0,
) -> Prog:
    """Parses a program; errors are reported through the context and raised.

    `dialect` is "current", "legacy" (the v0.3 language) or "auto": the
    current language, and the legacy one for a source that is not current-language text (the
    compiler-context flag `legacy_language` makes "auto" mean "legacy"). `source_id`: the
    text's id when it is registered in `ctx` already (else it is registered here).

    The cyclic garbage collector is paused meanwhile (gc_pause.py says why)."""
    ctx = ctx or CompilerContext()
    with paused_gc():
        try:
            return parse_dialect(text, ctx, name, dialect, source_id)
        except CompilationError as err:
            raise ctx.report(err) from None


def parse_file(path: str, ctx: CompilerContext | None = None, dialect: str = "auto") -> Prog:
    with open(path, encoding="utf-8") as f:
        return parse(f.read(), ctx, path, dialect)
