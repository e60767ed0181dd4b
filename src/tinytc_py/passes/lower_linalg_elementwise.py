"""lower-linalg for the instructions that become `foreach` loops (docs/design.md §B4.3); lower-foreach
later distributes them over the work-group.

- axpby (1-d, 2-d): foreach over B; A[j,i] is read when .t is set on a 2-d A.
- ger: foreach (i,j): C[i,j] = alpha*a[i]*b[j] + beta*C[i,j].
- hadamard: foreach over all modes of C.
- gemv: foreach i, each work-item runs the K loop (K = size(A, 0 if .t else 1)) sequentially.
- sum, 2-d A to 1-d b: foreach i with a sequential reduction over the other mode.
- cumsum along a mode n != 0: foreach over the other modes with a sequential scan along n.

Products and sums are computed in the written operand's element type (inputs promoted first).
"""

from __future__ import annotations

from ..ir.enums import Transpose
from ..ir.types import as_memref
from ..ir.values import Value
from .lower_linalg_common import LinalgGen


def _params(p) -> list[Value]:
    return list(p) if isinstance(p, tuple) else [p]


def foreach_over(g: LinalgGen, extents: list, body) -> None:
    """foreach over [0, extents[d]) for every d; body(indices)."""
    zero = g.idx(0)
    with g.b.foreach([zero] * len(extents), [g.idx(e) for e in extents]) as p:
        body(_params(p))


def axpby(g: LinalgGen) -> None:
    alpha, A, beta, B = g.op("alpha"), g.op("A"), g.op("beta"), g.op("B")
    order = as_memref(B.type).order
    transposed = g.inst.props["tA"] is Transpose.t and order == 2

    def body(ix: list[Value]) -> None:
        a = g.load(A, ix[::-1] if transposed else ix)
        g.update(alpha, a, beta, B, ix)

    foreach_over(g, [g.extent(B, d) for d in range(order)], body)


def ger(g: LinalgGen) -> None:
    alpha, A, B, beta, C = (g.op(k) for k in ("alpha", "A", "B", "beta", "C"))
    ty = as_memref(C.type).element

    def body(ix: list[Value]) -> None:
        a = g.promote(g.load(A, ix[:1]), ty)
        b = g.promote(g.load(B, ix[1:]), ty)
        g.update(alpha, g.binary("mul", a, b), beta, C, ix)

    foreach_over(g, [g.extent(C, 0), g.extent(C, 1)], body)


def hadamard(g: LinalgGen) -> None:
    alpha, A, B, beta, C = (g.op(k) for k in ("alpha", "A", "B", "beta", "C"))
    ty = as_memref(C.type).element

    def body(ix: list[Value]) -> None:
        a = g.promote(g.load(A, ix), ty)
        b = g.promote(g.load(B, ix), ty)
        g.update(alpha, g.binary("mul", a, b), beta, C, ix)

    foreach_over(g, [g.extent(C, d) for d in range(as_memref(C.type).order)], body)


def gemv(g: LinalgGen) -> None:
    alpha, A, B, beta, C = (g.op(k) for k in ("alpha", "A", "B", "beta", "C"))
    ty = as_memref(C.type).element
    transposed = g.inst.props["tA"] is Transpose.t
    K = g.extent(A, 0 if transposed else 1)

    def body(ix: list[Value]) -> None:
        (i,) = ix

        def step(k: Value, acc: list[Value]) -> list[Value]:
            a = g.promote(g.load(A, [k, i] if transposed else [i, k]), ty)
            b = g.promote(g.load(B, [k]), ty)
            return [g.binary("add", acc[0], g.binary("mul", a, b))]

        (acc,) = g.loop(0, K, None, [g.zero(ty)], step)
        g.update(alpha, acc, beta, C, [i])

    foreach_over(g, [g.extent(C, 0)], body)


def sum_to_vector(g: LinalgGen) -> None:
    """sum with a 2-d A: b[i] = alpha * sum_k op(A)[i,k] + beta*b[i]."""
    alpha, A, beta, B = g.op("alpha"), g.op("A"), g.op("beta"), g.op("B")
    ty = as_memref(B.type).element
    transposed = g.inst.props["tA"] is Transpose.t
    K = g.extent(A, 0 if transposed else 1)

    def body(ix: list[Value]) -> None:
        (i,) = ix

        def step(k: Value, acc: list[Value]) -> list[Value]:
            a = g.promote(g.load(A, [k, i] if transposed else [i, k]), ty)
            return [g.binary("add", acc[0], a)]

        (acc,) = g.loop(0, K, None, [g.zero(ty)], step)
        g.update(alpha, acc, beta, B, [i])

    foreach_over(g, [g.extent(B, 0)], body)


def cumsum_sequential(g: LinalgGen) -> None:
    """cumsum along mode n != 0: foreach over the other modes, sequential scan along n."""
    alpha, A, beta, B = g.op("alpha"), g.op("A"), g.op("beta"), g.op("B")
    ty = as_memref(B.type).element
    mode = g.inst.props["mode"]
    order = as_memref(A.type).order
    others = [d for d in range(order) if d != mode]
    n = g.extent(A, mode)

    def body(ix: list[Value]) -> None:
        def step(k: Value, acc: list[Value]) -> list[Value]:
            index = ix[:mode] + [k] + ix[mode:]
            s = g.binary("add", acc[0], g.promote(g.load(A, index), ty))
            g.update(alpha, s, beta, B, index)
            return [s]

        g.loop(0, n, None, [g.zero(ty)], step)

    foreach_over(g, [g.extent(A, d) for d in others], body)
