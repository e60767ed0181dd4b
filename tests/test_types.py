"""The package is typed (PEP 561 marker) and the type checker, configured in pyproject.toml
([tool.mypy]: which modules relax which error codes, and why), passes on src/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_package_has_the_typed_marker():
    assert (ROOT / "src" / "tinytc_py" / "py.typed").is_file()


@pytest.mark.timeout(900)
def test_mypy_passes_on_src():
    pytest.importorskip("mypy")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_scalar_kind_loop_leaves_no_module_name():
    # ir/types.py fills each ScalarKind's text, size and family in a loop at import
    from tinytc_py.ir import types

    assert not hasattr(types, "_kind")
    assert types.ScalarKind.f64.size == 8
