"""The printf extension's format strings: escape decoding and the check of conversions against
argument types, so that a mismatch is a located compile error instead of garbage output.

The format is kept in the IR as written in the source (escapes undecoded) so that the printer
reproduces it; `decode` turns `\\n`, `\\t`, `\\\\` and `\\%` ... into the bytes the device sees.
Conversions follow OpenCL C's printf (C99 without `*` widths, `%n` and `%s` of non-literals):
`%[flags][width][.precision][length]conversion` with length hh, h, l and conversions
d i o u x X c (integers), f F e E g G a A (floating numbers) and `%%`.
"""

from __future__ import annotations

import re

from .types import NumberType, ScalarKind, Type

_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", "r": "\r", "a": "\a"}
_CONVERSION = re.compile(
    r"%(?P<flags>[-+ #0]*)(?P<width>[0-9]*)(?:\.(?P<prec>[0-9]*))?(?P<length>hh|h|l)?"
    r"(?P<conv>[diouxXcfFeEgGaA%])?"
)
_INT_CONV = frozenset("diouxXc")
# The integer type each length modifier names (c takes an int, like d without a modifier).
_INT_LENGTH = {
    "hh": (ScalarKind.i8,),
    "h": (ScalarKind.i16,),
    None: (ScalarKind.i32,),
    "l": (ScalarKind.i64, ScalarKind.index),
}


class FormatError(ValueError):
    """A format string that is malformed or does not match the arguments."""


def decode(fmt: str) -> str:
    """The format with its backslash escapes replaced (unknown escapes are errors)."""
    out: list[str] = []
    i = 0
    while i < len(fmt):
        ch = fmt[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = fmt[i + 1 : i + 2]
        if nxt not in _ESCAPES:
            raise FormatError(f"unknown escape sequence '\\{nxt}' in the format")
        out.append(_ESCAPES[nxt])
        i += 2
    return "".join(out)


def conversions(fmt: str) -> list[tuple[str, str | None]]:
    """(conversion character, length modifier) of each argument the format consumes."""
    text = decode(fmt)
    specs: list[tuple[str, str | None]] = []
    pos = 0
    while True:
        pos = text.find("%", pos)
        if pos < 0:
            return specs
        m = _CONVERSION.match(text, pos)
        conv = m.group("conv") if m else None
        if m is None or conv is None:
            spec = text[pos : (m.end() if m else pos + 1) + 1]
            raise FormatError(
                f"'{spec}' at offset {pos} is not a supported conversion "
                "(d i o u x X c f F e E g G a A with length hh, h or l)"
            )
        if conv != "%":
            length = m.group("length")
            if length in ("hh", "h") and conv not in _INT_CONV:
                raise FormatError(f"length modifier '{length}' does not apply to '%{conv}'")
            specs.append((conv, length))
        elif m.end() - pos != 2:
            raise FormatError(f"'%%' takes no flags, width or length (offset {pos})")
        pos = m.end()


def _accepts(conv: str, length: str | None, ty: Type) -> bool:
    if not isinstance(ty, NumberType):
        return False
    if conv in _INT_CONV:
        if conv == "c":
            return length is None and ty.kind in (ScalarKind.i8, ScalarKind.i32)
        return ty.kind in _INT_LENGTH[length]
    return ty.is_float


def expected_type(conv: str, length: str | None) -> str:
    if conv in _INT_CONV:
        if conv == "c":
            return "i8 or i32"
        return " or ".join(k.text for k in _INT_LENGTH[length])
    return "a floating-point type (bf16, f16, f32, f64)"


def check(fmt: str, types: list[Type]) -> None:
    """Raises FormatError when the format is malformed or its conversions and the argument types
    disagree in number or kind (complex and boolean values cannot be printed directly)."""
    specs = conversions(fmt)
    if len(specs) != len(types):
        raise FormatError(
            f"the format has {len(specs)} conversion(s) but {len(types)} argument(s) are given"
        )
    for k, ((conv, length), ty) in enumerate(zip(specs, types)):
        if not _accepts(conv, length, ty):
            spec = "%" + (length or "") + conv
            raise FormatError(
                f"argument {k + 1} has type {ty}, but '{spec}' expects {expected_type(conv, length)}"
            )
