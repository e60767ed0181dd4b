"""The generated Fortran module (capi/fortran/tinytc.f90): it compiles as strict Fortran 2018,
declares every function, constant and struct of the API description, and examples/fortran
builds, compiles and reports through libtinytc, and runs a recipe and a custom kernel on an
OpenCL device, when compiled with gfortran and run without any Python environment variables.
(That the module is current is test_headers' --check test.)"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import ROOT, CProgram, load_tool

gen = load_tool(ROOT / "tools" / "gen_capi.py", "gen_capi")
MODULE = ROOT / "capi" / "fortran" / "tinytc.f90"
EXAMPLES = ROOT / "examples" / "fortran"
FFLAGS = ["-std=f2018", "-Wall", "-Wextra", "-Werror"]


def gfortran() -> str:
    path = shutil.which("gfortran")
    if path is None:
        pytest.skip("gfortran is not installed (make apt installs it)")
    return path


def compile_fortran(sources: list[Path], exe: Path, lib_dir: Path, libs=("tinytc",)) -> CProgram:
    cmd = [gfortran(), *FFLAGS, f"-J{exe.parent}", str(MODULE), *map(str, sources)]
    cmd += ["-o", str(exe), f"-L{lib_dir}", *(f"-l{lib}" for lib in libs)]
    cmd.append(f"-Wl,-rpath,{lib_dir}")
    result = subprocess.run(cmd, capture_output=True, text=True)
    assert result.returncode == 0, " ".join(cmd) + "\n" + result.stderr
    return CProgram(exe, lib_dir)


def test_module_compiles(tmp_path):
    cmd = [gfortran(), *FFLAGS, f"-J{tmp_path}", "-c", str(MODULE), "-o", str(tmp_path / "m.o")]
    result = subprocess.run(cmd, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert {p.name for p in tmp_path.glob("*.mod")} == {
        "tinytc.mod",
        "tinytc_cl.mod",
        "tinytc_ze.mod",
    }


def test_every_function_has_an_interface():
    text = MODULE.read_text()
    bound = re.findall(r'bind\(c, &?\s*name="(\w+)"\)', text)
    api = gen.load_api()
    assert sorted(bound) == sorted(f.name for f in api.functions)
    for module in api.libraries:
        body = text.split(f"\nmodule {module}\n", 1)[1].split(f"end module {module}\n", 1)[0]
        names = set(re.findall(r'name="(\w+)"', body))
        assert names == set(api.exported(module)), module


def test_constants_match_the_description():
    constants = dict(re.findall(r"parameter :: (\w+) = (-?\d+)\n", MODULE.read_text()))
    api = gen.load_api()
    for e in api.enums:
        for case, value, _ in e.members:
            assert int(constants.pop(e.cname(case))) == value
        assert int(constants.pop(f"TINYTC_ENUM_NUM_{e.name.upper()}")) == len(e.members)
    assert int(constants.pop("TINYTC_VERSION_MINOR")) == api.version["minor"]
    assert "TINYTC_DYNAMIC = -huge(0_c_int64_t) - 1\n" in MODULE.read_text()


def test_structs_mirror_the_c_structs():
    text = MODULE.read_text()
    for s in gen.load_api().structs:
        body = text.split(f"type, bind(c) :: tinytc_{s['name']}_t\n", 1)[1].split("end type")[0]
        assert re.findall(r":: (\w+)\n", body) == [name for _, name in s["fields"]]


def test_signatures_follow_the_conventions():
    text = MODULE.read_text()

    def dummies(name: str) -> dict[str, str]:
        body = text.split(f"function {name}(", 1)[1].split(f"end function {name}", 1)[0]
        return {n: decl.strip() for decl, n in re.findall(r"\n\s+(.*?) :: (\w+)", body)}

    d = dummies("tinytc_func_create")
    assert d["fun"] == "type(c_ptr), intent(inout)"  # out-pointer: by reference
    assert d["name_length"] == "integer(c_size_t), value"
    assert d["name"] == "character(kind=c_char), dimension(*), intent(in)"
    assert d["param_type_list"] == "type(c_ptr), dimension(*), intent(in)"  # array after a size
    assert d["ty"] == "type(c_ptr), value"
    assert d["loc"] == "type(tinytc_location_t), intent(in), optional"  # absent = NULL
    d = dummies("tinytc_compiler_context_set_error_reporter")
    assert d["reporter"] == "type(c_funptr), value"
    d = dummies("tinytc_binary_get_raw")
    assert d["format"] == "integer(c_int), intent(inout)"  # enum out-parameter
    assert d["data"] == "type(c_ptr), intent(inout)"  # pointer into library memory
    assert dummies("tinytc_core_info_have_spirv_feature")["available"] == (
        "integer(c_int8_t), intent(inout)"
    )


def test_builder_example(capi_libs, tmp_path):
    prog = compile_fortran(
        [EXAMPLES / "example_support.f90", EXAMPLES / "builder.f90"],
        tmp_path / "builder",
        capi_libs,
    )
    out = prog.run().stdout
    program, rest = out.split("format: ", 1)
    assert program == (
        "func @axpby(%A: memref<f32x8x?>, %B: memref<f32x8x?>) {\n"
        "    %0 = constant 0x1p+1 : f32\n"
        "    %1 = constant 0x1p+0 : f32\n"
        "    axpby %0, %A, %1, %B\n"
        "}\n"
    )
    lines = rest.splitlines()
    assert lines[0] == "spirv"
    size = int(lines[1].removeprefix("spirv bytes: "))
    assert size > 500 and size % 4 == 0
    assert lines[2] == "magic: 0x07230203"
    assert lines[3] == "reported at 2.18: <memory>:2.18-19: undefined identifier %c"
    assert lines[-1] == "reports: 1"


def test_run_kernel_example(capi_libs, tmp_path):
    """Run without OCL_ICD_VENDORS: libtinytc_cl registers the CPU runtime itself."""
    sources = [
        EXAMPLES / name for name in ("example_support.f90", "opencl_minimal.f90", "run_kernel.f90")
    ]
    libs = ("tinytc", "tinytc_cl", "OpenCL")
    prog = compile_fortran(sources, tmp_path / "run_kernel", capi_libs, libs)
    lines = prog.run().stdout.splitlines()
    assert lines[0] in ("support level: basic", "support level: tuned")
    assert lines[1:] == [
        "gemm: 0 of 25600 entries wrong",
        "custom kernel: 0 of 1600 entries wrong",
    ]
