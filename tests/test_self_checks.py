"""The compiler's self-checks (self_checks.py): the final check-ir and the validation of the
emitted SPIR-V run when TINYTC_VALIDATE asks for them (tests/conftest.py sets it for the whole
suite) and always in bounds-checked mode; a module the validator rejects is an internal
compiler error carrying the validator's message."""

from __future__ import annotations

import pytest

from tinytc_py import compiler, self_checks
from tinytc_py.errors import Status, TinytcError
from tinytc_py.ir.context import CompilerContext
from tinytc_py.ir.enums import OptFlag
from tinytc_py.passes import check_ir
from tinytc_py.spirv.validate import SpirvValidationError
from tinytc_py.text.dialect import parse

COPY = """\
func @copy(%A: memref<f32x8>, %B: memref<f32x8>) {
    %j = constant 3 : index
    %a = load %A[%j] : f32
    store %a, %B[%j]
}
"""


def _compile(monkeypatch, bounds_checks: bool = False) -> tuple[list[str], list[int]]:
    """Compiles COPY with the validator replaced by one that rejects every module; returns the
    functions check-ir verified and the sizes of the modules the validator saw (or raises what
    the compiler raises)."""
    verified: list[str] = []
    validated: list[int] = []
    verify = check_ir.verify_func

    def counting_verify(func) -> None:
        verified.append(func.name)
        verify(func)

    def reject(data: bytes) -> None:
        validated.append(len(data))
        raise SpirvValidationError("spirv-val rejected the module:\nbroken on purpose")

    monkeypatch.setattr(check_ir, "verify_func", counting_verify)
    monkeypatch.setattr(compiler, "validate", reject)
    ctx = CompilerContext()
    ctx.set_optimization_flag(OptFlag.bounds_checks, int(bounds_checks))
    try:
        compiler.assemble_module(compiler.compile_to_module(parse(COPY, ctx)))
    except TinytcError as err:
        err.add_note(f"check-ir ran on {verified}")
        raise
    return verified, validated


def test_the_test_suite_runs_the_self_checks(monkeypatch):
    """conftest.py sets TINYTC_VALIDATE=1: check-ir runs before and after the lowerings, and
    the emitted module goes to the validator, whose rejection is an internal compiler error."""
    assert self_checks.requested()
    with pytest.raises(TinytcError, match="(?s)invalid \\(compiler bug\\).*broken on purpose") as e:
        _compile(monkeypatch)
    assert e.value.status == Status.internal_compiler_error
    assert "check-ir ran on ['copy', 'copy']" in e.value.__notes__


@pytest.mark.parametrize("value", ["0", "", "off"])
def test_without_tinytc_validate_only_the_input_is_checked(monkeypatch, value):
    monkeypatch.setenv("TINYTC_VALIDATE", value)
    assert not self_checks.requested()
    assert _compile(monkeypatch) == (["copy"], [])


def test_bounds_checked_mode_always_runs_the_self_checks(monkeypatch):
    monkeypatch.delenv("TINYTC_VALIDATE")
    with pytest.raises(TinytcError, match="broken on purpose") as e:
        _compile(monkeypatch, bounds_checks=True)
    assert "check-ir ran on ['copy', 'copy']" in e.value.__notes__
