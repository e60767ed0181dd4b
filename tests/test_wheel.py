"""The wheel as a user gets it: `pip wheel .`, installed into a fresh virtual environment (no
Makefile, no checkout on the path), runs a kernel through `tinytc_py.compile(...).kernel(...)` on
the CPU device, and its `tinytc-py build-capi` builds a libtinytc.so that a C program links via
the generated pkg-config file and runs.

Offline by design: the wheel is built without build isolation and installed with --no-deps;
the fresh environment sees the dependencies (NumPy, cffi, pyopencl, the Intel CPU runtime) of
the test environment through a .pth line, which adds their folder but none of its .pth files, so
the checkout's editable install stays invisible there. The wheel's metadata is checked to
declare those dependencies itself.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

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
    for dep in ("numpy", "cffi", "platformdirs"):
        assert f"Requires-Dist: {dep}" in metadata
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
          "--no-index", str(wheel)])  # fmt: skip
    purelib = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
    deps = sysconfig.get_paths()["purelib"]
    Path(purelib.stdout.strip(), "_test_dependencies.pth").write_text(deps + "\n")
    return venv


def _clean_env() -> dict[str, str]:
    """No PYTHON* variables and no virtual environment: what a user's shell or C program has."""
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(Path.home())}


def test_wheel_installs_console_scripts(installed: Path):
    for script in ("tinytc", "tinytc-opt", "tinytc-py"):
        assert (installed / "bin" / script).is_file(), script
    result = _run([str(installed / "bin" / "tinytc-py"), "--help"], env=_clean_env())
    assert "build-capi" in result.stdout


def test_installed_package_runs_a_kernel(installed: Path, tmp_path: Path):
    pytest.importorskip("pyopencl")
    script = tmp_path / "run.py"
    script.write_text(KERNEL)
    result = _run([str(installed / "bin" / "python"), str(script)], cwd=tmp_path, env=_clean_env())
    where, outcome = result.stdout.splitlines()
    assert where.startswith(str(installed))  # the installed copy, not the checkout's src/
    assert outcome == "opencl True"


def test_build_capi_makes_a_library_a_c_program_links(installed: Path, tmp_path: Path):
    if shutil.which("gcc") is None or shutil.which("pkg-config") is None:
        pytest.skip("gcc and pkg-config are needed")
    lib = tmp_path / "lib"
    env = _clean_env()
    result = _run([str(installed / "bin" / "tinytc-py"), "build-capi", "--out", str(lib)], env=env)
    assert f"PKG_CONFIG_PATH={lib}/pkgconfig" in result.stdout
    assert (lib / "libze_tinytc_cpu.so").is_file()
    flags = _run(
        ["pkg-config", "--cflags", "--libs", "tinytc"],
        env={**env, "PKG_CONFIG_PATH": str(lib / "pkgconfig")},
    ).stdout.split()
    assert f"-I{installed}" in " ".join(flags)  # the headers the wheel carries
    exe = tmp_path / "builder"
    _run(["gcc", "-Wall", "-Werror", str(ROOT / "examples" / "c" / "builder.c"), "-o", str(exe),
          *flags])  # fmt: skip
    run = _run([str(exe)], env=env)
    assert "func @copy(%A: memref<f32x8x8>, %B: memref<f32x8x8>)" in run.stderr
    assert "    axpby %" in run.stderr
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
