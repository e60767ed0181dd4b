"""The nesting limit: how deep regions (and attributes) may nest.

The parser, the verifier, the passes, the printer and the SPIR-V conversion walk the region tree
recursively, a few Python frames per level. A limit far below Python's recursion limit makes a
program nested too deeply a located error instead of a `RecursionError` (or a crash of the C
host's thread); real kernels nest a handful of levels. The parser checks while it reads, the
builder while it inserts, and `check_nesting` (an iterative walk) guards every entry point that
takes a program built by other means (the C API builds bottom-up as well as top-down).
"""

from __future__ import annotations

from ..errors import CompilationError, Location, Status
from .region import Prog, Region

MAX_NESTING = 64


def nesting_error(loc: Location, what: str = "regions") -> CompilationError:
    return CompilationError(
        loc, Status.compilation_error, f"{what} nest deeper than {MAX_NESTING} levels"
    )


def region_depth(region: Region) -> int:
    """1 for a function body, 2 for a region of an instruction in it, and so on."""
    depth = 1
    parent = region.parent_region
    while parent is not None:
        depth += 1
        parent = parent.parent_region
    return depth


def check_nesting(prog: Prog) -> None:
    """Raises at the first instruction whose regions lie deeper than MAX_NESTING."""
    for func in prog.funcs:
        stack = [(func.body, 1)]
        while stack:
            region, depth = stack.pop()
            for inst in region.insts:
                if not inst.regions:
                    continue
                if depth >= MAX_NESTING:
                    raise nesting_error(inst.loc)
                stack.extend((child, depth + 1) for child in inst.regions)
