"""What the ASan + UBSan tests of the C parts share (tests/capi and tests/level_zero): the
compiler flags of an instrumented build and the preloaded sanitizer runtimes, so that
uninstrumented test programs can load instrumented libraries."""

from __future__ import annotations

import subprocess

import pytest

SANITIZE = ("-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=all")


def runtime(name: str) -> str:
    """gcc's path of a sanitizer runtime library; skips the test when gcc has none."""
    path = subprocess.run(
        ["gcc", f"-print-file-name={name}"], capture_output=True, text=True
    ).stdout.strip()
    if "/" not in path:
        pytest.skip(f"gcc has no {name}")
    return path


def preload() -> str:
    """LD_PRELOAD value that loads both runtimes before the program."""
    return f"{runtime('libasan.so')} {runtime('libubsan.so')}"
