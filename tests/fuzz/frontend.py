"""The front-end fuzz target and its mutation engine, shared by the bounded suite tests
(tests/fuzz/test_fuzz_frontend.py) and the long mode (`make fuzz`, tests/fuzz/long_run.py).

`mutate(text, rng)` applies one, two or four edits to a program of the lit corpus: deleting or
duplicating a span, inserting a token of the language (keywords, punctuation, types, numbers at
the edges of every integer width), replacing a number, swapping lines or splicing in a span of
another corpus file. `check(text)` is the property every input must hold: parsing either
succeeds, and then the printed program parses back to the same text, or raises a
CompilationError located inside the source; nothing else may escape.
"""

from __future__ import annotations

import random
import re
from functools import cache
from pathlib import Path

from tinytc_py.errors import CompilationError, TinytcError
from tinytc_py.text.dialect import parse
from tinytc_py.text.printer import print_prog

LIT = Path(__file__).resolve().parents[1] / "lit"

EDGES = [0, 1, -1, 127, 128, 255, 32767, 65536, 2**31 - 1, 2**31, 2**32, 2**63 - 1, 2**63]
TOKENS = [
    "{", "}", "(", ")", "[", "]", "<", ">", ",", ":", "=", "->", "?", "x", ".t", ".n",
    "%a", "%0", "@k", "$v", "!calc(", "func", "for", "if", "else", "yield", "foreach",
    "parallel", "constant", "subview", "load", "store", "barrier", "alloca", "add", "gemm",
    "f32", "i64", "index", "bool", "c64", "memref<f32x?>", "group<memref<f32>x8>",
    "coopmatrix<f32x8x8,matrix_acc>", "local", "global", "strided<1,?>", "attributes",
    "{a=[1,2]}", "1.0e308", "1e400", "0x1p-1074", "nan", "-inf", '"s"', ";", "\n",
    *(str(e) for e in EDGES), *(str(-e) for e in EDGES),
]  # fmt: skip
NUMBER = re.compile(r"(?<![%@$\w])[0-9]+")


@cache
def corpus(dialect: str = "auto") -> tuple[str, ...]:
    """The functions of the lit programs (with the global definitions before them) that parse
    on their own, without comment lines: small valid inputs, so that an edit leaves many of
    them parseable."""
    pieces = []
    for path in sorted(LIT.rglob("*.ir")):
        lines = path.read_text().splitlines(keepends=True)
        text = "".join(line for line in lines if not line.lstrip().startswith(";"))
        pieces += [p for p in re.split(r"(?m)^(?=func )", text) if p.strip()]
    return tuple(p for p in pieces if check(p, dialect))


def _span(text: str, rng: random.Random) -> tuple[int, int]:
    start = rng.randrange(len(text) + 1)
    return start, min(len(text), start + rng.randint(1, 24))


def _edit(text: str, rng: random.Random) -> str:
    kind = rng.randrange(6)
    start, stop = _span(text, rng)
    if kind == 0:
        return text[:start] + text[stop:]
    if kind == 1:
        return text[:stop] + text[start:stop] + text[stop:]
    if kind == 2:
        return text[:start] + " " + rng.choice(TOKENS) + " " + text[start:]
    if kind == 3:
        numbers = list(NUMBER.finditer(text))
        if numbers:
            m = rng.choice(numbers)
            return text[: m.start()] + str(rng.choice(EDGES)) + text[m.end() :]
        return text
    if kind == 4:
        lines = text.splitlines(keepends=True)
        if len(lines) > 1:
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        return "".join(lines)
    other = rng.choice(corpus())
    ostart, ostop = _span(other, rng)
    return text[:start] + other[ostart : ostop + rng.randint(0, 80)] + text[start:]


def mutate(text: str, rng: random.Random) -> str:
    for _ in range(rng.choice((1, 1, 1, 2, 4))):
        text = _edit(text, rng)
    return text


def check(text: str, dialect: str = "auto") -> bool:
    """The front-end property in `dialect` ("auto" tries the current language, then the legacy
    one); True if the input parsed. Raises AssertionError (or whatever escaped the parser) when
    the property fails. Printed programs are current-language text."""
    try:
        prog = parse(text, name="fuzz.ir", dialect=dialect)
    except CompilationError as err:
        loc = err.loc
        lines = text.count("\n") + 1
        assert 1 <= loc.begin.line <= lines, (err.loc, str(err))
        assert loc.begin.source_id == 1, (err.loc, str(err))
        return False
    printed = print_prog(prog)
    try:
        again = print_prog(parse(printed, name="printed.ir", dialect="current"))
    except TinytcError as err:
        raise AssertionError(f"printed program does not parse:\n{printed}\n{err}") from err
    assert again == printed, f"print/parse round trip differs:\n{printed}\n---\n{again}"
    return True
