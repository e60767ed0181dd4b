"""`make fuzz`: the long mode of the front-end fuzzer. Runs N mutated lit programs (default
10^6) through tests/fuzz/frontend.py's property on all cores; every eighth input that parses is
also compiled to SPIR-V (validated by spirv-val). An input that raises anything but a located
CompilationError (or a TinytcError from the compiler) is a crash, one that takes more than
HANG_SECONDS of CPU time a hang (CPU, not wall-clock time: a busy machine must not make hangs);
both are printed with their seed. Prints the counts; exit status 1 if
there was a crash or a hang."""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
# the compiler validates what it emits only when asked (self_checks.py); the workers inherit it
os.environ.setdefault("TINYTC_VALIDATE", "1")

from tests.fuzz.frontend import check, corpus, mutate  # noqa: E402

from tinytc_py.compiler import compile_to_spirv  # noqa: E402
from tinytc_py.errors import TinytcError  # noqa: E402
from tinytc_py.text.dialect import parse  # noqa: E402

HANG_SECONDS = 20
CHUNK = 2000


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang


def one(seed: int, counts: dict[str, int]) -> str | None:
    """Runs input `seed`; returns a failure description or None."""
    rng = random.Random(seed)
    pieces = corpus()
    text = mutate(pieces[rng.randrange(len(pieces))], rng)
    signal.setitimer(signal.ITIMER_VIRTUAL, HANG_SECONDS)
    try:
        if check(text):
            counts["parsed"] += 1
            if counts["parsed"] % 8 == 0:
                counts["compiled"] += 1
                try:
                    compile_to_spirv(parse(text))
                except TinytcError:
                    counts["compile errors"] += 1
    except Hang:
        counts["hangs"] += 1
        return f"hang (>{HANG_SECONDS} s of CPU): seed {seed}"
    except BaseException as e:  # noqa: BLE001  (anything escaping is what we look for)
        counts["crashes"] += 1
        return f"crash: seed {seed}: {type(e).__name__}: {str(e)[:300]}"
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
    return None


def run_chunk(bounds: tuple[int, int]) -> tuple[dict[str, int], list[str]]:
    signal.signal(signal.SIGVTALRM, _alarm)
    counts = dict.fromkeys(
        ("inputs", "parsed", "compiled", "compile errors", "crashes", "hangs"), 0
    )
    failures = []
    for seed in range(*bounds):
        counts["inputs"] += 1
        failure = one(seed, counts)
        if failure:
            failures.append(failure)
    return counts, failures


def summary(total: dict[str, int], started: float) -> str:
    return (
        f"front-end fuzz: {total['inputs']} inputs in {time.time() - started:.0f} s, "
        f"{total['parsed']} parsed (round trip checked), {total['compiled']} compiled "
        f"({total['compile errors']} located compile errors), {total['crashes']} crashes, "
        f"{total['hangs']} hangs"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=1_000_000, help="number of inputs")
    parser.add_argument("--seed", type=int, default=0, help="first input's seed")
    parser.add_argument("-j", type=int, default=os.cpu_count() or 1, help="processes")
    args = parser.parse_args()
    total: dict[str, int] = {}
    started = time.time()
    end = args.seed + args.n
    chunks = [(s, min(s + CHUNK, end)) for s in range(args.seed, end, CHUNK)]
    with multiprocessing.Pool(args.j) as pool:
        for counts, failures in pool.imap_unordered(run_chunk, chunks):
            for key, value in counts.items():
                total[key] = total.get(key, 0) + value
            for failure in failures:
                print(failure, flush=True)
            if total["inputs"] % 100_000 == 0:
                print(summary(total, started), flush=True)
    print(summary(total, started))
    return 1 if total["crashes"] or total["hangs"] else 0


if __name__ == "__main__":
    sys.exit(main())
