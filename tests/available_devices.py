"""The devices `tinytc_py.devices()` finds, for tests that run kernels on whatever device there
is: one definition of "no device here means skip", shared by the API and launch tests."""

from __future__ import annotations

import pytest

import tinytc_py


def devices() -> list:
    """Every device found (pyopencl needed), or skip the test."""
    pytest.importorskip("pyopencl")
    found = tinytc_py.devices()
    if not found:
        pytest.skip("no device")
    return found
