"""Fixtures of the Level Zero driver tests: our CPU driver (capi/ze_cpu), built once per session
into a temporary directory, the C test programs of tests/level_zero/c compiled against the real
loader (-lze_loader), and a runner that starts them with only ZE_ENABLE_ALT_DRIVERS set, in an
environment without Python or OpenCL variables (the driver must find the CPU runtime itself)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
C_DIR = Path(__file__).resolve().parent / "c"
LOADER = "libze_loader.so.1"
VALIDATION = {"ZE_ENABLE_VALIDATION_LAYER": "1", "ZE_ENABLE_PARAMETER_VALIDATION": "1"}


def load_driver_build():
    """capi/ze_cpu/build.py as a module."""
    name = "ze_cpu_build"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "capi" / "ze_cpu" / "build.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def clean_env() -> dict[str, str]:
    """What a plain C program gets: no PYTHON*, no OCL_ICD_VENDORS, a system PATH."""
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(Path.home())}
    # the session's kernel cache and validation switch (tests/conftest.py)
    for name in ("TINYTC_CACHE_DIR", "TINYTC_VALIDATE"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def _loader_present() -> bool:
    probe = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True)
    return LOADER in probe.stdout or Path("/usr/lib/x86_64-linux-gnu", LOADER).exists()


@pytest.fixture(scope="session")
def ze_driver(tmp_path_factory) -> Path:
    """Path of libze_tinytc_cpu.so, freshly built."""
    if shutil.which("gcc") is None or not _loader_present():
        pytest.skip("gcc and the Level Zero loader (libze1, libze-dev) are needed")
    build = load_driver_build()
    if build.find_libintelocl() is None:
        pytest.skip("the Intel CPU OpenCL runtime (intel-opencl-rt) is not installed")
    return build.build_driver(tmp_path_factory.mktemp("ze_cpu") / "lib")


@dataclass
class ZeProgram:
    exe: Path
    driver: Path

    def run(self, *args: str, validation: bool = False, env: dict | None = None, check=True):
        environment = {**clean_env(), "ZE_ENABLE_ALT_DRIVERS": str(self.driver)}
        if validation:
            environment.update(VALIDATION)
        environment.update(env or {})
        result = subprocess.run(
            [str(self.exe), *args], capture_output=True, text=True, env=environment, timeout=120
        )
        if check:
            assert result.returncode == 0, f"exit {result.returncode}\n{result.stderr}"
            assert result.stdout.rstrip().endswith("ok"), result.stdout + result.stderr
        return result


@pytest.fixture(scope="session")
def ze_program(ze_driver, tmp_path_factory):
    """ze_program("events.c") -> ZeProgram, compiled once per session."""
    out = tmp_path_factory.mktemp("ze_programs")
    built: dict[str, ZeProgram] = {}

    def compile_(name: str) -> ZeProgram:
        if name not in built:
            exe = out / Path(name).stem
            cmd = ["gcc", "-Wall", "-Wextra", "-Werror", f"-I{C_DIR}", str(C_DIR / name)]
            cmd += ["-o", str(exe), "-lze_loader"]
            result = subprocess.run(cmd, capture_output=True, text=True)
            assert result.returncode == 0, " ".join(cmd) + "\n" + result.stderr
            built[name] = ZeProgram(exe, ze_driver)
        return built[name]

    return compile_


def key_values(stdout: str) -> dict[str, str]:
    """key=value lines of a test program's output (the last one wins)."""
    return dict(line.split("=", 1) for line in stdout.splitlines() if "=" in line)
