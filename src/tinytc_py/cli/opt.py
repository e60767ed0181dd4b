"""tinytc-opt: run passes on tensor-language text; command-line compatible with upstream.

    tinytc-opt [-O0|-O1|-O2] [-f FLAG|-f no-FLAG]... [-p PASS]... [FILE]

Reads FILE (stdin when absent), runs the passes in order and prints the resulting IR to stdout,
unless a dump pass ran (its output is then the result). Errors go to stderr with their location,
and the exit status is 1.
"""

from __future__ import annotations

import argparse
import sys

from ..errors import TinytcError
from ..ir.context import CompilerContext
from ..ir.enums import OptFlag
from ..passes.registry import PASSES, get_pass, run_function_pass
from ..text.parser import parse
from ..text.printer import print_prog


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="tinytc-opt", description="Run passes on tensor-language IR.")
    ap.add_argument(
        "-O",
        dest="opt_level",
        type=int,
        choices=(0, 1, 2),
        default=2,
        help="optimization level (default 2)",
    )
    ap.add_argument(
        "-f",
        dest="flags",
        action="append",
        default=[],
        metavar="FLAG",
        help="enable FLAG, or disable it with no-FLAG (flags: unsafe-fp-math)",
    )
    ap.add_argument(
        "-p",
        dest="passes",
        action="append",
        default=[],
        metavar="PASS",
        help="run PASS (" + ", ".join(sorted(PASSES)) + ")",
    )
    ap.add_argument("file", nargs="?", help="input file (stdin when absent)")
    return ap


def set_flags(ctx: CompilerContext, flags: list[str]) -> None:
    """Applies -f options; raises ValueError for an unknown flag."""
    for flag in flags:
        state = 0 if flag.startswith("no-") else 1
        name = flag.removeprefix("no-").replace("-", "_")
        if name not in OptFlag.__members__:
            raise ValueError(f"unknown flag '{flag}'")
        ctx.set_optimization_flag(OptFlag[name], state)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    ctx = CompilerContext()
    ctx.opt_level = args.opt_level
    try:
        set_flags(ctx, args.flags)
        for name in args.passes:
            get_pass(name)
    except (ValueError, TinytcError) as exc:
        print(f"tinytc-opt: {exc}", file=sys.stderr)
        return 1
    if args.file:
        try:
            with open(args.file, encoding="utf-8") as f:
                text = f.read()
        except OSError as exc:
            print(f"tinytc-opt: {exc}", file=sys.stderr)
            return 1
    else:
        text = sys.stdin.read()
    try:
        prog = parse(text, ctx, args.file or "<stdin>")
        dumped = False
        for name in args.passes:
            run_function_pass(name, prog, sys.stdout)
            dumped = dumped or PASSES[name].dumps
        if not dumped:
            sys.stdout.write(print_prog(prog))
    except TinytcError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
