"""Every function group of the core and builder C API from one C program (c/all_groups.c), the
check that the C test programs together call every function of libtinytc and libtinytc_cl, and
valgrind (memcheck) runs of that program and of the builder examples: no invalid reads or
writes (leaks are not errors: the embedded interpreter lives until exit)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from tinytc_py.spirv.validate import validate

from .conftest import C_DIR, ROOT, clean_env, load_tool
from .test_fortran import EXAMPLES as FORTRAN_EXAMPLES
from .test_fortran import compile_fortran

gen = load_tool(ROOT / "tools" / "gen_capi.py", "gen_capi")
SUPPRESSIONS = C_DIR.parent / "valgrind.supp"

# One creator per line of output is not needed: the mnemonics in the printed kernel show that
# each table-driven creator made the instruction it is named after.
MNEMONICS = (
    "gemm.n.t gemv ger hadamard sum cumsum alloca lifetime_stop barrier.global.local size "
    "subview fuse expand group_id.x num_groups.y num_subgroups.x subgroup_size associated "
    "add sub mul div rem max min shl shr and or xor equal not_equal greater_than "
    "greater_than_equal less_than less_than_equal abs neg cos native_cos sin native_sin exp "
    "native_exp exp2 native_exp2 log native_log log2 native_log2 not cast conj re im "
    "atomic_load atomic_store atomic_add atomic_max atomic_min foreach foreach_tile parallel "
    "subgroup_id.x subgroup_linear_id subgroup_local_id subgroup_broadcast "
    "subgroup_exclusive_scan_add subgroup_exclusive_scan_max subgroup_exclusive_scan_min "
    "subgroup_inclusive_scan_add subgroup_inclusive_scan_max subgroup_inclusive_scan_min "
    "subgroup_reduce_add subgroup_reduce_max subgroup_reduce_min cooperative_matrix_prefetch "
    "cooperative_matrix_load cooperative_matrix_construct cooperative_matrix_mul_add "
    "cooperative_matrix_scale cooperative_matrix_extract cooperative_matrix_insert "
    "cooperative_matrix_apply cooperative_matrix_reduce_add cooperative_matrix_reduce_max "
    "cooperative_matrix_reduce_min cooperative_matrix_store cooperative_matrix_atomic_load "
    "cooperative_matrix_atomic_store cooperative_matrix_atomic_add cooperative_matrix_atomic_max "
    "cooperative_matrix_atomic_min"
).split()


def test_all_groups(compile_c, tmp_path):
    spv, text = tmp_path / "all.spv", tmp_path / "all.spvasm"
    result = compile_c("all_groups.c").run(str(spv), str(text))
    out = result.stdout
    kernel = out[out.index("func @all(") :]
    assert kernel.startswith(
        "func @all(%0: memref<f32x16x16>, %1: memref<f32x16x16>, %2: memref<f32x16>, "
        "%3: memref<f32x16>, %4: i32, %5: memref<c32x16>, %6: group<memref<f32x16>x4>) "
        'attributes{"alpha"=false, "zeta"=true} {\n'
    )
    missing = [
        m for m in MNEMONICS if not re.search(rf"(= |^ +){re.escape(m)}[ .\n]", kernel, re.M)
    ]
    assert not missing, missing
    size = int(re.search(r"^spirv (\d+)$", out, re.M).group(1))
    assert size == spv.stat().st_size and spv.read_bytes()[:4] == bytes.fromhex("03022307")
    assert out.endswith("ok\n")
    if shutil.which("spirv-val") is None:
        pytest.skip("spirv-val not installed")
    validate(spv.read_bytes())  # spirv-val, with this spirv-val's gaps (inline asm) bridged
    assert text.read_text().startswith("; SPIR-V\n")
    assert text.read_text() in result.stderr  # tinytc_spv_mod_dump: the same text
    assert "report 1: <memory>:3.8: Unknown token ('foo' is not an instruction)" in result.stderr


def test_every_function_is_called_from_c():
    """The C programs of the tests (files in c/ and the sources inline in these tests) call
    every function of libtinytc and libtinytc_cl at least once."""
    sources = [p.read_text() for p in C_DIR.glob("*.c")]
    sources += [p.read_text() for p in C_DIR.parent.glob("test_*.py")]
    called = set(re.findall(r"\btinytc_\w+", "\n".join(sources)))  # calls and tables
    api = gen.load_api()
    wanted = set(api.exported("tinytc")) | set(api.exported("tinytc_cl"))
    assert sorted(wanted - called) == []


def valgrind(exe, *args: str):
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed (make apt installs it)")
    cmd = ["valgrind", "--error-exitcode=99", "--errors-for-leak-kinds=none"]
    cmd += [f"--suppressions={SUPPRESSIONS}", str(exe), *args]
    # PYTHONMALLOC only swaps CPython's allocator for malloc, so memcheck sees every object; the
    # library still finds its Python without any other variable.
    env = {**clean_env(), "PYTHONMALLOC": "malloc"}
    result = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=150)
    log = result.stderr
    assert "Invalid read" not in log and "Invalid write" not in log, log[-6000:]
    assert result.returncode == 0, log[-6000:]
    assert re.search(r"ERROR SUMMARY: 0 errors", log), log[-3000:]
    return result


@pytest.mark.timeout(150)
def test_valgrind_all_groups(compile_c, tmp_path):
    prog = compile_c("all_groups.c")
    result = valgrind(prog.exe, str(tmp_path / "a.spv"), str(tmp_path / "a.spvasm"))
    assert result.stdout.endswith("ok\n")


@pytest.mark.timeout(150)
def test_valgrind_builder_examples(compile_c, capi_libs, tmp_path):
    example = compile_c(str(ROOT / "examples" / "c" / "builder.c"), name="builder")
    assert "    axpby %" in valgrind(example.exe).stderr
    if shutil.which("gfortran") is not None:
        fortran = compile_fortran(
            [FORTRAN_EXAMPLES / "example_support.f90", FORTRAN_EXAMPLES / "builder.f90"],
            tmp_path / "fb",
            capi_libs,
        )
        assert valgrind(fortran.exe).stdout.endswith("reports: 1\n")
