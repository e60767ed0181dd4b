"""The programs the compile and first-result benchmarks measure (issue 29's set): two examples
of the repository and three programs kept here as .ir files, so that the same text goes through
our compiler and, for a side-by-side run, upstream's."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent / "programs"

# name -> .ir file
PROGRAMS: dict[str, Path] = {
    "gemm.ir": ROOT / "examples" / "ir" / "gemm.ir",
    "matvec_batched.ir": ROOT / "examples" / "ir" / "matvec_batched.ir",
    "batched 16^3 GEMM": HERE / "gemm_16_batched.ir",
    "attention block": HERE / "attention.ir",
    "four GEMMs f64": HERE / "four_gemm_f64.ir",
}


def upstream_build() -> Path | None:
    """Upstream's CMake build folder from TINYTC_UPSTREAM_BUILD (None: no upstream column)."""
    value = os.environ.get("TINYTC_UPSTREAM_BUILD")
    return Path(value) if value else None
