"""Cost of a builder call through the C API (libtinytc.so → Python handlers).

    .venv/bin/python benchmarks/capi_calls.py [--calls N] [--lib-dir DIR]

Builds the C API libraries (capi/build.py) into a temporary directory unless --lib-dir names a
built one, compiles benchmarks/c/capi_calls.c against them, runs it without Python environment
variables and prints one row per call: total ms for N calls (default 10 000), µs per call, and
whether N calls stay within issue 5's budget of one second per 10 000 calls.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "benchmarks" / "c" / "capi_calls.c"
BUDGET_MS_PER_10K = 1000.0


def build_libraries(out: Path) -> Path:
    spec = importlib.util.spec_from_file_location("tinytc_capi_build", ROOT / "capi" / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.build(out)
    return out


def run(lib_dir: Path, calls: int, work: Path) -> list[tuple[str, float]]:
    exe = work / "capi_calls"
    cmd = ["gcc", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{ROOT / 'include'}", str(SOURCE)]
    cmd += ["-o", str(exe), f"-L{lib_dir}", "-ltinytc", f"-Wl,-rpath,{lib_dir}"]
    subprocess.run(cmd, check=True)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(Path.home())}
    out = subprocess.run(
        [str(exe), str(calls)], check=True, capture_output=True, text=True, env=env
    ).stdout
    rows = []
    for line in out.splitlines():
        name, ms = line.rsplit("\t", 1)
        rows.append((name, float(ms)))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=10_000)
    ap.add_argument("--lib-dir", type=Path, help="built C API libraries (default: build anew)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        lib_dir = args.lib_dir or build_libraries(work / "lib")
        rows = run(lib_dir.resolve(), args.calls, work)
    budget = BUDGET_MS_PER_10K * args.calls / 10_000
    width = max(len(name) for name, _ in rows)
    print(f"{'call':<{width}}  {f'ms / {args.calls}':>12}  {'µs / call':>10}  budget")
    for name, ms in rows:
        verdict = "ok" if ms < budget else "OVER"
        print(f"{name:<{width}}  {ms:>12.1f}  {1000 * ms / args.calls:>10.2f}  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
