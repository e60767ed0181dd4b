#!/usr/bin/env python3
"""Build libze_tinytc_cpu.so, our Level Zero driver for the CPU (see README.md next to this file).

`build_driver(out_dir, cc)` compiles the C sources of this folder into `out_dir/libze_tinytc_cpu.so`
and writes `out_dir/ze_tinytc_cpu_vendors/`, an OpenCL ICD vendors folder holding an `.icd` file
with the absolute path of the Intel CPU OpenCL runtime (`libintelocl.so`) of the Python
environment that runs the build, plus copies of the system's `.icd` files. When
`OCL_ICD_VENDORS` is unset at `zeInit`, the driver points it at that folder, so a plain program
with only `ZE_ENABLE_ALT_DRIVERS=<out_dir>/libze_tinytc_cpu.so` finds the runtime.

Link choices: only the `Get...ProcAddrTable`
getters are exported (version script); `-z nodelete` keeps the driver mapped when the loader
unloads it at exit while OpenCL worker threads still run.

Usage: capi/ze_cpu/build.py [--out DIR] [--cc CC]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
LIBRARY = "libze_tinytc_cpu.so"
VENDORS_DIR = "ze_tinytc_cpu_vendors"  # must match VENDORS_DIR_NAME in ze_cpu_driver.c
ICD_NAME = "tinytc-intel-cpu.icd"
SYSTEM_VENDORS = Path("/etc/OpenCL/vendors")
HEADERS = {"level_zero/ze_ddi.h": "libze-dev", "CL/cl_ext.h": "opencl-headers"}

VERSION_SCRIPT = """\
{
  global:
    zeGet*ProcAddrTable;
    zetGet*ProcAddrTable;
    zesGet*ProcAddrTable;
  local: *;
};
"""


class DriverBuildError(RuntimeError):
    pass


def build_digest(sources: list[Path], flags: list[str]) -> int:
    """32 bits of SHA-256 over the driver's sources and compiler command: the driver mixes them
    into the driverVersion it reports, so native binaries cached under one build are never
    offered to another (a changed driver may translate or launch kernels differently)."""
    digest = hashlib.sha256()
    for path in sources:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update("\0".join(flags).encode())
    return int.from_bytes(digest.digest()[:4], "little")


def find_libintelocl() -> Path | None:
    """The environment's libintelocl.so, as tinytc_py.runtime.device finds it."""
    try:
        sys.path.insert(0, str(ROOT / "src"))
        from tinytc_py.runtime.device import find_libintelocl as find
    except ImportError:  # e.g. pyopencl missing: look where the PyPI package puts it
        candidate = Path(sys.prefix) / "lib" / "libintelocl.so"
        return candidate.absolute() if candidate.is_file() else None
    finally:
        sys.path.pop(0)
    return find()


def write_vendors(out_dir: Path) -> Path:
    """out_dir/ze_tinytc_cpu_vendors with our .icd file and copies of the system's ones."""
    folder = out_dir / VENDORS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    entries = {}
    lib = find_libintelocl()
    if lib is not None:
        entries[ICD_NAME] = f"{lib}\n"
    if SYSTEM_VENDORS.is_dir():
        for icd in sorted(SYSTEM_VENDORS.glob("*.icd")):
            try:
                entries[f"system-{icd.name}"] = icd.read_text(errors="replace")
            except OSError:
                continue
    for stale in folder.glob("*.icd"):
        if stale.name not in entries:
            stale.unlink()
    for name, text in entries.items():
        (folder / name).write_text(text)
    return folder


def header_available(cc: str, header: str) -> bool:
    """Whether `#include <header>` compiles with `cc` (OpenCL headers want a target version)."""
    probe = subprocess.run(
        [cc, "-fsyntax-only", "-DCL_TARGET_OPENCL_VERSION=300", "-x", "c", "-"],
        input=f"#include <{header}>\n",
        capture_output=True,
        text=True,
    )
    return probe.returncode == 0


def _check_headers(cc: str) -> None:
    for header, package in HEADERS.items():
        if not header_available(cc, header):
            raise DriverBuildError(f"the CPU Level Zero driver needs <{header}> ({package})")


def build_driver(out_dir: Path, cc: str = "gcc", flags: tuple[str, ...] = ()) -> Path:
    """Compiles the driver into out_dir/libze_tinytc_cpu.so (and its vendors folder); returns
    the library's path. `flags` go to the compiler as well (the sanitizer test's
    -fsanitize=...). Raises DriverBuildError when the compiler fails."""
    out_dir = Path(out_dir).absolute()
    out_dir.mkdir(parents=True, exist_ok=True)
    _check_headers(cc)
    lib = out_dir / LIBRARY
    with tempfile.TemporaryDirectory(prefix="ze-tinytc-cpu-") as tmp:
        script = Path(tmp) / "exports.map"
        script.write_text(VERSION_SCRIPT)
        # Same folder, then an atomic rename: a running process may have the old one mapped.
        tmp_lib = out_dir / f".{LIBRARY}.{os.getpid()}.tmp"
        sources = sorted(HERE.glob("*.[ch]"))
        digest = build_digest(sources, [cc, *flags])
        cmd = [
            cc,
            f"-DZE_CPU_BUILD_DIGEST={digest:#010x}u",
            "-std=c11",
            "-shared",
            "-fPIC",
            "-O2",
            "-g",
            "-Wall",
            "-Wextra",
            "-fvisibility=hidden",
            *flags,
            "-o",
            str(tmp_lib),
            *(str(p) for p in sources if p.suffix == ".c"),
            f"-Wl,-soname,{LIBRARY}",
            f"-Wl,--version-script={script}",
            "-Wl,-z,nodelete",
            "-Wl,--no-undefined",
            "-lOpenCL",
            "-ldl",
            "-lpthread",
        ]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            tmp_lib.unlink(missing_ok=True)
            raise DriverBuildError(f"{' '.join(cmd)}\n{result.stdout}{result.stderr}")
        os.replace(tmp_lib, lib)
    write_vendors(out_dir)
    return lib


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "lib", help="output directory")
    ap.add_argument("--cc", default=os.environ.get("CC", "gcc"), help="C compiler")
    args = ap.parse_args(argv)
    try:
        print(f"built {build_driver(args.out, args.cc)}")
    except DriverBuildError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
