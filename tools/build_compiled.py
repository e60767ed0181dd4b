"""Compile the modules listed in src/tinytc_py/compiled.py with mypyc into build/mypyc/.

    .venv/bin/python tools/build_compiled.py [--force]

Run by `make setup`. Does nothing when the manifest still holds (the digest of the package's
sources, the modules, this Python and this mypy: compiled.stale), so `make setup` after an edit
or with another Python rebuilds, and is cheap otherwise; skips with a message, exit status 0,
when mypyc, a C compiler or Python.h is missing (the package then runs as pure Python), except
on CI (`CI` set), where that is an error: CI tests the compiled modules. A mypyc or C compiler
error is an error. The import hook and its rules: src/tinytc_py/compiled.py.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "tinytc_py"


def load_list():
    """src/tinytc_py/compiled.py by its path (it imports nothing of the package)."""
    spec = importlib.util.spec_from_file_location("tinytc_compiled", PACKAGE / "compiled.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def missing_tools() -> str:
    """Why nothing can be compiled here ("" when mypyc, a C compiler and Python.h are there)."""
    if importlib.util.find_spec("mypyc") is None:
        return "mypyc is not installed"
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None:
        return f"no C compiler ({cc})"
    if not os.path.isfile(os.path.join(sysconfig.get_paths()["include"], "Python.h")):
        return "Python.h missing (the Python development headers)"
    return ""


def build(compiled, out: Path) -> dict:
    """mypyc's C into out/c, the extension modules into out/lib; returns the manifest."""
    from mypyc.build import mypycify
    from setuptools import Distribution

    os.chdir(ROOT)  # mypy names the modules from their paths under src/
    digest = compiled.sources_digest(str(PACKAGE), content=True)
    paths = [os.path.relpath(compiled.source_path(m, str(PACKAGE)), ROOT) for m in compiled.MODULES]
    # the options of pyproject's [tool.mypy] apply; its overrides name packages not compiled
    extensions = mypycify(
        ["--no-warn-unused-configs", *paths],
        opt_level="3",
        multi_file=True,
        group_name=compiled.GROUP,
        target_dir=str(out / "c"),
    )
    dist = Distribution({"ext_modules": extensions, "script_name": "build_compiled.py"})
    dist.script_args = [
        "build_ext", "--build-lib", str(out / "lib"), "--build-temp", str(out / "tmp"),
        "--parallel", str(os.cpu_count() or 1),
    ]  # fmt: skip
    dist.parse_command_line()
    dist.run_commands()
    cmd = dist.get_command_obj("build_ext")
    files = {
        # a package's extension is named after its __init__; it is imported by the package name
        ext.name.removesuffix(".__init__"): os.path.relpath(
            os.path.join(cmd.build_lib, cmd.get_ext_filename(ext.name)), out
        )
        for ext in extensions
    }
    expected = {*compiled.MODULES, f"{compiled.GROUP}__mypyc"}
    if set(files) != expected:
        raise SystemExit(f"mypyc built {sorted(set(files) ^ expected)} against MODULES")
    return {
        "digest": digest,
        "modules": list(compiled.MODULES),
        **compiled.build_target(),
        "mypy": mypy_version(),
        "files": files,
    }


def mypy_version() -> str:
    """The installed mypy's version ("" without mypy): another mypyc makes other code."""
    try:
        from mypy.version import __version__
    except ImportError:
        return ""
    return __version__


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--force", action="store_true", help="rebuild even if up to date")
    args = ap.parse_args()
    compiled = load_list()
    out = Path(compiled.BUILD_DIR)
    manifest_path = out / compiled.MANIFEST
    if not args.force and manifest_path.is_file():
        try:
            recorded = json.loads(manifest_path.read_text(encoding="utf-8"))
            files = recorded["files"].values()
            current = not compiled.stale(recorded, str(PACKAGE))
            current = current and recorded.get("mypy") == mypy_version()
        except (ValueError, KeyError, TypeError, AttributeError):
            current, files = False, []
        if current and all((out / f).is_file() for f in files):
            print(f"mypyc: {len(compiled.MODULES)} compiled modules up to date")
            return 0
    why = missing_tools()
    if why and os.environ.get("CI"):
        print(f"mypyc: cannot compile on CI ({why})", file=sys.stderr)
        return 1
    if why:
        print(f"mypyc: not compiling ({why}); the package runs as pure Python")
        return 0
    manifest_path.unlink(missing_ok=True)  # no manifest while the files are half replaced
    start = time.monotonic()
    manifest = build(compiled, out)
    manifest_path.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(f"mypyc: compiled {len(compiled.MODULES)} modules in {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
