"""A compile of a C API program parsed from text skips re-verifying the parse only while the
handle holds the parse unchanged (capi/parsed.py: any call that takes the program from the
handle table, as a pass or the builder's add-function, forgets the text): a program changed
after the parse gets the check-ir error, located, through the context's reporter
(tests/capi/c/verify_after_parse.c)."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("mode", ["build", "pass"], ids=["added-function", "pass-then-added"])
def test_a_parse_changed_through_the_c_api_is_verified_again(compile_c, mode) -> None:
    out = compile_c("verify_after_parse.c").run(mode).stdout
    assert out.splitlines() == [
        "10.9-30: Last instruction of region that returns values must be yield"
        " (region must end with a yield of (f32))",
        "ok",
    ]
