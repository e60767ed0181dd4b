"""The register blocking of a GEMM micro-kernel and the key it is chosen for.

A blocking is what the cost model (analysis/gemm_model.py) or the autotuner
(gemm_tuning.py) decides for one gemm: how many subgroup-sized row blocks and how many
columns one subgroup keeps in accumulators, and how many K steps one loop iteration loads.
The key names everything the best choice depends on besides the device, so tuned choices can
be stored per device and reused (core info `gemm_blockings`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GemmKey:
    """A gemm as the tuner sees it: C (M x N) += A (M x K) B (K x N) with the element types
    of A, B, C and the transposes of A, B; a size not known at compile time is -1."""

    M: int
    N: int
    K: int
    types: tuple[str, str, str]
    transposes: tuple[bool, bool]

    def text(self) -> str:
        """A stable, readable form (the tuning cache's key)."""
        sizes = "x".join("?" if x < 0 else str(x) for x in (self.M, self.N, self.K))
        trans = "".join("t" if t else "n" for t in self.transposes)
        return f"{sizes}:{','.join(self.types)}:{trans}"

    @classmethod
    def from_text(cls, text: str) -> GemmKey:
        sizes, types, trans = text.split(":")
        m, n, k = (-1 if x == "?" else int(x) for x in sizes.split("x"))
        a, b, c = types.split(",")
        return cls(m, n, k, (a, b, c), (trans[0] == "t", trans[1] == "t"))


@dataclass(frozen=True)
class GemmBlocking:
    """row_blocks x subgroup_size rows and `cols` columns of C per subgroup tile (the
    accumulators), `k_unroll` K steps per iteration of the K loop (a power of two)."""

    row_blocks: int
    cols: int
    k_unroll: int

    def text(self) -> str:
        return f"{self.row_blocks}x{self.cols}k{self.k_unroll}"

    @classmethod
    def from_text(cls, text: str) -> GemmBlocking:
        rows, rest = text.split("x")
        cols, k = rest.split("k")
        return cls(int(rows), int(cols), int(k))
