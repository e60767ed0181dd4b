"""tinytc-cache: look at and clear the kernel cache (kernel_cache/).

    tinytc-cache list      one line per entry: kind, key, size, last use (most recent first)
    tinytc-cache stats     hits, misses and bytes over all processes, entries and the bound
    tinytc-cache clear     remove every entry and the statistics

The folder is the one the compiler uses: $TINYTC_CACHE_DIR/kernels, else the user cache folder.
"""

from __future__ import annotations

import argparse
import sys
import time

from ..kernel_cache import stats, store
from . import add_version_option


def _list() -> None:
    for e in reversed(store.entries()):
        kind, _, key = e.name.partition("-")
        used = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(e.last_use))
        print(f"{kind:<7} {key[:16]}  {e.size:>10} B  {used}")


def _stats() -> None:
    totals = stats.totals()
    found = store.entries()
    rows = [
        ("folder", str(store.folder())),
        (
            "entries",
            f"{sum(e.name.startswith('spirv-') for e in found)} SPIR-V, "
            f"{sum(e.name.startswith('native-') for e in found)} native",
        ),  # fmt: skip
        ("bytes", f"{sum(e.size for e in found)} (bound {store.max_bytes()})"),
        ("hits", f"{totals.get('spirv_hits', 0)} SPIR-V, {totals.get('native_hits', 0)} native"),
        (
            "misses",
            f"{totals.get('spirv_misses', 0)} SPIR-V, {totals.get('native_misses', 0)} native",
        ),  # fmt: skip
        ("corrupt entries rebuilt", str(totals.get("corrupt", 0))),
        ("entries evicted", str(totals.get("evicted", 0))),
        ("bytes written", str(totals.get("bytes_written", 0))),
        (
            "tuned GEMM shapes",
            f"{totals.get('tuning_hits', 0)} reused, {totals.get('tuning_misses', 0)} timed",
        ),  # fmt: skip
    ]
    for name, value in rows:
        print(f"{name + ':':<25}{value}")


def _clear() -> None:
    removed = store.clear()
    stats.reset_totals()
    print(f"removed {removed} entries from {store.folder()}")


COMMANDS = {"list": _list, "stats": _stats, "clear": _clear}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="tinytc-cache", description="Inspect the kernel cache.")
    add_version_option(ap)
    ap.add_argument("command", choices=sorted(COMMANDS))
    args = ap.parse_args(argv)
    try:
        COMMANDS[args.command]()
    except OSError as err:  # e.g. a folder this user may not list
        print(f"tinytc-cache: {store.folder()}: {err.strerror or err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
