"""tinytc-upgrade: rewrite legacy tensor-language text in the current language.

    tinytc-upgrade [FILE] [-o OUT]

Reads FILE (stdin when absent) as the legacy language (tinytc v0.3, and the transitional forms
of code generators such as yateto), and writes the program in the current language to OUT
(stdout when absent or "-"), keeping value names and comments. A located note on stderr (and a
`; note:` line in the output) marks every construct whose meaning or signature changes. Errors
go to stderr with their location, and the exit status is 1.
"""

from __future__ import annotations

import argparse
import sys

from ..errors import TinytcError, format_located
from ..ir.context import CompilerContext
from ..text.upgrade import upgrade
from . import add_version_option


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="tinytc-upgrade",
        description="Rewrite legacy tensor-language text in the current language.",
    )
    add_version_option(ap)
    ap.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    ap.add_argument("file", nargs="?", help="input file (stdin when absent)")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    name = args.file or "<stdin>"
    ctx = CompilerContext()
    try:
        if args.file and args.file != "-":
            with open(args.file, encoding="utf-8") as f:
                text = f.read()
        else:
            text = sys.stdin.read()
        result = upgrade(text, name, ctx)
        for loc, note in result.notes:
            print(format_located(ctx, loc, f"note: {note}").rstrip("\n"), file=sys.stderr)
        if args.output == "-":
            sys.stdout.write(result.text)
        else:
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(result.text)
    except TinytcError as exc:
        print(exc, file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"tinytc-upgrade: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
