"""The work-item layout of a cooperative matrix (docs/design.md §B3.1).

Pure arithmetic on the type and the subgroup size S; nothing here emits code, so the SPIR-V
conversion and the IR pass lower-coopmatrix (which unrolls cooperative_matrix_apply over the
components) share it and agree on what component v of a work-item means.

For `coopmatrix<T x M x N, use>`:

    I  = min(M, S)                   rows held "in lanes"
    J  = ceil(I*N/S) * S / I         padded column count (J = N when M >= S)
    K  = M / I                       row blocks
    K1 = 2 for matrix_b with K > 1 and size(T) == 1, else 1
    V  = I*J*K / S                   components per work-item

Component v of lane p splits into (k1, u, k2) as v = k1 + u*K1 + k2*K1*L, where L = V/K is the
number of columns a lane holds per block (L equals J whenever K > 1, because then I = S), and
holds the element

    row = p % I + (k1 + k2*K1)*I,   col = p / I + u*(S/I).

Columns col >= N are padding (zero after a load, never stored). M must be a power of two.

The conversion asks which component holds an element once per element it emits, so the
methods are plain integer arithmetic on fields (mypyc compiles them to native code and returns
the pairs unboxed): computing an owner costs less than building and indexing a table of them,
which a cold compile would make anew per layout. Layouts are immutable and depend only on a
few integers, so `coop_layout` hands out one shared object per distinct layout.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from ..ir.enums import MatrixUse
from ..ir.types import CoopmatrixType


@dataclass(frozen=True)
class CoopLayout:
    rows: int  # M
    cols: int  # N
    sgs: int  # S
    I: int
    J: int
    K: int
    K1: int
    V: int

    # Derived in __post_init__ (plain attributes: the conversion asks for them per element).
    cols_per_lane: int = field(init=False, compare=False)  # columns per row block (V / K)
    col_step: int = field(init=False, compare=False)  # between a lane's columns (S / I)

    def __post_init__(self) -> None:
        object.__setattr__(self, "cols_per_lane", self.V // self.K)
        object.__setattr__(self, "col_step", self.sgs // self.I)

    def component(self, block: int, u: int) -> int:
        """Component number of row block `block` (rows block*I ...) and lane column `u`."""
        k1, k2 = block % self.K1, block // self.K1
        return k1 + u * self.K1 + k2 * self.K1 * self.cols_per_lane

    def block_col(self, v: int) -> tuple[int, int]:
        """(row block, lane column u) of component v."""
        k1 = v % self.K1
        u = v // self.K1 % self.cols_per_lane
        k2 = v // (self.K1 * self.cols_per_lane)
        return k1 + k2 * self.K1, u

    def element(self, v: int, lane: int) -> tuple[int, int]:
        """(row, col) of the element that component v of `lane` holds (col >= N: padding)."""
        block, u = self.block_col(v)
        return lane % self.I + block * self.I, lane // self.I + u * self.col_step

    def owner(self, row: int, col: int) -> tuple[int, int]:
        """(lane, component) holding element (row, col)."""
        lane = row % self.I + (col % self.col_step) * self.I
        return lane, self.component(row // self.I, col // self.col_step)

    def may_pad(self, u: int) -> bool:
        """Whether lane column u reaches padding columns (col >= N) in some lane."""
        return (u + 1) * self.col_step > self.cols


def coop_layout(ct: CoopmatrixType, sgs: int) -> CoopLayout | None:
    """The layout of `ct` for subgroup size `sgs`; None when the row count is not a power of
    two (ir_unsupported_coopmatrix_shape)."""
    m, n = ct.rows, ct.cols
    if m <= 0 or m & (m - 1):
        return None
    i = min(m, sgs)
    j = -(-i * n // sgs) * sgs // i
    k = m // i
    k1 = 1
    if ct.use is MatrixUse.b and k > 1:
        k1 = max(1, 2 // ct.component.size)
    return coop_layout_memo(m, n, sgs, i, j, k, k1)


@lru_cache(maxsize=1024)
def coop_layout_memo(m: int, n: int, sgs: int, i: int, j: int, k: int, k1: int) -> CoopLayout:
    """The one CoopLayout of these numbers (see the module docstring)."""
    return CoopLayout(m, n, sgs, i, j, k, k1, i * j * k // sgs)
