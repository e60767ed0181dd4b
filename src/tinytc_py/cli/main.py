"""tinytc-py: commands for an installed package (the compilers are `tinytc` and `tinytc-opt`).

    tinytc-py build-capi [--out DIR] [--cc CC]

build-capi builds the C API (libtinytc.so, libtinytc_cl.so, libtinytc_ze.so; libtinytc_sycl.so
when the SYCL runtime, the `sycl` extra, is installed), the Level Zero CPU driver
(libze_tinytc_cpu.so), the in-process validator and the pkg-config and CMake files
into DIR (default: build/lib of the checkout, or of the C sources an installed wheel carries,
where the Python package finds the driver and the validator by itself). It does for an
installed package what `make setup` does for a checkout, from the same script (capi/build.py).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

from ..native_libs import BUILD_LIB, SOURCE_ROOT
from . import add_version_option


def _capi_build_script():
    """capi/build.py of `SOURCE_ROOT` as a module (a script, not part of the package)."""
    path = SOURCE_ROOT / "capi" / "build.py"
    if not path.is_file():
        raise FileNotFoundError(f"the C API sources are missing ({path})")
    spec = importlib.util.spec_from_file_location("tinytc_capi_build", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def build_capi(out: Path, cc: str) -> int:
    try:
        build = _capi_build_script()
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    try:
        built = build.build(out, cc, quiet=False)
    except build.BuildError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"pkg-config: PKG_CONFIG_PATH={out.resolve() / 'pkgconfig'}")
    print(f"CMake: tinytc_DIR={out.resolve() / 'cmake' / 'tinytc'}")
    if "tinytc_sycl" in built:
        print(f"CMake: tinytc_sycl_DIR={out.resolve() / 'cmake' / 'tinytc_sycl'}")
    return 0


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="tinytc-py", description=__doc__.splitlines()[0])
    add_version_option(ap)
    commands = ap.add_subparsers(dest="command", required=True)
    capi = commands.add_parser("build-capi", help="build the C API libraries and the CPU driver")
    capi.add_argument("--out", type=Path, default=BUILD_LIB, help=f"output directory ({BUILD_LIB})")
    capi.add_argument("--cc", default="gcc", help="C compiler (default gcc)")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    return build_capi(args.out, args.cc)


if __name__ == "__main__":
    sys.exit(main())
