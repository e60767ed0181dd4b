"""lower-linalg for the instructions whose work-items cooperate through subgroup operations and
shared local memory (docs/design.md §B4.3); each becomes a `parallel` region.

With S the subgroup size and T = m_tiles*n_tiles subgroups per work-group (sg =
subgroup_linear_id, lane = subgroup_local_id):

- axpby with a 0-d B: only lane 0 of subgroup 0 computes B = alpha*A + beta*B.
- sum of a 1-d A to a 0-d b: work-item (sg, lane) adds A[sg*S + lane + k*S*T] for k = 0, 1, ...;
  subgroup_reduce_add. With T > 1, lane 0 of each subgroup stores its partial into an SLM
  alloca of T elements of b's type, barrier, subgroup 0 adds the partials (subgroup_reduce_add
  again) and its lane 0 does the update; a final barrier protects the SLM from whatever reuses it.
- cumsum of a 1-d A: blocks of S*T elements in turn (the trip count is a multiple of S*T, so
  every subgroup reaches the barriers); per block subgroup_inclusive_scan_add, then with T > 1
  the last lane of each subgroup stores its subgroup's total into SLM, barrier, each work-item
  adds the totals of the earlier subgroups (its prefix) and of all subgroups (the block total),
  barrier. The running prefix is carried from block to block.
- cumsum along mode 0 of an n-d A: subgroups take the columns j round-robin and scan them alone
  (blocks of S, running prefix = broadcast of the last lane); modes >= 2 are plain for loops.
"""

from __future__ import annotations

from ..ir.types import as_memref
from ..ir.values import Value
from .lower_linalg_common import LinalgGen


def axpby_scalar(g: LinalgGen) -> None:
    alpha, A, beta, B = g.op("alpha"), g.op("A"), g.op("beta"), g.op("B")
    with g.b.parallel():
        sg = g.builtin("subgroup_linear_id")
        lane = g.builtin("subgroup_local_id")
        first = g.binary("and", g.binary("equal", sg, g.i32(0)), g.binary("equal", lane, g.i32(0)))
        g.if_then(first, lambda: g.update(alpha, g.load(A, []), beta, B, []))


def last_lane(g: LinalgGen, x: Value) -> Value:
    """`x` of the subgroup's last lane, in every lane (subgroup_broadcast)."""
    return g.b.value("subgroup_broadcast", {"a": x, "idx": g.i32(g.sgs - 1)})


class _Ids:
    """lane and subgroup ids as i32 and index values."""

    def __init__(self, g: LinalgGen) -> None:
        self.lane32 = g.builtin("subgroup_local_id")
        self.lane = g.cast(self.lane32, g.index)
        self.sg32 = g.builtin("subgroup_linear_id")
        self.sg = g.cast(self.sg32, g.index)


def sum_to_scalar(g: LinalgGen) -> None:
    alpha, A, beta, B = g.op("alpha"), g.op("A"), g.op("beta"), g.op("B")
    ty = as_memref(B.type).element
    S, T, f = g.sgs, g.tiles, g.f
    n = g.extent(A, 0)
    slm = g.b.value("alloca", {}, None, g.local_memref(ty, T)) if T > 1 else None
    with g.b.parallel():
        ids = _Ids(g)
        start = f.add(f.mul(ids.sg, S, g.index), ids.lane, g.index)

        def add_a(i: Value, acc: list[Value]) -> list[Value]:
            return [g.binary("add", acc[0], g.promote(g.load(A, [i]), ty))]

        (acc,) = g.loop(start, n, S * T, [g.zero(ty)], add_a)
        partial = g.unary("subgroup_reduce_add", acc)
        lane0 = g.binary("equal", ids.lane32, g.i32(0))
        if slm is None:
            g.if_then(lane0, lambda: g.update(alpha, partial, beta, B, []))
        else:
            g.if_then(lane0, lambda: g.store(partial, slm, [ids.sg]))
            g.barrier_local()

            def reduce_partials() -> None:
                def add_p(j: Value, acc: list[Value]) -> list[Value]:
                    return [g.binary("add", acc[0], g.load(slm, [j]))]

                (v,) = g.loop(ids.lane, T, S, [g.zero(ty)], add_p)
                total = g.unary("subgroup_reduce_add", v)
                g.if_then(
                    g.binary("equal", ids.lane32, g.i32(0)),
                    lambda: g.update(alpha, total, beta, B, []),
                )

            g.if_then(g.binary("equal", ids.sg32, g.i32(0)), reduce_partials)
            g.barrier_local()
    if slm is not None:
        g.b.emit("lifetime_stop", {"object": slm})


def cumsum_workgroup(g: LinalgGen) -> None:
    """1-d cumsum: work-group inclusive scan."""
    alpha, A, beta, B = g.op("alpha"), g.op("A"), g.op("beta"), g.op("B")
    ty = as_memref(B.type).element
    S, T, f, ix = g.sgs, g.tiles, g.f, g.index
    n = g.extent(A, 0)
    block = S * T
    rounded = f.mul(f.div(f.add(n, block - 1, ix), block, ix), block, ix)
    slm = g.b.value("alloca", {}, None, g.local_memref(ty, T)) if T > 1 else None
    with g.b.parallel():
        ids = _Ids(g)
        offset = f.add(f.mul(ids.sg, S, ix), ids.lane, ix)

        def step(i0: Value, carried: list[Value]) -> list[Value]:
            (prefix,) = carried
            i = g.idx(f.add(i0, offset, ix))
            inside = g.binary("less_than", i, g.idx(n))
            a = g.if_value(inside, ty, lambda: g.promote(g.load(A, [i]), ty), lambda: g.zero(ty))
            s = g.unary("subgroup_inclusive_scan_add", a)
            if slm is None:
                total = last_lane(g, s)
                run = g.binary("add", prefix, s)
            else:
                last = g.binary("equal", ids.lane32, g.i32(S - 1))
                g.if_then(last, lambda: g.store(s, slm, [ids.sg]))
                g.barrier_local()

                def add_p(j: Value, acc: list[Value]) -> list[Value]:
                    return [g.binary("add", acc[0], g.load(slm, [j]))]

                (before,) = g.loop(0, ids.sg, None, [g.zero(ty)], add_p)
                (total,) = g.loop(ids.sg, T, None, [before], add_p)
                g.barrier_local()
                run = g.binary("add", g.binary("add", prefix, before), s)
            g.if_then(inside, lambda: g.update(alpha, run, beta, B, [i]))
            return [g.binary("add", prefix, total)]

        g.loop(0, rounded, block, [g.zero(ty)], step)
    if slm is not None:
        g.b.emit("lifetime_stop", {"object": slm})


def cumsum_columns(g: LinalgGen) -> None:
    """cumsum along mode 0 of an n-d A (n >= 2): one subgroup per column."""
    alpha, A, beta, B = g.op("alpha"), g.op("A"), g.op("beta"), g.op("B")
    ty = as_memref(B.type).element
    S, T, f, ix = g.sgs, g.tiles, g.f, g.index
    order = as_memref(A.type).order
    extents = [g.extent(A, d) for d in range(order)]
    with g.b.parallel():
        ids = _Ids(g)

        def scan(rest: list[Value]) -> None:
            def step(i0: Value, carried: list[Value]) -> list[Value]:
                (prefix,) = carried
                i = g.idx(f.add(i0, ids.lane, ix))
                index = [i] + rest
                inside = g.binary("less_than", i, g.idx(extents[0]))
                a = g.if_value(
                    inside, ty, lambda: g.promote(g.load(A, index), ty), lambda: g.zero(ty)
                )
                s = g.unary("subgroup_inclusive_scan_add", a)
                run = g.binary("add", prefix, s)
                g.if_then(inside, lambda: g.update(alpha, run, beta, B, index))
                total = last_lane(g, s)
                return [g.binary("add", prefix, total)]

            g.loop(0, extents[0], S, [g.zero(ty)], step)

        def outer(dims: list[int], rest: list[Value]) -> None:
            if not dims:
                g.loop(ids.sg, extents[1], T, [], lambda j, _: scan([j] + rest) or [])
                return
            d = dims[0]
            g.loop(0, extents[d], None, [], lambda k, _: outer(dims[1:], [k] + rest) or [])

        outer(list(range(order - 1, 1, -1)), [])
