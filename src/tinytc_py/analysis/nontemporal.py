"""Where a nontemporal store of a memref can really be nontemporal: the one definition the gemm
lowering (passes/lower_linalg_gemm.py `nontemporal_c`, which gives up C's prefetch for it) and
the SPIR-V conversion (spirv/convert/coopmatrix_memory.py `cm_nontemporal_alignment`, which
states the alignment on the stores) share, so that a C the lowering stops prefetching is
stored nontemporal, not merely left unprefetched.

On a SIMD CPU core the CPU runtime's JIT makes one vector store of a row block's S lanes (S
consecutive elements of a column, S the subgroup size) and keeps the nontemporal hint only
where the vector's address is aligned (x86 has nontemporal vector stores for aligned addresses
only: vmovntpd). So the hint needs a global memref with contiguous columns of real elements, S
elements filling one vector register, and a base and column stride that are multiples of the
vector's bytes (analysis/gcd.py, which takes the parameters' alignment). Each store's own row
position, transpose and row check are the conversion's to test.
"""

from __future__ import annotations

from ..ir.enums import AddressSpace
from ..ir.types import as_memref
from ..ir.values import Value
from ..target.core_info import CoreInfo
from .gcd import memref_gcd


def nontemporal_alignment(memref: Value, sgs: int, info: CoreInfo) -> int:
    """The alignment in bytes of every row block of `sgs` lanes that starts at a row multiple
    of `sgs` in a column of `memref`, where such blocks can be stored nontemporal on `info`
    (the module docstring); 0 where they cannot."""
    mt = as_memref(memref.type)
    size = mt.element.size
    align = sgs * size
    if (
        not info.vector_register_size
        or align != info.vector_register_size
        or mt.element.is_complex
        or mt.addrspace is not AddressSpace.global_
        or len(mt.stride) != 2
        or mt.stride[0] != 1
    ):
        return 0
    known = memref_gcd(memref, info.default_alignment)
    if known.offset * size % align or known.stride[1] * size % align:
        return 0
    return align
