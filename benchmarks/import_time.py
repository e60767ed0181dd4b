"""Start-up cost of the package: `python -X importtime -c "import tinytc_py"`, repeated, with a
table of the slowest modules of the median run and the total against the 50 ms goal.

    .venv/bin/python benchmarks/import_time.py [--repeat N] [--top K]

`import tinytc_py` loads only the error classes; the compiler, NumPy and the runtimes come with
the first use of `tinytc_py.compile` and friends, so scripts that merely import the package (or
its console scripts' `--help`) start fast.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

GOAL_MS = 50.0


def import_times() -> dict[str, int]:
    """Module -> cumulative import time in microseconds, from one fresh interpreter."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import tinytc_py"],
        capture_output=True,
        text=True,
        check=True,
    )
    times = {}
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = (part.strip() for part in line.split(":", 1)[1].split("|"))
        if cumulative.isdigit():
            times[name] = int(cumulative)
    return times


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=11)
    ap.add_argument("--top", type=int, default=8, help="slowest modules to list")
    args = ap.parse_args(argv)
    runs = sorted((import_times() for _ in range(args.repeat)), key=lambda t: t["tinytc_py"])
    median = runs[len(runs) // 2]
    totals = [r["tinytc_py"] / 1000 for r in runs]
    print(f"{'module (median run)':40} {'cumulative ms':>14}")
    for name, us in sorted(median.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"{name:40} {us / 1000:14.2f}")
    total = statistics.median(totals)
    print(
        f"\nimport tinytc_py: median {total:.1f} ms, min {min(totals):.1f} ms, "
        f"max {max(totals):.1f} ms over {args.repeat} runs (goal <= {GOAL_MS:.0f} ms): "
        + ("OK" if total <= GOAL_MS else "OVER")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
