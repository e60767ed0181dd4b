"""tinytc-opt: run passes on tensor-language text; command-line compatible with upstream.

    tinytc-opt [-d tgl|pvc|bmg|cpu] [-O0|-O1|-O2] [-f FLAG|-f no-FLAG]... [-p PASS]... [--legacy] [FILE]

Reads FILE (stdin when absent; legacy text as in `tinytc`, --legacy forces it), runs the passes in order and prints the resulting IR to stdout,
unless a dump pass ran (its output is then the result). Passes that depend on the device
(work-group-size, lower-foreach) get the core info of `-d` (default pvc, as in `tinytc`). With
`-f bounds-checks`, insert-bounds-checks runs where the compilation pipeline runs it: before
the first requested pass that follows it there, else after the last (unless -p names it). Errors go to stderr with their location, and the exit status is 1.
"""

from __future__ import annotations

import argparse
import inspect
import sys
from collections.abc import Callable

from ..errors import CompilationError, TinytcError
from ..ir.context import CompilerContext
from ..ir.enums import OptFlag
from ..ir.region import Prog
from ..options import core_info_for_device, set_flags
from ..passes.base import FunctionPass
from ..passes.insert_bounds_checks import PRECEDING, InsertBoundsChecks
from ..passes.registry import PASSES, get_pass
from ..target.core_info import CoreInfo
from ..text.dialect import parse
from ..text.printer import print_prog
from .options import add_common_options, add_legacy_option, dialect_of


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="tinytc-opt", description="Run passes on tensor-language IR.")
    add_common_options(ap, "core info for device-dependent passes")
    ap.add_argument(
        "-p",
        dest="passes",
        action="append",
        default=[],
        metavar="PASS",
        help="run PASS (" + ", ".join(sorted(PASSES)) + ")",
    )
    add_legacy_option(ap)
    ap.add_argument("file", nargs="?", help="input file (stdin when absent)")
    return ap


def make_pass(name: str, core_info: CoreInfo) -> FunctionPass:
    """The pass called `name`, given `core_info` when its constructor takes one."""
    get_pass(name)  # raises for an unknown name
    cls: Callable[..., FunctionPass] = PASSES[name]  # constructors differ per pass
    if "core_info" in inspect.signature(cls).parameters:
        return cls(core_info=core_info)
    return cls()


def _run(p: FunctionPass, prog: Prog) -> None:
    try:
        for func in prog.funcs:
            p.run(func, prog.ctx, sys.stdout)
    except CompilationError as err:
        raise prog.ctx.report(err) from None


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    ctx = CompilerContext()
    ctx.opt_level = args.opt_level
    try:
        set_flags(ctx, args.flags)
        info = core_info_for_device(args.device)
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
        prog = parse(text, ctx, args.file or "<stdin>", dialect_of(args))
        dumped = False
        # -f bounds-checks: the checks go where the pipeline puts them, before the first pass
        # that follows them there (or after the last pass), unless -p names the pass itself
        unchecked = (
            ctx.optimization_flag(OptFlag.bounds_checks)
            and InsertBoundsChecks.name not in args.passes
        )
        # As upstream's tinytc-opt: each pass is looked up when its turn comes, so an error of
        # an earlier pass is reported before an unknown name further down the list.
        for name in args.passes:
            try:
                p = make_pass(name, info)
            except TinytcError as exc:
                print(f"tinytc-opt: {exc}", file=sys.stderr)
                return 1
            if unchecked and name not in PRECEDING and not p.dumps:
                _run(InsertBoundsChecks(), prog)
                unchecked = False
            _run(p, prog)
            dumped = dumped or p.dumps
        if unchecked:
            _run(InsertBoundsChecks(), prog)
        if not dumped:
            sys.stdout.write(print_prog(prog))
    except TinytcError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
