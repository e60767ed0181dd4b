"""The examples run as users run them: examples/python/run_kernel.py (the README's `make run`)
compiles examples/ir/matvec_batched.ir, launches it on the default OpenCL device and checks the
result against NumPy, through the public API only."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUN_KERNEL = ROOT / "examples" / "python" / "run_kernel.py"

pytestmark = pytest.mark.timeout(300)


def _have_device() -> bool:
    if importlib.util.find_spec("pyopencl") is None:
        return False
    from tinytc_py.runtime import device

    try:
        device.default_device()
    except RuntimeError:
        return False
    return True


@pytest.mark.parametrize(
    "options", [[], ["--batch", "3", "--rows", "130", "--cols", "1", "--seed", "7"]]
)
def test_run_kernel_prints_ok(options):
    if not _have_device():
        pytest.skip("no SPIR-V capable OpenCL device")
    proc = subprocess.run(
        [sys.executable, str(RUN_KERNEL), *options],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[-1] == "OK", proc.stdout
    assert lines[0].startswith("device: ")
    assert any(line.startswith("max abs error vs NumPy: ") for line in lines)
    assert any("work-group size [" in line for line in lines)


def test_run_kernel_uses_the_public_api_only():
    """The flagship example imports `tinytc_py` itself, no module inside it, and uses only the
    names the package exports."""
    import tinytc_py

    tree = ast.parse(RUN_KERNEL.read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert "tinytc_py" in imported
    assert not [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                if n.module and n.module.startswith("tinytc_py")]  # fmt: skip
    assert not {name for name in imported if name.startswith("tinytc_py.")}
    used = {
        n.attr
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute)
        and isinstance(n.value, ast.Name)
        and n.value.id == "tinytc_py"
    }
    assert used and used <= set(tinytc_py.__all__), used - set(tinytc_py.__all__)
