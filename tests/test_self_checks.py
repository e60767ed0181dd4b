"""The compiler's self-checks (self_checks.py): the final check-ir and the validation of the
emitted SPIR-V run when TINYTC_VALIDATE asks for them (tests/conftest.py sets it for the whole
suite) and always in bounds-checked mode; a module the validator rejects is an internal
compiler error carrying the validator's message.

Which functions check-ir verified is seen by replacing `check_ir.verify_func`, which compiled
callers (src/tinytc_py/compiled.py) would call past the module attribute: the compile runs in
a child process with TINYTC_PURE_PYTHON=1, where every caller goes through it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tinytc_py import compiled, self_checks
from tinytc_py.errors import Status

CHILD = """
import json, sys
from tinytc_py import compiled, compiler
from tinytc_py.errors import TinytcError
from tinytc_py.ir.context import CompilerContext
from tinytc_py.ir.enums import OptFlag
from tinytc_py.passes import check_ir
from tinytc_py.spirv.validate import SpirvValidationError
from tinytc_py.text.dialect import parse

COPY = '''
func @copy(%A: memref<f32x8>, %B: memref<f32x8>) {
    %j = constant 3 : index
    %a = load %A[%j] : f32
    store %a, %B[%j]
}
'''
assert not compiled.status()[0], compiled.status()
verified, validated = [], []
verify = check_ir.verify_func

def counting_verify(func):
    verified.append(func.name)
    verify(func)

def reject(data):
    validated.append(len(data))
    raise SpirvValidationError("spirv-val rejected the module:\\nbroken on purpose")

check_ir.verify_func = counting_verify
compiler.validate = reject
ctx = CompilerContext()
ctx.set_optimization_flag(OptFlag.bounds_checks, int(sys.argv[1]))
out = {"verified": verified, "validated": validated}
try:
    compiler.assemble_module(compiler.compile_to_module(parse(COPY, ctx)))
except TinytcError as err:
    out["error"] = [int(err.status), str(err)]
print(json.dumps(out))
"""


def _compile(validate: str | None, bounds_checks: bool = False) -> dict[str, object]:
    """Compiles a small program in pure Python with the validator replaced by one that rejects
    every module; returns the functions check-ir verified, the sizes of the modules the
    validator saw and the error raised ([status, message]), if any."""
    env = {**os.environ, compiled.PURE_ENV: "1", "TINYTC_CACHE": "0"}
    env.pop("TINYTC_VALIDATE", None)
    if validate is not None:
        env["TINYTC_VALIDATE"] = validate
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(int(bounds_checks))],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout)


def test_the_test_suite_runs_the_self_checks():
    """conftest.py sets TINYTC_VALIDATE=1: check-ir runs before and after the lowerings, and
    the emitted module goes to the validator, whose rejection is an internal compiler error."""
    assert self_checks.requested()
    out = _compile(os.environ["TINYTC_VALIDATE"])
    assert out["verified"] == ["copy", "copy"]
    assert len(out["validated"]) == 1
    status, message = out["error"]
    assert status == Status.internal_compiler_error
    assert "invalid (compiler bug)" in message and "broken on purpose" in message


@pytest.mark.parametrize("value", ["0", "", "off"])
def test_without_tinytc_validate_only_the_input_is_checked(value):
    assert _compile(value) == {"verified": ["copy"], "validated": []}


def test_bounds_checked_mode_always_runs_the_self_checks():
    out = _compile(None, bounds_checks=True)
    assert out["verified"] == ["copy", "copy"]
    assert "broken on purpose" in out["error"][1]
