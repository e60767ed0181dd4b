"""insert-bounds-checks: bounds-checked mode (OptFlag.bounds_checks, docs/bounds-checks.rst).

The function gets a trailing parameter `%bounds_report: memref<indexx7>` (the record of
bounds_record.py). Then, in program order:

- load, store, atomic_load/store/add/max/min (memref or group) run inside
  ``if <every index in [0, size)> { access } else { report; yield 0 }``;
- cooperative_matrix_load/store and their atomic forms check the block's rows and columns in
  every mode that is not checked by the instruction's own checked flag (a checked mode is
  defined out of bounds); the other branch yields a zero matrix;
- subview checks each slice (offset >= 0, offset + size <= mode size); expand checks that the
  expand shape's product equals the mode size. A view that fails is reported once and carries
  a flag ("valid") that every later access through it (or through views of it) adds to its
  own condition, so it touches no memory either;
- axpby, cumsum, sum, gemm, gemv, ger and hadamard check that the dynamic sizes the verifier
  could not compare agree (their lowerings' own accesses stay inside the operands when the
  shapes agree) and run only when they do and their operands are valid.

Checks that hold for the static sizes and constant indices are left out. The report branch
selects the first failing check of the instruction, increments the record's counter
atomically (device scope) and, when it was the first, writes check id, index, bound and
work-group id. Check ids number the function's message templates (`Func.bounds_checks`,
carried to KernelInfo), each located at its instruction. The pipeline runs the pass after
insert-barrier (PRECEDING names the passes before it), so that the record's writes, done by
one work-item inside divergent code, never get a barrier, and before the lowerings, so that
the code they make stays unchecked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .. import bounds_record as R
from ..errors import format_located
from ..ir.enums import CheckedFlag, Comp3, MemoryScope, MemorySemantics, Transpose
from ..ir.inst import Inst
from ..ir.ops.blas import (
    AxpbyInst,
    BlasInst,
    CumsumInst,
    GemmInst,
    GemvInst,
    GerInst,
    HadamardInst,
    SumInst,
)
from ..ir.ops.control import ForeachInst, ForInst
from ..ir.ops.coopmatrix import CoopLoadInst, CoopMemoryInst
from ..ir.ops.memory import ElementStoreInst, ExpandInst, FuseInst, LoadInst, SubviewInst
from ..ir.region import Func, Region
from ..ir.types import DYNAMIC, GroupType, MemrefType, as_memref
from ..ir.values import Value
from .base import FunctionPass
from .lower_foreach import Fold, Int
from .pass_builder import PassBuilder

ACCESSES = (LoadInst, ElementStoreInst)  # load, store and their atomic forms
VIEWS = (SubviewInst, ExpandInst, FuseInst)
HANDLED = ACCESSES + (CoopMemoryInst,) + VIEWS + (BlasInst,)
# the passes the default pipeline runs before this one (tinytc-opt -f bounds-checks follows it)
PRECEDING = frozenset(
    {
        "check-ir",
        "constant-propagation",
        "dead-code-elimination",
        "insert-lifetime-stop",
        "set-stack-ptr",
        "insert-barrier",
    }
)


@dataclass
class _Check:
    """One runtime condition: `ok` holds when in bounds; the record gets (site, index, bound).
    A range check (`ext` given) reports its first index outside [0, bound)."""

    ok: Value
    site: int
    index: Int
    bound: Int
    ext: Int = 1


def _op_mode(t: Transpose, mode: int, order: int) -> int:
    """The mode of A that mode `mode` of op(A) is."""
    return 1 - mode if t is Transpose.t and order == 2 else mode


def shape_relations(inst: Inst) -> list[tuple[str, int, str, int]]:
    """(X, i, Y, j): size of mode i of operand X must equal size of mode j of operand Y, as the
    verifier demands of a linear-algebra instruction (ir/ops/)."""
    p, order = inst.props, lambda key: inst.operand(key).type.order
    summed = isinstance(inst, SumInst)
    if isinstance(inst, (AxpbyInst, CumsumInst, HadamardInst)) or (summed and order("B") == 1):
        other = "C" if isinstance(inst, HadamardInst) else "B"
        rel = [(other, i, "A", i) for i in range(order(other))]
        if isinstance(inst, (AxpbyInst, SumInst)):
            rel = [(x, i, y, _op_mode(p["tA"], j, order("A"))) for x, i, y, j in rel]
        if summed:
            rel = rel[:1]
        if isinstance(inst, HadamardInst):
            rel += [("C", i, "B", i) for i in range(order("C"))]
        return rel
    if isinstance(inst, GemmInst):
        a = lambda m: _op_mode(p["tA"], m, 2)  # noqa: E731
        b = lambda m: _op_mode(p["tB"], m, 2)  # noqa: E731
        return [("B", b(0), "A", a(1)), ("C", 0, "A", a(0)), ("C", 1, "B", b(1))]
    if isinstance(inst, GemvInst):
        a = lambda m: _op_mode(p["tA"], m, 2)  # noqa: E731
        return [("B", 0, "A", a(1)), ("C", 0, "A", a(0))]
    if isinstance(inst, GerInst):
        return [("C", 0, "A", 0), ("C", 1, "B", 0)]
    return []  # sum to a scalar


NON_NEGATIVE = frozenset({"group_id", "num_groups", "size"})


def known_range(x: Int) -> tuple[int | None, int | None]:
    """Bounds (inclusive; None = unknown) of an index: constants, builtins and sizes that are
    never negative, and the variables of foreach and (step >= 1) for loops with known
    bounds."""
    k = Fold.known(x)
    if k is not None:
        return k, k
    assert isinstance(x, Value)
    d = x.defining_inst
    if d is not None:
        return (0, None) if d.name in NON_NEGATIVE else (None, None)
    owner = x.region.owner if x.region is not None else None
    if not isinstance(owner, (ForeachInst, ForInst)):
        return None, None
    k = x.region.params.index(x)
    if isinstance(owner, ForInst):
        step = owner.operand("step")
        if k != 0 or (step is not None and (Fold.known(step) or 0) < 1):
            return None, None
        frm, to = owner.operand("from"), owner.operand("to")
    else:
        frm, to = owner.operand_list("from")[k], owner.operand_list("to")[k]
    high = Fold.known(to)
    return Fold.known(frm), None if high is None else high - 1


class InsertBoundsChecks(FunctionPass):
    name = "insert-bounds-checks"

    def run(self, func, ctx, out) -> None:
        if func.bounds_checks is None:  # a function is checked once (it has its record then)
            _Checker(func, ctx).run()


class _Checker:
    def __init__(self, func: Func, ctx) -> None:
        self.func, self.ctx, self.index = func, ctx, ctx.index
        record = ctx.memref(ctx.index, (R.RECORD_LENGTH,))
        self.report = func.body.add_param(record, "bounds_report")
        func.param_attrs.append(None)
        func.bounds_checks = []
        self.valid: dict[Value, Value] = {}  # view -> "the view lies inside its memref"
        self.made: dict[tuple, _Check] = {}  # (range check key, region) -> its check

    def run(self) -> None:
        for inst in [i for i in self.func.body.walk() if isinstance(i, HANDLED)]:
            if isinstance(inst, ACCESSES):
                self.access(inst)
            elif isinstance(inst, CoopMemoryInst):
                self.coop_access(inst)
            elif isinstance(inst, VIEWS):
                self.view(inst)
            else:
                self.linalg(inst)

    # ---- check sites -----------------------------------------------------------------------

    def site(self, inst: Inst, what: str) -> int:
        """A new check id whose message is `what` located at `inst`."""
        text = f"{inst.name}: {what} in work-group {R.GROUP_FIELD}"
        self.func.bounds_checks.append(format_located(self.ctx, inst.loc, text).rstrip("\n"))
        return len(self.func.bounds_checks)

    def range_check(
        self, b: PassBuilder, inst: Inst, lo: Int, ext: Int, memref: Value, mode: int, what: str
    ) -> _Check | None:
        """[lo, lo + ext) within [0, size of `mode` of `memref`); None when what is known of
        the values (known_range) shows it holds. An equal check made earlier in this region
        or an enclosing one is reused (its values dominate this instruction)."""
        low, high = known_range(lo)
        kext = Fold.known(ext)
        ty = memref.type
        static = ty.size if isinstance(ty, GroupType) else as_memref(ty).shape[mode]
        checks_high = high is None or kext is None or static == DYNAMIC or high + kext > static
        if (low is not None and low >= 0) and not checks_high:
            return None
        site = self.site(
            inst, f"index {R.INDEX_FIELD} {what} is out of bounds [0, {R.BOUND_FIELD})"
        )
        key = (memref, mode, lo, ext)  # values by identity (the key keeps them alive)
        region: Region | None = inst.parent
        while region is not None:
            made = self.made.get((key, region))
            if made is not None:
                return _Check(made.ok, site, made.index, made.bound, made.ext)
            region = region.parent_region
        f = Fold(b)
        bound = self.extent(b, memref, mode)
        conds = []
        bound_v = f.value(bound, self.index)
        if checks_high and kext == 1:
            conds.append(b.less_than(f.value(lo, self.index), bound_v))
        elif checks_high:
            hi = f.add(lo, ext, self.index)
            conds.append(b.less_than_equal(f.value(hi, self.index), bound_v))
        if low is None or low < 0:
            zero = b.constant(0, self.index)
            conds.insert(0, b.greater_than_equal(f.value(lo, self.index), zero))
        ok = conds[0] if len(conds) == 1 else b.and_(*conds)
        check = _Check(ok, site, lo, bound, ext)
        self.made[(key, inst.parent)] = check
        return check

    def equal_check(self, b: PassBuilder, inst: Inst, x: Int, y: Int, what: str) -> _Check | None:
        f = Fold(b)
        kx, ky = f.known(x), f.known(y)
        if kx is not None and kx == ky:
            return None
        ok = b.equal(f.value(x, self.index), f.value(y, self.index))
        return _Check(ok, self.site(inst, what), x, y)

    def extent(self, b: PassBuilder, v: Value, mode: int) -> Int:
        """The size of mode `mode` of memref `v` (of group `v`): a number when static."""
        ty = v.type
        n = ty.size if isinstance(ty, GroupType) else as_memref(ty).shape[mode]
        return n if n != DYNAMIC else b.size(v, mode=mode)

    # ---- rewriting -------------------------------------------------------------------------

    def condition(self, b: PassBuilder, checks: list[_Check], memrefs: list[Value]) -> Value | None:
        valid = {self.valid[m]: None for m in memrefs if m in self.valid}  # each flag once
        conds = [c.ok for c in checks] + list(valid)
        if not conds:
            return None
        ok = conds[0]
        for c in conds[1:]:
            ok = b.and_(ok, c)
        return ok

    def emit_before(self, inst: Inst, build: Callable[[PassBuilder], None]) -> None:
        """Builds code at the end of inst's region and moves it to just before inst."""
        region = inst.parent
        start = len(region.insts)
        build(PassBuilder(self.ctx, region))
        new = region.insts[start:]
        del region.insts[start:]
        pos = region.insts.index(inst)
        region.insts[pos:pos] = new

    def guard(self, inst: Inst, make_checks: Callable[[PassBuilder], list[_Check | None]]) -> None:
        """`inst` moves into ``if ok { inst; yield results } else { report; yield zeros }``."""
        memrefs = [v for v in inst.operands if v in self.valid]

        def build(b: PassBuilder) -> bool:
            checks = [c for c in make_checks(b) if c is not None]
            ok = self.condition(b, checks, memrefs)
            if ok is None:
                return False
            types = [r.type for r in inst.results]
            scope = b.if_(ok, types)
            for r, new in zip(inst.results, scope.results, strict=True):
                r.replace_all_uses_with(new)
            with scope as (then, otherwise):
                with then:
                    b.region.append(inst)
                    if types:
                        b.yield_(*inst.results)
                with otherwise:
                    self.emit_report(b, checks)
                    if types:
                        b.yield_(*[b.constant(0, t) for t in types])
            return True

        region = inst.parent
        pos = region.insts.index(inst)
        del region.insts[pos]
        start = len(region.insts)
        guarded = build(PassBuilder(self.ctx, region))
        new = region.insts[start:]
        del region.insts[start:]
        if not guarded:  # every check holds statically
            new.append(inst)
        region.insts[pos:pos] = new

    def emit_report(self, b: PassBuilder, checks: list[_Check]) -> None:
        """Record the first failing check of `checks` (first violation in the kernel wins)."""
        if not checks:
            return  # only a view failed, which was reported when it was made
        idx = self.index
        f = Fold(b)

        def triple(c: _Check) -> list[Value]:
            index = f.value(c.index, idx)
            if Fold.known(c.ext) != 1:
                last = f.value(f.add(c.index, f.sub(c.ext, 1, idx), idx), idx)
                negative = b.less_than(index, b.constant(0, idx))
                scope = b.if_(negative, [idx])
                with scope as (t, e):
                    with t:
                        b.yield_(index)
                    with e:
                        b.yield_(last)
                index = scope.results[0]
            return [b.constant(c.site, idx), index, f.value(c.bound, idx)]

        chosen = triple(checks[-1])
        for c in reversed(checks[:-1]):
            scope = b.if_(c.ok, [idx, idx, idx])
            with scope as (t, e):
                with t:
                    b.yield_(*chosen)
                with e:
                    b.yield_(*triple(c))
            chosen = scope.results
        zero, one = b.constant(0, idx), b.constant(1, idx)
        old = b.atomic_add(
            one,
            self.report,
            [zero],
            scope=MemoryScope.device,
            semantics=MemorySemantics.relaxed,
        )
        with b.if_(b.equal(old, zero)) as (t, _), t:
            fields = [*chosen, *(b.group_id(mode=m) for m in Comp3)]
            for k, v in enumerate(fields, start=R.CHECK_ID):
                b.store(v, self.report, [b.constant(k, idx)])

    # ---- instruction kinds -----------------------------------------------------------------

    def access(self, inst: Inst) -> None:
        t, indices = inst.operand("operand"), inst.operand_list("index_list")
        if isinstance(t.type, GroupType):
            self.group_load(inst, t, indices[0])
            return

        def make(b: PassBuilder) -> list[_Check]:
            return [
                self.range_check(b, inst, i, 1, t, m, f"in mode {m} of {t}")
                for m, i in enumerate(indices)
            ]

        self.guard(inst, make)

    def group_load(self, inst: Inst, g: Value, i: Value) -> None:
        """The member index is replaced by 0 when out of bounds; the memref loaded is invalid
        then, so nothing touches its memory."""
        if not isinstance(inst.result.type, MemrefType):
            self.guard(inst, lambda b: [self.range_check(b, inst, i, 1, g, 0, f"of {g}")])
            return

        def build(b: PassBuilder) -> None:
            check = self.range_check(b, inst, i, 1, g, 0, f"of {g}")
            if check is None:
                return
            scope = b.if_(check.ok, [self.index])
            with scope as (t, e):
                with t:
                    b.yield_(i)
                with e:
                    self.emit_report(b, [check])
                    b.yield_(b.constant(0, self.index))
            inst.uses[inst._segments["index_list"][0]].set(scope.results[0])
            self.valid[inst.result] = check.ok

        self.emit_before(inst, build)

    def coop_access(self, inst: Inst) -> None:
        m = inst.operand("operand")
        ct = (inst.result if isinstance(inst, CoopLoadInst) else inst.operand("val")).type
        checked = inst.props["checked"]
        transposed = inst.props["tA"] is Transpose.t
        # mode of M -> (extent of the block in it, whether the checked flag covers it)
        rows_mode = 1 if transposed else 0
        covered = {
            rows_mode: checked in (CheckedFlag.rows, CheckedFlag.both),
            1 - rows_mode: checked in (CheckedFlag.cols, CheckedFlag.both),
        }
        ext = {rows_mode: ct.rows, 1 - rows_mode: ct.cols}
        pos = (inst.operand("pos0"), inst.operand("pos1"))

        def make(b: PassBuilder) -> list[_Check]:
            return [
                self.range_check(b, inst, pos[k], ext[k], m, k, f"in mode {k} of {m}")
                for k in (0, 1)
                if not covered[k]
            ]

        self.guard(inst, make)

    def view(self, inst: Inst) -> None:
        t = inst.operands[0]  # the viewed memref
        parent = self.valid.get(t)

        def build(b: PassBuilder) -> None:
            checks = [c for c in self.view_checks(b, inst, t) if c is not None]
            if not checks:
                if parent is not None:
                    self.valid[inst.result] = parent
                return
            ok = self.condition(b, checks, [t])
            assert ok is not None  # there are checks
            with b.if_(ok) as (_, e), e:
                self.emit_report(b, checks)
            self.valid[inst.result] = ok

        self.emit_before(inst, build)

    def view_checks(self, b: PassBuilder, inst: Inst, t: Value) -> list[_Check | None]:
        if isinstance(inst, FuseInst):
            return []
        if isinstance(inst, ExpandInst):
            mode = inst.props["expanded_mode"]
            dyn = iter(inst.operand_list("expand_shape"))
            product: Int = 1
            for s in inst.props["static_expand_shape"]:
                product = Fold(b).mul(product, next(dyn) if s == DYNAMIC else s, self.index)
            what = (
                f"the expand shape's product {R.INDEX_FIELD} differs from the size "
                f"{R.BOUND_FIELD} of mode {mode} of {t}"
            )
            return [self.equal_check(b, inst, product, self.extent(b, t, mode), what)]
        offs, sizes = inst.operand_list("offsets"), inst.operand_list("sizes")
        off_it, size_it = iter(offs), iter(sizes)
        out = []
        for m, (o, s) in enumerate(zip(inst.props["static_offsets"], inst.props["static_sizes"])):
            lo = next(off_it) if o == DYNAMIC else o
            n = next(size_it) if s == DYNAMIC else s
            ext = 1 if Fold.known(n) == 0 else n
            out.append(self.range_check(b, inst, lo, ext, t, m, f"in mode {m} of {t}"))
        return out

    def linalg(self, inst: Inst) -> None:
        def make(b: PassBuilder) -> list[_Check]:
            out = []
            for x, i, y, j in shape_relations(inst):
                vx, vy = inst.operand(x), inst.operand(y)
                what = (
                    f"size {R.INDEX_FIELD} of mode {i} of {vx} does not match size "
                    f"{R.BOUND_FIELD} of mode {j} of {vy}"
                )
                out.append(
                    self.equal_check(b, inst, self.extent(b, vx, i), self.extent(b, vy, j), what)
                )
            return out

        self.guard(inst, make)


__all__ = ["InsertBoundsChecks", "shape_relations"]
