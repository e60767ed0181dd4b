"""Property-based fuzzing of the text front ends, current and legacy (bounded; `make fuzz` runs
10^6 inputs): mutated lit programs and arbitrary text either parse, print and parse back to the
same text, or are rejected with a CompilationError located in the source; nothing else
escapes."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .frontend import TOKENS, check, corpus, mutate

FAST = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))


@FAST
@given(st.randoms(use_true_random=False), st.integers(min_value=0))
def test_mutated_lit_programs(rng, index):
    pieces = corpus()
    check(mutate(pieces[index % len(pieces)], rng))


@FAST
@given(st.randoms(use_true_random=False), st.integers(min_value=0))
def test_mutated_programs_in_the_legacy_front_end(rng, index):
    pieces = corpus("legacy")
    check(mutate(pieces[index % len(pieces)], rng), "legacy")


@FAST
@given(st.text(max_size=200))
def test_arbitrary_text(text):
    check(text)


@FAST
@given(st.lists(st.sampled_from(TOKENS), max_size=40))
def test_token_soup(tokens):
    check(" ".join(tokens))


def test_corpus_has_the_lit_programs():
    assert len(corpus()) > 200
    assert len(corpus("legacy")) > 20
