"""lower-foreach: foreach / foreach_tile become a `parallel` region with loops that distribute the
iteration space over the work-group (docs/design.md §B4.3).

With S = subgroup_size and (m_tiles, n_tiles) = (work_group_size[0] / S, work_group_size[1]):

- foreach, 1-d: blocks of S iterations go round-robin to the m_tiles*n_tiles subgroups
  (`tile_loop_by_sgs`); a work-item runs iteration `from + block + lane`; the last subgroup takes
  the remainder block, masked with `lane < rem`.
- foreach, n-d: dim 1 is split into n_tiles chunks of near-equal size (`tile_loop_uniformly`,
  subgroup_id.y picks the chunk) iterated sequentially by each work-item; dim 0 is distributed
  like the 1-d case over m_tiles (subgroup_id.x); dims >= 2 become sequential loops around the
  dim-1 loop.
- foreach_tile: tiles of tile_shape go round-robin to the subgroups along dims 0 (subgroup_id.x,
  m_tiles) and 1 (subgroup_id.y, n_tiles) (1-d: subgroup_linear_id over all subgroups); the
  remainder tile goes to the last subgroup with its real size; dims >= 2 become loops with step
  tile_shape[i] and tile size min(to - i, tile_shape[i]).

The code is made with a PassBuilder (pass_builder.py); index arithmetic on constants is
folded immediately, so static sizes give straight-line code.
A function without subgroup_size / work_group_size gets them from work-group-size first.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import UNKNOWN_LOCATION, Status
from ..ir.dismantle import dismantle
from ..ir.enums import Comp3
from ..ir.inst import Inst
from ..ir.nesting import MAX_NESTING, nesting_error, region_depth
from ..ir.ops import INSTRUCTIONS
from ..ir.ops.arith import ArithBinaryInst
from ..ir.ops.control import ForeachInst, ForeachTileInst
from ..ir.region import Region
from ..ir.types import NumberType, Type
from ..ir.values import Value
from . import fold
from .base import FunctionPass
from .clone import clone_region
from .pass_builder import PassBuilder
from .work_group_size import ensure_sizes

Int = Value | int
"""An integer operand of the index arithmetic: an IR value, or a number known at compile time
(materialised as a constant only where an instruction needs it)."""


class Fold:
    """Integer arithmetic through a builder that folds known numbers and identities on the spot,
    so static sizes produce no arithmetic and no unused constants. The instructions are made
    from their classes and appended by the builder's `insert` (no location, no name), as the
    builder's instruction methods make them, without their argument checks and result-type
    inference: the operands are index values of the type `ty` given, the result's type."""

    def __init__(self, b: PassBuilder) -> None:
        self.b = b

    def _emit(self, op: str, operands: dict[str, Value], ty: Type) -> Value:
        inst = INSTRUCTIONS[op](operands, None, ty, UNKNOWN_LOCATION)
        self.b.insert(inst)
        return inst.results[0]

    def compare(self, op: str, x: Value, y: Value) -> Value:
        """`op x, y` for a comparison (equal, less_than, ...): a bool."""
        return self._emit(op, {"a": x, "b": y}, x.type.ctx.bool)

    def and_(self, x: Value, y: Value) -> Value:
        """`and x, y` of two values of one type (bools: both conditions hold)."""
        return self._emit("and", {"a": x, "b": y}, x.type)

    @staticmethod
    def known(x: Int) -> int | None:
        """The number an operand is known to hold: a constant, or the size of a static mode."""
        if isinstance(x, int):
            return x
        value = fold.known(x)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def value(self, x: Int, ty: NumberType) -> Value:
        if isinstance(x, Value):
            return x
        if not ty.is_integer:  # the builder's conversion of the number
            return self.b.constant(x, ty)
        inst = INSTRUCTIONS["constant"]({}, {"value": x}, ty, UNKNOWN_LOCATION)
        self.b.insert(inst)
        return inst.results[0]

    def cast(self, v: Value, ty: NumberType) -> Value:
        return v if v.type is ty else self._emit("cast", {"a": v}, ty)

    def _fold(self, op: str, x: Int, y: Int, ty: NumberType) -> Int:
        """`op x, y` with the rules of constant-propagation (the instruction's `folds`)
        applied first."""
        rules = INSTRUCTIONS[op]
        assert issubclass(rules, ArithBinaryInst)  # add, sub, mul, div, rem, min
        cx, cy = self.known(x), self.known(y)
        if cx is not None and cy is not None:
            folded = rules.folds.evaluate(ty, cx, cy)
            if folded is not None:
                return folded
        rewrite = rules.folds.simplify(ty, cx, cy)
        if rewrite is None:
            return self._emit(op, {"a": self.value(x, ty), "b": self.value(y, ty)}, ty)
        if rewrite.kind == "constant":
            return rewrite.value
        operand = (x, y)[rewrite.operand]
        if rewrite.kind == "operand":
            return operand
        return self._emit(rewrite.kind, {"a": self.value(operand, ty)}, ty)  # neg, not

    def add(self, x: Int, y: Int, ty: NumberType) -> Int:
        return self._fold("add", x, y, ty)

    def sub(self, x: Int, y: Int, ty: NumberType) -> Int:
        return self._fold("sub", x, y, ty)

    def mul(self, x: Int, y: Int, ty: NumberType) -> Int:
        return self._fold("mul", x, y, ty)

    def div(self, x: Int, y: Int, ty: NumberType) -> Int:
        return self._fold("div", x, y, ty)

    def rem(self, x: Int, y: Int, ty: NumberType) -> Int:
        return self._fold("rem", x, y, ty)

    def min(self, x: Int, y: Int, ty: NumberType) -> Int:
        return self._fold("min", x, y, ty)


BlockBody = Callable[[Int, bool, Int], None]


def nested_depths(region: Region) -> list[tuple[Inst, int]]:
    """The instructions with regions inside `region`, in program order, each with the number
    of regions between it and `region` (0 for its own instructions). (A loop, not a recursive
    closure, which would be a reference cycle holding the instructions after the pass.)"""
    found: list[tuple[Inst, int]] = []
    stack = [(iter(region.insts), 0)]
    while stack:
        insts, d = stack[-1]
        for inst in insts:
            if inst.regions:
                found.append((inst, d))
                stack.extend((iter(sub.insts), d + 1) for sub in reversed(inst.regions))
                break
        else:
            stack.pop()
    return found


class Lowering:
    """Builds the replacement of one foreach / foreach_tile inside a new parallel region."""

    # set by foreach and its steps (see there)
    lane: Value
    sgx: Value
    offset0: Int
    then0: Callable[[], None] | None
    from1: Int
    to1: Int

    def __init__(self, b: PassBuilder, inst: Inst, sgs: int, m_tiles: int, n_tiles: int) -> None:
        self.b, self.f, self.inst = b, Fold(b), inst
        self.sgs, self.m_tiles, self.n_tiles = sgs, m_tiles, n_tiles
        self.frm = inst.operand_list("from")
        self.to = inst.operand_list("to")
        self.body = inst.regions[0]
        self.vmap: dict[Value, Value] = {}
        # where copies of the body go: (region, position, the parameters' values there)
        self.copies: list[tuple[Region, int, dict[Value, Value]]] = []

    # ---- building blocks ----------------------------------------------------------------------

    def builtin(self, mnemonic: str, mode: Comp3 | None = None) -> Value:
        """A subgroup builtin (i32)."""
        props = None if mode is None else {"mode": mode}
        inst = INSTRUCTIONS[mnemonic]({}, props, self.b.ctx.i32, self.inst.loc)
        self.b.insert(inst)
        return inst.results[0]

    def bind(self, param: Value, x: Int) -> None:
        """The body's parameter `param` stands for `x` in the next copy of the body."""
        if param.uses:
            self.vmap[param] = self.f.value(x, param.type)

    def clone_body(self) -> None:
        """A copy of the body goes here; `place_bodies` makes them once the loops are built."""
        region = self.b.region
        self.copies.append((region, len(region.insts), dict(self.vmap)))

    def place_bodies(self) -> None:
        """Fills in the copies of the body (the builder only appends, so each recorded position
        is still where its copy belongs): clones, except that the last copy is the body itself,
        moved (the foreach is erased afterwards), which halves the instructions made when a
        remainder block follows the full blocks. The nesting limit is checked first, as the
        builder checks each clone's instructions."""
        deep = nested_depths(self.body)
        for region, _pos, _vmap in self.copies:
            if deep:
                depth = region_depth(region)
                for inst, d in deep:
                    if depth + d >= MAX_NESTING:
                        raise nesting_error(inst.loc)
        if not self.copies:
            return
        *clones, (last, last_pos, last_vmap) = self.copies
        for region, pos, vmap in reversed(clones):  # later positions first
            start = len(region.insts)
            clone_region(self.b, self.body, region, vmap)
            insts = region.insts[start:]
            del region.insts[start:]
            region.insts[pos:pos] = insts
            if region is last:
                last_pos += len(insts)
        insts = self.body.insts
        self.body.insts = []
        for inst in insts:
            inst.parent = last
        for param in self.body.params:
            if param in last_vmap:
                param.replace_all_uses_with(last_vmap[param])
        last.insts[last_pos:last_pos] = insts
        # The value maps (a clone's maps every result of the body) go now: the compiled
        # closures of foreach_tile() are a cycle holding this object until the collector's scan.
        self.copies.clear()
        self.vmap.clear()

    def tile_loop_by_sgs(
        self, size: Int, block: int, tiles: int, sg_id: Value, ty: NumberType, body: BlockBody
    ) -> None:
        """Blocks [k*block, (k+1)*block) of [0, size) for k = sg_id, sg_id+tiles, ...; the last
        subgroup gets the remainder block. body(block_start, is_remainder, trip_count); a full
        block's trip count is the constant `block` the loop start is computed with. sg_id (a
        subgroup builtin or an index) is cast to `ty` after the constants, upstream's order."""
        f = self.f
        known_size = f.known(size)
        full = known_size is None or known_size >= block
        remainder = known_size is None or known_size % block != 0
        tile: Int = f.value(block, ty) if full else block
        step = f.value(block * tiles, ty) if full else None
        last = f.value(tiles - 1, ty) if remainder else None
        sg = f.cast(sg_id, ty)
        blocks = f.div(size, tile, ty)
        if step is not None:
            start = f.value(f.mul(tile, sg, ty), ty)
            end = f.value(f.mul(blocks, tile, ty), ty)
            with self.b.for_(start, end, step) as blk:
                body(blk, False, tile)
        if last is not None:
            rem = f.rem(size, tile, ty)
            cond = f.compare("equal", sg, last)
            if f.known(rem) is None:  # a size that is a multiple of the block has no remainder
                positive = f.compare("greater_than", f.value(rem, ty), f.value(0, ty))
                cond = f.and_(cond, positive)
            with self.b.if_(cond) as (then, _), then:
                body(f.mul(blocks, tile, ty), True, rem)

    def tile_loop_uniformly(
        self, size: Int, block: int, tiles: int, sg_id: Value, body: Callable[[Int, Int], None]
    ) -> None:
        """[0, size) in a multiple of `tiles` chunks of near-equal size (at most about `block`);
        chunk k goes to subgroup k % tiles. body(chunk_start, chunk_size)."""
        f, ty = self.f, sg_id.type
        blocks = f.add(f.div(f.sub(size, 1, ty), block, ty), 1, ty)
        blocks = f.mul(f.add(f.div(f.sub(blocks, 1, ty), tiles, ty), 1, ty), tiles, ty)
        chunk = f.div(size, blocks, ty)
        rem = f.rem(size, blocks, ty)
        with self.b.for_(sg_id, f.value(blocks, ty), f.value(tiles, ty)) as k:
            if f.known(rem) == 0:
                body(f.mul(k, chunk, ty), chunk)
                return
            lo = f.min(k, rem, ty)
            hi = f.min(f.add(k, 1, ty), rem, ty)
            body(f.add(f.mul(k, chunk, ty), lo, ty), f.add(chunk, f.sub(hi, lo, ty), ty))

    def loop_nest(
        self,
        dims: list[int],
        innermost: Callable[[], None],
        step: Callable[[int], Value | None] = lambda d: None,
        on_var: Callable[[int, Value], None] | None = None,
    ) -> None:
        """Sequential for loops over `dims` (first outermost), then innermost()."""
        if not dims:
            innermost()
            return
        d = dims[0]
        with self.b.for_(self.frm[d], self.to[d], step(d)) as i:
            self.vmap[self.body.params[d]] = i
            if on_var is not None:
                on_var(d, i)
            self.loop_nest(dims[1:], innermost, step, on_var)

    # ---- foreach ------------------------------------------------------------------------------

    def foreach(self) -> None:
        f, n = self.f, len(self.frm)
        ty0 = self.frm[0].type
        self.lane = f.cast(self.builtin("subgroup_local_id"), ty0)
        if n == 1:
            sg = f.cast(self.builtin("subgroup_linear_id"), ty0)
            self.loop0(sg, self.m_tiles * self.n_tiles, self.clone_body)
            return
        ty1 = self.frm[1].type
        self.sgx = f.cast(self.builtin("subgroup_id", Comp3.x), ty0)
        sgy = f.cast(self.builtin("subgroup_id", Comp3.y), ty1)
        size1 = f.sub(self.to[1], self.frm[1], ty1)
        self.tile_loop_uniformly(size1, self.sgs, self.n_tiles, sgy, self.chunk)

    # The steps of foreach are methods, not closures inside it: a compiled closure costs an
    # environment object and a generic call per use (foreach is the whole pass on most
    # programs). What they share is kept on the Lowering: `lane`, `sgx` (set by foreach),
    # `offset0`, `then0` (loop0), `from1`, `to1` (chunk).

    def loop0(self, sg_id: Value, tiles: int, then: Callable[[], None]) -> None:
        """Dim 0 over `tiles` subgroups (sg_id's): then() makes what each iteration runs."""
        f, ty0 = self.f, self.frm[0].type
        self.offset0 = f.add(self.frm[0], self.lane, ty0)
        self.then0 = then
        size = f.sub(self.to[0], self.frm[0], ty0)
        self.tile_loop_by_sgs(size, self.sgs, tiles, sg_id, ty0, self.block0)
        self.then0 = None  # a bound method of this object: no cycle left behind

    def block0(self, blk: Int, is_remainder: bool, trip: Int) -> None:
        """A block of dim 0 (loop0's BlockBody): the remainder block is masked per lane."""
        f, ty0, then = self.f, self.frm[0].type, self.then0
        assert then is not None  # inside loop0
        self.bind(self.body.params[0], f.add(blk, self.offset0, ty0))
        if not is_remainder:
            then()
            return
        mask = f.compare("less_than", self.lane, f.value(trip, ty0))
        with self.b.if_(mask) as (inside, _), inside:
            then()

    def chunk(self, start: Int, trip: Int) -> None:
        """The chunk of dim 1 of this subgroup (foreach's body of tile_loop_uniformly)."""
        f, ty1 = self.f, self.frm[1].type
        self.from1 = f.add(self.frm[1], start, ty1)
        self.to1 = f.add(self.from1, trip, ty1)
        self.loop0(self.sgx, self.m_tiles, self.dims_above1)

    def dims_above1(self) -> None:
        """Loops over dims n-1 .. 2 around the loop over the chunk of dim 1."""
        self.loop_nest(list(range(len(self.frm) - 1, 1, -1)), self.dim1)

    def dim1(self) -> None:
        ty1 = self.frm[1].type
        with self.b.for_(self.f.value(self.from1, ty1), self.f.value(self.to1, ty1)) as i1:
            self.vmap[self.body.params[1]] = i1
            self.clone_body()

    # ---- foreach_tile -------------------------------------------------------------------------

    def foreach_tile(self) -> None:
        f, n, params = self.f, len(self.frm), self.body.params
        tile = self.inst.props["tile_shape"]

        def tiled(d: int, sg_id: Value, tiles: int, then: Callable[[], None]) -> None:
            ty = self.frm[d].type

            def block(blk: Int, is_remainder: bool, trip: Int) -> None:
                self.bind(params[d], f.add(self.frm[d], blk, ty))
                self.bind(params[n + d], trip)
                then()

            size = f.sub(self.to[d], self.frm[d], ty)
            self.tile_loop_by_sgs(size, tile[d], tiles, sg_id, ty, block)

        # The subgroup ids are read first and cast where each is used (upstream's order).
        if n == 1:
            sg = self.builtin("subgroup_linear_id")
            tiled(0, sg, self.m_tiles * self.n_tiles, self.clone_body)
            return
        sgx = self.builtin("subgroup_id", Comp3.x)
        sgy = self.builtin("subgroup_id", Comp3.y)
        steps: dict[int, Value] = {}  # the loop step of dim d >= 2, also its full tile size

        def step(d: int) -> Value:
            steps[d] = f.value(tile[d], self.frm[d].type)
            return steps[d]

        def tile_size(d: int, i: Value) -> None:
            self.bind(params[n + d], f.min(f.sub(self.to[d], i, i.type), steps[d], i.type))

        def rest() -> None:
            self.loop_nest(list(range(2, n)), self.clone_body, step=step, on_var=tile_size)

        tiled(1, sgy, self.n_tiles, lambda: tiled(0, sgx, self.m_tiles, rest))


class LowerForeach(FunctionPass):
    name = "lower-foreach"

    def __init__(self, core_info=None) -> None:
        self.info = core_info

    def run(self, func, ctx, out) -> None:
        sgs, wgs = ensure_sizes(func, ctx, out, self.info)
        m_tiles, n_tiles = wgs[0] // sgs, wgs[1]
        for inst in [i for i in func.body.walk() if isinstance(i, (ForeachInst, ForeachTileInst))]:
            if isinstance(inst, ForeachTileInst) and inst.props["tile_shape"][0] % sgs:
                raise inst.error(
                    Status.ir_tile_shape0_not_multiple_of_sgs,
                    f"first tile extent must be a multiple of the subgroup size {sgs}",
                )
            region = inst.parent
            parallel = INSTRUCTIONS["parallel"]({}, loc=inst.loc)
            region.insert(region.insts.index(inst), parallel)
            b = PassBuilder(ctx, parallel.regions[0])
            lowering = Lowering(b, inst, sgs, m_tiles, n_tiles)
            if isinstance(inst, ForeachInst):
                lowering.foreach()
            else:
                lowering.foreach_tile()
            lowering.place_bodies()
            region.erase(inst)
            dismantle(inst)
