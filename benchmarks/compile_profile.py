"""Where a cold compile's time goes: cProfile of compile_time.compile_steps (parse, passes,
conversion, assembly, validation; the kernel cache is not involved) per program of
programs.py, summed over --repeat runs.

    .venv/bin/python benchmarks/compile_profile.py [--repeat N] [-d pvc] [--top N]

Per program: the profiled total per run, the time per part of the compiler (tottime, i.e. own
time, summed by the module's folder under tinytc_py, e.g. text, passes, spirv/convert; "other"
is the standard library and builtins), the --top modules and the --top functions by own time.
The profiler's clock is the process's CPU time (on a shared machine elapsed time would charge
preemptions to whatever function was running). cProfile's overhead inflates calls of small
functions, so the shares are the useful part, not the absolute figures (compile_time.py and
compile_capi.py give those).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
from collections import defaultdict

from compile_time import compile_steps
from programs import PROGRAMS
from tinytc_py.options import DEVICES, core_info_for_device


def part(filename: str) -> str:
    """The compiler part of a source file: its folder under tinytc_py (or "other")."""
    marker = "/tinytc_py/"
    if marker not in filename:
        return "other"
    rest = filename.split(marker, 1)[1].split("/")
    return "/".join(rest[:2]) if rest[0] == "spirv" and len(rest) > 2 else rest[0]


def module(filename: str) -> str:
    """The module of a source file, relative to tinytc_py (or the file name)."""
    return filename.split("/tinytc_py/", 1)[-1] if "/tinytc_py/" in filename else filename


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("-d", "--device", default="pvc", choices=DEVICES)
    ap.add_argument("--top", type=int, default=12)
    args = ap.parse_args(argv)
    info = core_info_for_device(args.device)
    for name, path in PROGRAMS.items():
        text = path.read_text(encoding="utf-8")
        compile_steps(text, info)  # imports and first-use memos outside the profile
        prof = cProfile.Profile()
        for _ in range(args.repeat):
            prof.runcall(compile_steps, text, info)
        stats = pstats.Stats(prof)
        total = stats.total_tt / args.repeat * 1e3  # type: ignore[attr-defined]
        parts: dict[str, float] = defaultdict(float)
        modules: dict[str, float] = defaultdict(float)
        rows = []
        for (filename, line, func), (_cc, calls, tt, _ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
            parts[part(filename)] += tt
            modules[module(filename)] += tt
            rows.append(
                (tt, calls, f"{part(filename)}:{filename.rsplit('/', 1)[-1]}:{line}({func})")
            )
        print(f"== {name}: {total:.2f} ms per compile under cProfile ({args.repeat} runs)")
        for key, tt in sorted(parts.items(), key=lambda kv: -kv[1]):
            print(f"  {key:<24} {100 * tt / stats.total_tt:5.1f} %")  # type: ignore[attr-defined]
        print(f"  top {args.top} modules by own time:")
        for key, tt in sorted(modules.items(), key=lambda kv: -kv[1])[: args.top]:
            print(f"    {100 * tt / stats.total_tt:5.1f} %  {key}")  # type: ignore[attr-defined]
        print(f"  top {args.top} functions by own time (% of total, calls per compile):")
        for tt, calls, where in sorted(rows, reverse=True)[: args.top]:
            share = 100 * tt / stats.total_tt  # type: ignore[attr-defined]
            print(f"    {share:5.1f} %  {calls // args.repeat:>6}  {where}")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
