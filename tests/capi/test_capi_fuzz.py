"""C API fuzzing through the shared library: tests/capi/c/fuzz.c makes thousands of random
calls with random and invalid arguments in a child process, so that a crash (a signal) is seen
as a failure rather than taking the test run down; every call must return a known status."""

from __future__ import annotations

import re

import pytest


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_and_invalid_calls_return_status_codes(compile_c, seed):
    prog = compile_c("fuzz.c", name="fuzz")
    result = prog.run(str(seed), "3000", check=False)
    assert result.returncode == 0, f"exit {result.returncode} (negative: signal)\n{result.stderr}"
    calls, successes = map(int, re.search(r"calls=(\d+) successes=(\d+)", result.stdout).groups())
    assert calls >= 3000
    assert 0 < successes < calls  # both valid and rejected calls were made
