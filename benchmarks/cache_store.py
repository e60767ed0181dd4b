"""The disk write of a kernel-cache miss as the cache folder fills: `store.put` of a new
10 kB entry into a folder already holding 0, 1000 and 5000 entries, far below the size bound.

    .venv/bin/python benchmarks/cache_store.py [--repeat N]

A miss writes the entry (temporary file and rename), adds to the statistics file and keeps the
folder under TINYTC_CACHE_MAX_MB; this script shows whether that last step grows with the
folder (MPI ranks and applications with many kernels share one folder). The folder is filled
by copying one stored entry, so filling costs no eviction work. Wall ms, median of --repeat
writes of distinct keys; the header names the CPU.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time

from timing import cpu_description
from tinytc_py.kernel_cache import store

PAYLOAD = os.urandom(10_000)


def fill(count: int) -> None:
    """`count` entries in the (empty) folder: one written by the store, the rest copies."""
    if not count:
        return
    store.put("fill-0", PAYLOAD)
    first = store.folder() / ("fill-0" + store.SUFFIX)
    for i in range(1, count):
        shutil.copyfile(first, store.folder() / f"fill-{i}{store.SUFFIX}")


def miss_ms(count: int, repeat: int) -> float:
    with tempfile.TemporaryDirectory() as root:
        os.environ["TINYTC_CACHE_DIR"] = root
        fill(count)
        store.put("warm-up", PAYLOAD)
        times = []
        for i in range(repeat):
            t0 = time.perf_counter()
            store.put(f"new-{i}", PAYLOAD)
            times.append(time.perf_counter() - t0)
        return statistics.median(times) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=41)
    args = ap.parse_args()
    os.environ.pop("TINYTC_CACHE_MAX_MB", None)  # the default bound, far above these folders
    print(f"kernel cache: time of one entry write (store.put), {cpu_description()}")
    print(f"{'entries in folder':>18}  {'miss write ms':>13}")
    for count in (0, 1000, 5000):
        print(f"{count:>18}  {miss_ms(count, args.repeat):>13.3f}")


if __name__ == "__main__":
    main()
