"""The character scanners of text/lexer.py against the regular expressions of the tensor
language's tokens that they implement, on every short string over the characters that matter
and on random longer ones; and the cursor's keyword rule."""

from __future__ import annotations

import itertools
import random
import re

import pytest

from tinytc_py.text import lexer as lx

# The token grammar as regular expressions (tensor-language reference).
BLANKS = re.compile(r"(?:[ \t\r\n]+|;[^\n]*)*")
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*|[0-9]+")  # after %, @ or $
INTEGER = re.compile(r"[+-]?[0-9]+(?![0-9.eExX])")
MNEMONIC = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
DIGITS = re.compile(r"[0-9]*")

ALPHABET = "aZ_09.eExX+- \t\n;%é"


def _strings() -> list[str]:
    short = ["".join(t) for n in range(4) for t in itertools.product(ALPHABET, repeat=n)]
    rng = random.Random(29)
    return short + ["".join(rng.choices(ALPHABET, k=rng.randint(4, 12))) for _ in range(1000)]


STRINGS = _strings()


def _end(pattern: re.Pattern[str], text: str, pos: int) -> int:
    m = pattern.match(text, pos)
    return m.end() if m else pos


@pytest.mark.parametrize(
    ("scan", "pattern"),
    [
        (lx.word_end, WORD),
        (lx.name_end, NAME),
        (lx.integer_end, INTEGER),
        (lx.mnemonic_end, MNEMONIC),
        (lx.digits_end, DIGITS),
    ],
    ids=["word", "name", "integer", "mnemonic", "digits"],
)
def test_scanners_end_where_the_token_expressions_end(scan, pattern) -> None:
    for text in STRINGS:
        for pos in range(min(2, len(text) + 1)):
            assert scan(text, pos) == _end(pattern, text, pos), (text, pos)


def test_skip_passes_blanks_and_comments_as_their_expression() -> None:
    for text in STRINGS:
        c = lx.Cursor(text)
        assert c.skip() == _end(BLANKS, text, 0), text
        assert c.at_end() == (c.pos == len(text))


def test_a_keyword_must_not_run_into_an_identifier_character() -> None:
    c = lx.Cursor("init(%a) inits inité in_ in")
    assert c.accept("init") and c.accept("(")
    assert c.name("%") == "a" and c.accept(")")
    assert not c.accept("init") and not c.accept("in")  # "inits"
    c.pos += len("inits")
    assert not c.accept("init")  # a letter beyond ASCII continues the word too
    c.pos += len("inité")
    assert not c.accept("in") and c.peek("in")  # "in_"
    c.pos += len("in_")
    assert c.accept("in") and c.at_end()


def test_names_after_their_sigil() -> None:
    c = lx.Cursor("%12ab @f_1 $x %_y")
    assert c.name("%") == "12" and c.word() == "ab"
    assert c.name("%") is None and c.name("@") == "f_1"
    assert c.name("$") == "x"
    assert c.name("%") is None and c.pos == len("%12ab @f_1 $x ")  # `%_y` is no name


@pytest.mark.parametrize(
    ("text", "pos", "end"),
    [
        ("memref<f32x4>", 0, 13),
        ("(memref<f32x4x?>, i32)", 1, 16),
        ("memref<f32x4x4, strided<1, 4>>", 0, 30),
        ("memref<f32x4, strided<1, strided<2>>>", 0, -1),  # nested twice
        ("memref<f32x$n>", 0, -1),  # a preprocessor variable: its scope's value
        ("memref<f32x4 ; comment\n>", 0, -1),
        ("memref<f32x4\n>", 0, -1),
        ("memref<f32x4", 0, -1),  # unclosed
        ("group<memref<f32>>", 0, -1),
        ("x memref<f32>", 0, -1),
    ],
)
def test_memref_spelling_end(text: str, pos: int, end: int):
    assert lx.memref_spelling_end(text, pos) == end
