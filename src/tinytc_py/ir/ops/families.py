"""The family modules of the instruction table, in table order: defined once, for the table
(ops/__init__.py) and for tools/gen_inst_leaves.py, which writes leaves.py from their rows. A
module of its own, imported before leaves.py, so that the tool still finds the families when an
out-of-date leaves.py makes the package's import fail."""

from __future__ import annotations

from . import arith, blas, control, coopmatrix, extensions, memory, spmd

FAMILIES = (blas, arith, memory, control, spmd, coopmatrix, extensions)
