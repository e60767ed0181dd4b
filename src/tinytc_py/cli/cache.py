"""tinytc-cache: look at, fill and clear the kernel cache (kernel_cache/).

    tinytc-cache list                 one line per entry: kind, key, size, last use (newest first)
    tinytc-cache stats [--json]       hits, misses, compiles, device builds, waits over all
                                      processes; entries, size and bound; whether it is used
    tinytc-cache warm FILE.ir... [-d opencl|level_zero]
                                      compile and build the programs for the runtime's default
                                      device, so a job's ranks start warm
    tinytc-cache clear                remove every entry, lock and the statistics, and the
                                      temporary files and folders a crash left behind

The folder is the one the compiler uses ($TINYTC_CACHE_DIR/kernels, else the user cache
folder); `--dir DIR` on any subcommand uses DIR instead. Output cut short by a closed pipe
(`tinytc-cache list | head`) ends quietly.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from ..cache_dir import ENV_DIR
from ..errors import TinytcError
from ..kernel_cache import stats, store, trust
from ..kernel_cache.warm import warm
from . import add_version_option

RUNTIMES = ("opencl", "level_zero")


def _list(args: argparse.Namespace) -> int:
    for e in reversed(store.entries()):
        kind, _, key = e.name.partition("-")
        used = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(e.last_use))
        print(f"{kind:<7} {key[:16]}  {e.size:>10} B  {used}")
    return 0


def summary() -> dict[str, Any]:
    """What `stats --json` prints: the summed counters (hits and misses of both levels
    together, and each level's own), the entries, and whether the folder is used."""
    totals = stats.totals()
    found = store.entries()
    try:
        trust.check()
        refused = None
    except trust.Untrusted as why:
        refused = str(why)
    counters = {k: v for k, v in totals.items() if k not in stats.NOT_COUNTERS}
    return {
        "folder": str(store.folder()),
        "used": refused is None,
        "refused_because": refused,
        "hits": counters.get("spirv_hits", 0) + counters.get("native_hits", 0),
        "misses": counters.get("spirv_misses", 0) + counters.get("native_misses", 0),
        "compiles": counters.get("compiles", 0),
        "device_builds": counters.get("device_builds", 0),
        "waits": counters.get("waits", 0),
        "entries": {
            "spirv": sum(e.name.startswith("spirv-") for e in found),
            "native": sum(e.name.startswith("native-") for e in found),
        },
        "bytes": sum(e.size for e in found),
        "bound": store.max_bytes(),
        "counters": counters,
    }


def _stats(args: argparse.Namespace) -> int:
    s = summary()
    if args.json:
        print(json.dumps(s, indent=2, sort_keys=True))
        return 0
    c, found = s["counters"], s["entries"]
    rows = [
        ("folder", str(s["folder"])),
        ("used", "yes" if s["used"] else f"no: {s['refused_because']}"),
        ("entries", f"{found['spirv']} SPIR-V, {found['native']} native"),
        ("bytes", f"{s['bytes']} (bound {s['bound']})"),
        ("hits", f"{c.get('spirv_hits', 0)} SPIR-V, {c.get('native_hits', 0)} native"),
        ("misses", f"{c.get('spirv_misses', 0)} SPIR-V, {c.get('native_misses', 0)} native"),
        ("compiles", str(s["compiles"])),
        ("device builds", str(s["device_builds"])),
        ("waits for another build", str(s["waits"])),
        ("lock timeouts", str(c.get("lock_timeouts", 0))),
        ("stale locks removed", str(c.get("stale_locks", 0))),
        ("corrupt entries rebuilt", str(c.get("corrupt", 0))),
        ("entries evicted", str(c.get("evicted", 0))),
        ("bytes written", str(c.get("bytes_written", 0))),
        (
            "tuned GEMM shapes",
            f"{c.get('tuning_hits', 0)} reused, {c.get('tuning_misses', 0)} timed",
        ),  # fmt: skip
    ]
    for name, value in rows:
        print(f"{name + ':':<25}{value}")
    return 0


def _builder(runtime: str) -> Callable[[str], object]:
    """The program builder of `runtime` for its default device (loaded only when used: each
    needs its own driver stack)."""
    if runtime == "level_zero":
        from ..runtime import level_zero

        return level_zero.program
    from ..runtime import opencl

    return opencl.program


def _warm(args: argparse.Namespace) -> int:
    try:
        build = _builder(args.device)
    except ImportError as err:  # e.g. pyopencl not installed
        print(f"tinytc-cache warm: runtime {args.device}: {err}", file=sys.stderr)
        return 1
    for file in args.files:
        try:
            done = warm([file], build)
        except TinytcError as err:
            print(f"tinytc-cache warm: {file}: {err}", file=sys.stderr)
            return 1
        compiled = "compiled" if done.get("compiles") else "SPIR-V cached"
        built = "built" if done.get("device_builds") else "device binary cached"
        print(f"{file}: {compiled}, {built}")
    return 0


def _clear(args: argparse.Namespace) -> int:
    # the statistics first: an entry another process writes while the entries go is then
    # counted in the new totals, which bound the folder's size (store.py)
    stats.reset_totals()
    removed = store.clear()
    print(f"removed {removed} entries from {store.folder()}")
    return 0


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="tinytc-cache", description="Inspect and fill the kernel cache."
    )
    add_version_option(ap)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--dir",
        metavar="DIR",
        help=f"the cache folder (default: ${ENV_DIR}, else the user cache folder)",
    )
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sub.add_parser("list", parents=[common], help="one line per entry").set_defaults(run=_list)
    st = sub.add_parser("stats", parents=[common], help="counters over all processes")
    st.add_argument("--json", action="store_true", help="print JSON for scripts")
    st.set_defaults(run=_stats)
    wm = sub.add_parser("warm", parents=[common], help="compile and build programs into it")
    wm.add_argument("files", nargs="+", metavar="FILE.ir", help="tensor-language programs")
    wm.add_argument(
        "-d",
        "--device",
        choices=RUNTIMES,
        default="opencl",
        help="the runtime whose default device the programs are built for (default opencl)",
    )
    wm.set_defaults(run=_warm)
    sub.add_parser("clear", parents=[common], help="remove everything").set_defaults(run=_clear)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.dir:
        os.environ[ENV_DIR] = args.dir
    try:
        status = args.run(args)
        sys.stdout.flush()  # here, where a closed pipe can be told apart
        return status
    except BrokenPipeError:  # `tinytc-cache list | head`: the reader has seen enough
        _quiet_stdout()
        return 0
    except OSError as err:  # e.g. a folder this user may not list
        print(f"tinytc-cache: {store.folder()}: {err.strerror or err}", file=sys.stderr)
        return 1


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush of what the closed pipe did
    not take raises no second BrokenPipeError at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())
