"""Replays a corpus of recorded programs (src/tinytc_py/corpus.py) and compares replays: the
proof that a refactoring of the compiler changed no output.

    TINYTC_RECORD_CORPUS=/tmp/corpus .venv/bin/python -m pytest -q     # record
    .venv/bin/python tools/corpus.py replay /tmp/corpus -o before.json  # on the old tree
    .venv/bin/python tools/corpus.py replay /tmp/corpus -o after.json   # on the new tree
    .venv/bin/python tools/corpus.py compare before.json after.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pickle
import sys
from pathlib import Path
from typing import Any

from tinytc_py.compiler import compile_to_spirv
from tinytc_py.corpus import ENV
from tinytc_py.errors import TinytcError
from tinytc_py.ir.context import CompilerContext
from tinytc_py.ir.enums import OptFlag
from tinytc_py.text.dialect import parse

# Replays validate what they compile, as the test suite that recorded the corpus does (an
# invalid module is an "error:" outcome, so a change that breaks a module shows as a difference).
os.environ.setdefault("TINYTC_VALIDATE", "1")


def _outcome(text: str, core_info: Any, opt_level: int, flags: dict[str, bool]) -> str:
    ctx = CompilerContext()
    ctx.opt_level = opt_level
    for name, on in flags.items():
        ctx.set_optimization_flag(OptFlag[name], on)
    try:
        binary = compile_to_spirv(parse(text, ctx), core_info)
    except TinytcError as e:
        return "error: " + str(e)
    h = hashlib.sha256(binary.data)
    h.update(repr(sorted(binary.kernels.items())).encode())
    h.update(repr(binary.core_features).encode())
    return h.hexdigest()


def replay(folder: str | Path) -> dict[str, str]:
    """Record file name -> digest of the compiled output (or the error) under this compiler,
    with the kernel cache off."""
    os.environ["TINYTC_CACHE"] = "0"
    os.environ.pop(ENV, None)
    out = {}
    for path in sorted(Path(folder).glob("*.pkl")):
        out[path.name] = _outcome(*pickle.loads(path.read_bytes()))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("replay", help="compile every record; write name -> digest or error")
    r.add_argument("folder")
    r.add_argument("-o", "--out", required=True)
    c = sub.add_parser("compare", help="list the records whose outcome differs")
    c.add_argument("before")
    c.add_argument("after")
    args = ap.parse_args(argv)
    if args.cmd == "replay":
        out = replay(args.folder)
        with open(args.out, "w") as f:
            json.dump(out, f, indent=0, sort_keys=True)
        errors = sum(v.startswith("error: ") for v in out.values())
        print(f"{len(out)} programs replayed, {errors} rejected")
        return 0
    with open(args.before) as f:
        before = json.load(f)
    with open(args.after) as f:
        after = json.load(f)
    differ = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    for k in differ:
        print(f"{k}: {before.get(k, '(missing)')[:70]} -> {after.get(k, '(missing)')[:70]}")
    print(f"{len(before)} programs; {len(differ)} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
