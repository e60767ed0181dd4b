"""Front-end speed: parse, verify (check-ir) and print generated programs of 1 000 and 10 000
instructions and print a table of median times.

    .venv/bin/python benchmarks/parse.py [--repeat N] [--sizes 1000,10000] [--profile SIZE]

The programs are a realistic mix of what kernels contain: constants, scalar arithmetic and casts,
subviews, gemms, for loops carrying a value through `yield`, and loads/stores in foreach loops.
The target is a total below 1 s for 10 000 instructions.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time

from tinytc_py.ir.context import CompilerContext
from tinytc_py.ir.region import Prog, Region
from tinytc_py.passes.registry import run_function_pass
from tinytc_py.text.dialect import parse
from tinytc_py.text.printer import print_prog

BLOCKS_PER_FUNC = 10

HEADER = (
    "func @kernel{f}(%A: memref<f32x64x64>, %B: memref<f32x64x64>, %C: memref<f32x64x64>,\n"
    "                %x: memref<f32x?>, %n: index) {{\n"
)

# 22 instructions per block; `{k}` makes every name unique in its function.
BLOCK = """\
    %c0_{k} = constant 0 : index
    %c1_{k} = constant 1 : index
    %c16_{k} = constant 16 : index
    %a_{k} = constant 1.5 : f32
    %b_{k} = constant 0x1.8p-3 : f32
    %s_{k} = mul %a_{k}, %b_{k} : f32
    %t_{k} = add %s_{k}, %a_{k} : f32
    %v_{k} = subview %A[0:16,0:16] : memref<f32x16x16,strided<1,64>>
    %w_{k} = subview %B[16:16,0:16] : memref<f32x16x16,strided<1,64>>
    %u_{k} = subview %C[0:16,16:16] : memref<f32x16x16,strided<1,64>>
    gemm.n.t %t_{k}, %v_{k}, %w_{k}, %b_{k}, %u_{k}
    %r_{k} = for %i_{k} = %c0_{k}, %c16_{k}, %c1_{k} init(%acc_{k} = %a_{k}) -> (f32) {{
        %l_{k} = load %x[%i_{k}] : f32
        %m_{k} = mul %l_{k}, %acc_{k} : f32
        %q_{k} = add %m_{k}, %b_{k} : f32
        yield (%q_{k})
    }}
    foreach (%j_{k}) = (%c0_{k}), (%n) {{
        %e_{k} = load %x[%j_{k}] : f32
        %f_{k} = mul %e_{k}, %r_{k} : f32
        %g_{k} = cast %f_{k} : f64
        %h_{k} = cast %g_{k} : f32
        store %h_{k}, %x[%j_{k}]
    }}
"""
INSTS_PER_BLOCK = 22


def generate(n_insts: int) -> str:
    """A program of about `n_insts` instructions, in functions of BLOCKS_PER_FUNC blocks."""
    blocks = max(1, round(n_insts / INSTS_PER_BLOCK))
    parts = []
    for f in range(0, blocks, BLOCKS_PER_FUNC):
        parts.append(HEADER.format(f=f // BLOCKS_PER_FUNC))
        for k in range(f, min(blocks, f + BLOCKS_PER_FUNC)):
            parts.append(BLOCK.format(k=k))
        parts.append("}\n")
    return "".join(parts)


def count(region: Region) -> int:
    return sum(1 + sum(count(r) for r in inst.regions) for inst in region.insts)


def count_prog(prog: Prog) -> int:
    return sum(count(func.body) for func in prog.funcs)


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn()
    return (time.perf_counter() - start) * 1e3, result


def measure(text: str, repeat: int) -> dict[str, float]:
    times: dict[str, list[float]] = {"parse": [], "verify": [], "print": [], "total": []}
    for _ in range(repeat):
        ctx = CompilerContext()
        t_parse, prog = timed(lambda: parse(text, ctx, "bench.ir"))  # noqa: B023
        t_verify, _ = timed(lambda: run_function_pass("check-ir", prog))  # noqa: B023
        t_print, out = timed(lambda: print_prog(prog))  # noqa: B023
        assert out
        times["parse"].append(t_parse)
        times["verify"].append(t_verify)
        times["print"].append(t_print)
        times["total"].append(t_parse + t_verify + t_print)
    return {key: statistics.median(values) for key, values in times.items()}


def profile(text: str) -> None:
    def run() -> None:
        prog = parse(text, CompilerContext(), "bench.ir")
        run_function_pass("check-ir", prog)
        print_prog(prog)

    prof = cProfile.Profile()
    prof.runcall(run)
    pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(25)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7, help="runs per size (median is shown)")
    ap.add_argument("--sizes", default="1000,10000", help="comma-separated instruction counts")
    ap.add_argument("--profile", type=int, metavar="SIZE", help="print a cProfile of one run")
    args = ap.parse_args(argv)
    if args.profile:
        profile(generate(args.profile))
        return 0
    print(
        f"{'instructions':>12} {'parse ms':>10} {'verify ms':>10} {'print ms':>10} {'total ms':>10}"
    )
    for size in (int(s) for s in args.sizes.split(",")):
        text = generate(size)
        n = count_prog(parse(text))
        t = measure(text, args.repeat)
        print(
            f"{n:>12} {t['parse']:>10.1f} {t['verify']:>10.1f} {t['print']:>10.1f} "
            f"{t['total']:>10.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
