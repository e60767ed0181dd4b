"""lower-linalg for gemm: the register-blocked cooperative-matrix micro-kernel (docs/design.md §B4.2).

C (M x N) is cut into subgroup tiles of (nb0*block0) x (nb1*block1); a subgroup tile holds nb0 x
nb1 accumulator coopmatrices <acc(Tc) x block0 x block1, matrix_acc>:

- standard path: block0 = S, block1 = max_cols of the register block, nb1 = 1, K steps {1,2,4,8};
  a static N is split "uniformly" (chunks of q or q+1 columns, the chunk length is the
  micro-kernel's N, so no column checks), a dynamic N in blocks of block1 with a checked
  remainder;
- DPAS path (the core's matrix table has the precision and S is its required subgroup size):
  block0/block1 = the table's largest M/N, K steps from the table, both directions in blocks with
  a checked remainder, loops marked {unroll=false}.

nb0 (and nb1 for DPAS) come from `choose_block_size_multiple`. On a SIMD CPU core (core info
`cpu`) the standard path's nb0, max_cols and K unrolling come instead from a blocking the
autotuner stored in the core info (`gemm_blockings`, by `GemmKey`) or else from the CPU cost
model (analysis/gemm_model.py), and a tile of 8 or 16 real columns holds its accumulators as
coopmatrices of 4 columns (`col_pieces`; complex accumulators are not split). Subgroup tiles go
round-robin over subgroup_id.x (M, inner loop) and subgroup_id.y (N, outer loop); the remainder
tile goes to the last subgroup, with rows_checked (M) / cols_checked (N) on the coopmatrices
that can cross the edge. Per subgroup tile: accumulators start at 0, the K loop steps by the largest K candidate
<= K (A and B tiles loaded, outer-product mul_adds), a remainder loop steps by the smallest one
(DPAS: with A's columns and B's rows checked). Transposes are folded into the loads (`.t` at
swapped coordinates). Epilogue: acc = alpha*acc, then C = acc + beta*C (C is not read when beta
is 0; a run-time beta is tested) cast to C's type and stored, or for .atomic an atomic_store
(beta 0) / atomic_add (beta 1). On a SIMD CPU core with a real accumulator type, a run-time
alpha is tested once per subgroup tile, together with a run-time beta: alpha 1 and beta 0 store
the accumulators as they are (`epilogue`). The instructions are made by `PassBuilder.emit` /
`value` (compiled), not the builder's interpreted instruction methods (pass_builder.py).

On a SIMD CPU core a gemm of one entry of a stack (A and B subviews at group_id.x) whose A takes
8 KiB up to L1 prefetches the next entry's A and B (an A of more than three quarters of L1:
A, C where C is a subview at group_id.x too, and B with AVX-512 code only; so AVX2 code with a
C shared by the entries prefetches A alone), a share per column chunk of C (`next_entry_views`).
An f64 entry's C that is a subview at group_id.x too is stored with nontemporal stores (and then
with AVX2 code not prefetched; `nontemporal_c`) where the gemm does not read it (beta 0, or a
run-time beta with a run-time alpha: their branch for 1 and 0), nothing else in the function
touches its memory, and its alignment makes the stores aligned vector stores.
"""

from __future__ import annotations

from collections.abc import Callable

from ..analysis.gemm_model import (
    NEXT_ENTRY_OPERANDS,
    GemmProblem,
    cpu_blocking,
    gemm_key,
    next_entry_operands,
    prefetches_into_l2,
    prefetches_next_entry,
    stores_c_nontemporal,
)
from ..analysis.memory import accessed_only_by, root
from ..analysis.nontemporal import nontemporal_alignment
from ..analysis.tiling import MAX_K_UNROLLING, acc_type, max_register_block_gemm
from ..ir.attrs import NONTEMPORAL
from ..ir.enums import CheckedFlag, Comp3, MatrixUse, Transpose
from ..ir.inst import Inst
from ..ir.types import DYNAMIC, Type, as_memref
from ..ir.values import Value
from ..target.core_info import GemmShape, ceil_div
from ..target.gemm_blocking import GemmBlocking
from .lower_foreach import Int
from .lower_linalg_common import SCOPE, SEMANTICS, LinalgGen, known_number

STANDARD_K = tuple(1 << i for i in range(MAX_K_UNROLLING.bit_length()))  # 1, 2, 4, 8
CPU_PIECE_COLS = 4  # columns of an accumulator coopmatrix of a split CPU tile (`col_pieces`)


def choose_block_size_multiple(block: int, max_size: int, tiles: int, size: int) -> int:
    """How many `block`-sized coopmatrices one subgroup tile holds along a mode of `size`."""
    k = 1
    while 2 * k * block < max_size:
        k *= 2
    while k > 1 and (ceil_div(size, k * block) % tiles != 0 or k * block - size >= block):
        k //= 2
    return k


# indexed by rows + 2*cols: the enum's constructor is an interpreted call, and every load and
# store of the micro-kernel asks
_CHECKED = (CheckedFlag.none, CheckedFlag.rows, CheckedFlag.cols, CheckedFlag.both)


def _checked(rows: bool, cols: bool) -> CheckedFlag:
    return _CHECKED[int(rows) | 2 * int(cols)]


class GemmLowering:
    """Block sizes, subgroup distribution and micro-kernel of one gemm instruction."""

    def __init__(self, g: LinalgGen) -> None:
        self.g, self.b, self.f = g, g.b, g.f
        inst = g.inst
        self.alpha, self.A, self.B = g.op("alpha"), g.op("A"), g.op("B")
        self.beta, self.C = g.op("beta"), g.op("C")
        self.tA = inst.props["tA"] is Transpose.t
        self.tB = inst.props["tB"] is Transpose.t
        self.ta, self.tb = as_memref(self.A.type).element, as_memref(self.B.type).element
        self.tc = as_memref(self.C.type).element
        self.acc = acc_type(self.tc)
        self.M = g.extent(self.C, 0)
        self.N = g.extent(self.C, 1)
        self.K = g.extent(self.A, 0 if self.tA else 1)
        self.prefetch_level = 0  # of the next entry's prefetches (next_entry_views)
        self.nontemporal_c = False  # C stored with nontemporal stores (next_entry_views)
        self.configure()

    # ---- block sizes ---------------------------------------------------------------------------

    def dpas_shape(self) -> GemmShape | None:
        matrix = self.g.info.matrix
        if matrix is None or self.g.sgs != matrix.required_subgroup_size:
            return None
        a, b, c = self.ta.kind.text, self.tb.kind.text, self.tc.kind.text
        return next((s for s in matrix.gemms if s.a == a and s.b == b and c in s.acc), None)

    def configure(self) -> None:
        g = self.g
        c_blocks = 2 if self.tc.is_complex else 1
        max_rows, max_cols = max_register_block_gemm(
            self.ta.size, self.tb.size, self.acc.size, g.sgs, g.info.register_space, c_blocks
        )
        m = self.f.known(self.M)
        n = self.f.known(self.N)
        shape = self.dpas_shape()
        self.loop_attrs: dict | None = None
        if shape is not None:
            self.block0 = max(shape.M)
            self.block1 = max(shape.N)
            self.k_candidates = tuple(sorted(shape.K))
            self.nb1 = choose_block_size_multiple(
                self.block1, max_cols, g.n_tiles, max_cols if n is None else n
            )
            self.uniform_n = False
            self.check_k = True
            self.loop_attrs = {"unroll": False}
        else:
            self.block0 = g.sgs
            self.block1 = max_cols
            self.k_candidates = STANDARD_K
            self.nb1 = 1
            self.uniform_n = n is not None
            self.check_k = False
        self.nb0 = choose_block_size_multiple(
            self.block0, max_rows, g.m_tiles, max_rows if m is None else m
        )
        # the standard path on a SIMD CPU core (a core info may also carry a matrix table)
        self.cpu_path = shape is None and g.info.cpu is not None
        if self.cpu_path:
            blocking = self.cpu_blocking()
            self.nb0, self.block1 = blocking.row_blocks, blocking.cols
            self.k_candidates = tuple(k for k in STANDARD_K if k <= blocking.k_unroll)

    def cpu_blocking(self) -> GemmBlocking:
        """The autotuner's blocking for this gemm if the core info has one, else the model's."""
        key = gemm_key(self.g.inst)
        tuned = self.g.info.gemm_blockings.get(key)
        if tuned is not None:
            return tuned
        prefetched = self.next_entries() is not None
        problem = GemmProblem(
            key.M, key.N, key.K, self.ta.size, self.acc.size, self.g.sgs, prefetched
        )
        return cpu_blocking(problem, self.g.info.cpu)

    # ---- loops over subgroup tiles ---------------------------------------------------------------

    def loop_or_once(self, start: Int, end: Int, step: int, body: Callable[[Int], None]) -> None:
        """for b = start; b < end; b += step: body(b); straight-line when the trip count is
        known to be 0 or 1."""
        f = self.f
        s, e = f.known(start), f.known(end)
        if s is not None and e is not None:
            if s >= e:
                return
            if s + step >= e:
                body(s)
                return
        self.g.loop(start, end, step, [], lambda i, _: body(i) or [], self.loop_attrs)

    def split(self, size: Int, bs: int) -> tuple[Int, Int]:
        """(size / bs, size % bs), computed where it is called (before the parallel region)."""
        ix = self.g.index
        return self.f.div(size, bs, ix), self.f.rem(size, bs, ix)

    def by_sgs(
        self,
        split: tuple[Int, Int],
        bs: int,
        tiles: int,
        sg: Int,
        body: Callable[[Int, Int | None], None],
    ) -> None:
        """Blocks of `bs` round-robin over `tiles` subgroups; the remainder block goes to the
        last subgroup. `split` = (number of full blocks, remainder). body(start, None) for full
        blocks, body(start, rem) for the remainder."""
        f, g, ix = self.f, self.g, self.g.index
        blocks, rem = split
        if f.known(blocks) != 0:
            self.loop_or_once(
                f.mul(bs, sg, ix), f.mul(blocks, bs, ix), bs * tiles, lambda s: body(s, None)
            )
        known_rem = f.known(rem)
        if known_rem == 0:
            return
        conds = []
        if tiles > 1:
            conds.append(g.binary("equal", g.idx(sg), g.idx(tiles - 1)))
        if known_rem is None:
            conds.append(g.binary("greater_than", g.idx(rem), g.idx(0)))
        if not conds:
            body(f.mul(blocks, bs, ix), rem)
            return
        cond = conds[0] if len(conds) == 1 else g.binary("and", conds[0], conds[1])
        g.if_then(cond, lambda: body(f.mul(blocks, bs, ix), rem))

    def uniformly(
        self, size: int, bs: int, tiles: int, sg: Int, body: Callable[[Int, int], None]
    ) -> None:
        """A static `size` in a multiple of `tiles` chunks of q+1 (the first rem ones) or q
        elements; chunk c goes to subgroup c % tiles. body(start, length)."""
        if size == 0:
            return
        f, ix = self.f, self.g.index
        blocks = ceil_div(ceil_div(size, bs), tiles) * tiles
        q, rem = divmod(size, blocks)
        if rem > 0:
            self.loop_or_once(
                f.mul(q + 1, sg, ix), (q + 1) * rem, (q + 1) * tiles, lambda s: body(s, q + 1)
            )
        if q > 0:
            turn = f.rem(f.add(sg, rem % tiles, ix), tiles, ix)
            start = f.add((q + 1) * rem, f.mul(q, turn, ix), ix)
            self.loop_or_once(start, size, q * tiles, lambda s: body(s, q))

    # ---- the kernel ----------------------------------------------------------------------------

    def build(self) -> None:
        g, f, ix = self.g, self.f, self.g.index
        kb = self.k_block()
        self.K0 = f.mul(f.div(self.K, kb, ix), kb, ix)
        m_split = self.split(self.M, self.block0 * self.nb0)
        n_split = None if self.uniform_n else self.split(self.N, self.block1 * self.nb1)
        ahead = self.next_entry_views()
        with self.b.parallel():
            sgm: Int = 0
            sgn: Int = 0
            if g.m_tiles > 1:
                sgm = g.cast(g.builtin("subgroup_id", Comp3.x), g.index)
            if g.n_tiles > 1:
                sgn = g.cast(g.builtin("subgroup_id", Comp3.y), g.index)

            def m_loop(n0: Int, cols: int, col_checks: list[bool]) -> None:
                if ahead is not None:
                    self.prefetch_ahead(ahead, n0, cols)

                def m_block(m0: Int, rem: Int | None) -> None:
                    rows = self.tile_checks(rem, self.block0, self.nb0)
                    self.microkernel(m0, n0, rows, col_checks, cols)

                self.by_sgs(m_split, self.block0 * self.nb0, g.m_tiles, sgm, m_block)

            if self.uniform_n:
                n = f.known(self.N)
                self.uniformly(n, self.block1, g.n_tiles, sgn, lambda n0, q: m_loop(n0, q, [False]))
                return

            def n_block(n0: Int, rem: Int | None) -> None:
                m_loop(n0, self.block1, self.tile_checks(rem, self.block1, self.nb1))

            self.by_sgs(n_split, self.block1 * self.nb1, g.n_tiles, sgn, n_block)

    # ---- the next batch entry ------------------------------------------------------------------

    def next_entry_views(self) -> dict[str, Value] | None:
        """On a SIMD CPU core: the prefetched operands (by name, `next_entry_operands`) of the
        batch entry that the next work-group computes, where A and B are each a subview with
        group_id.x as one dynamic offset (memref<..x?> stacks, one entry per work-group) and
        A's entry takes PREFETCH_MIN_BYTES (8 KiB) up to L1 (the cost model's
        `prefetches_next_entry`); None elsewhere. The CPU runtime runs the
        work-groups of a launch in runs of consecutive ids per thread, so entry id + 1 is what this
        thread reads next. Every column chunk of C reads all of A, the first one from memory in a
        burst that the hardware prefetcher, which stops at page boundaries, does not run ahead of;
        prefetched during this entry, the next entry's A and B come from the caches. Below 8 KiB
        the measured rows gained nothing or lost (32^3 f32 0.79-0.96, 23x37x19 0.79-0.86: the
        prefetches cost more than the short bursts). An A that takes more than three quarters of L1
        is prefetched into L2 (`prefetch_level` 2, prefetcht2), a smaller one into L1 (prefetcht0).
        Measured: 8 KiB (32^3 f64), 9 KiB (48^3 f32, with AVX2 code), 16 KiB (64^3 f32) and 18 KiB
        (48^3 f64) gained with prefetcht0; 32 KiB (64^3 f64, all of a 32 KiB L1) into L1 evicted
        the current entry's A (0.95-1.02), into L2 it ran 1.07-1.17; the points between 18 KiB and
        L1 are not measured; docs/_benchmarks.rst, "What limits a batched GEMM row". An entry
        prefetched into L2 also prefetches the next entry's C where C is a subview at group_id.x
        too, and its B with AVX-512 code. An f64 gemm stores
        such a C nontemporal where beta is 0 or a run-time beta with a run-time alpha (their
        branch for 1 and 0), nothing else touches C's memory, and the stores can be aligned
        nontemporal vector stores (analysis/nontemporal.py, the conversion's own test), and then
        with AVX2 code does not prefetch it (`nontemporal_c`, `store_tile`; the cost model's
        `next_entry_operands` and `stores_c_nontemporal`). The last entry has no successor: it
        prefetches itself (`next_view`)."""
        entries = self.next_entries()
        if entries is None:
            return None
        key, cpu = gemm_key(self.g.inst), self.g.info.cpu
        assert cpu is not None
        self.prefetch_level = 2 if prefetches_into_l2(key, self.ta.size, cpu) else 0
        c_entry = _entry_of_group(self.C)
        self.nontemporal_c = (
            c_entry is not None
            and stores_c_nontemporal(key, self.ta.size, cpu)  # the cheap test first
            and self.writes_c_only()
            and nontemporal_alignment(self.C, self.g.sgs, self.g.info) > 0
        )
        found = dict(zip(NEXT_ENTRY_OPERANDS, (*entries, c_entry), strict=True))
        return {
            name: self.next_view(*entry)
            for name in next_entry_operands(key, self.ta.size, cpu, self.nontemporal_c)
            if (entry := found[name]) is not None
        }

    def writes_c_only(self) -> bool:
        """Whether the epilogue stores C without reading it (`store_tile` with beta 0): a
        constant beta 0, or a run-time beta that the SIMD CPU epilogue tests together with a
        run-time alpha (`epilogue`; the branch for alpha 1 and beta 0); and nothing else in the
        function touches C's memory (`c_unshared`)."""
        if self.g.atomic:
            return False
        beta = known_number(self.beta)
        if beta is not None:
            unread = beta == 0
        else:
            unread = self.cpu_path and not self.acc.is_complex and known_number(self.alpha) is None
        return unread and self.c_unshared()

    def c_unshared(self) -> bool:
        """Whether nothing but this gemm's store touches C's memory (the stack of which C is
        an entry, through any view, analysis/memory.py `accessed_only_by`): A and B are other
        memrefs, and no other instruction of the function, before or after, reads or writes
        it; a C read later would miss the caches its nontemporal stores bypassed."""
        base = root(self.C)
        return (
            root(self.A) is not base
            and root(self.B) is not base
            and accessed_only_by(self.C, self.g.inst)
        )

    def next_entries(self) -> tuple[tuple[Inst, int], tuple[Inst, int]] | None:
        """The subviews of A and B at group_id.x (and which offset it is) when the next entry
        is prefetched (`next_entry_views`; the cost model's `prefetches_next_entry` decides
        the sizes), else None."""
        cpu = self.g.info.cpu
        if not self.cpu_path or cpu is None or self.g.m_tiles != 1:
            return None
        if not prefetches_next_entry(gemm_key(self.g.inst), self.ta.size, cpu):
            return None
        a, b = _entry_of_group(self.A), _entry_of_group(self.B)
        if a is None or b is None:
            return None
        return a, b

    def next_view(self, view: Inst, which: int) -> Value:
        """Subview `view` with its dynamic offset `which` (group_id.x, in the batch mode) plus
        1, at most the stack's last entry: the last work-group prefetches its own entry rather
        than a view past the stack (out of bounds, its in-bounds address poison in SPIR-V)."""
        g, f, ix = self.g, self.f, self.g.index
        mode = [k for k, o in enumerate(view.props["static_offsets"]) if o == DYNAMIC][which]
        last = f.sub(g.extent(view.operand("operand"), mode), 1, ix)
        offsets = list(view.operand_list("offsets"))
        offsets[which] = g.idx(f.min(f.add(offsets[which], 1, ix), last, ix))
        operands = {
            "operand": view.operand("operand"),
            "offsets": offsets,
            "sizes": view.operand_list("sizes"),
        }
        return self.b.value("subview", operands, dict(view.props), view.results[0].type)

    def prefetch_ahead(self, ahead: dict[str, Value], n0: Int, cols: int) -> None:
        """Per column chunk [n0, n0 + cols) of C: prefetch the next entry's B and C columns
        of the chunk and A columns in the same proportion (K/N of them), so that the chunks
        of an entry together fetch all of the next entry's operands in `ahead`."""
        g, f, ix = self.g, self.f, self.g.index
        m, n, k = f.known(self.M), f.known(self.N), f.known(self.K)
        assert m is not None and n is not None and k is not None
        a_cols, a0 = cols, n0
        if n != k:
            a_cols, a0 = ceil_div(cols * k, n), f.div(f.mul(n0, k, ix), n, ix)
        per_operand = ((a0, m, a_cols), (n0, k, cols), (n0, m, cols))  # A, B, C
        shares = dict(zip(NEXT_ENTRY_OPERANDS, per_operand, strict=True))
        for name, view in ahead.items():
            col0, rows, n_cols = shares[name]
            self.prefetch(view, g.idx(0), g.idx(col0), rows, n_cols)

    def prefetch(self, view: Value, pos0: Value, pos1: Value, rows: int, cols: int) -> None:
        props = {"cache_level": self.prefetch_level, "rows": rows, "cols": cols}
        operands = {"operand": view, "pos0": pos0, "pos1": pos1}
        self.b.emit("cooperative_matrix_prefetch", operands, props)

    def tile_checks(self, rem: Int | None, block: int, count: int) -> list[bool]:
        """Per coopmatrix of a subgroup tile: does it need a bounds check? A full tile needs
        none; a static remainder needs ceil(rem/block) coopmatrices, the last maybe checked;
        a dynamic remainder uses all `count`, all checked."""
        if rem is None:
            return [False] * count
        r = self.f.known(rem)
        if r is None:
            return [True] * count
        return [(i + 1) * block > r for i in range(ceil_div(r, block))]

    def k_block(self) -> int:
        k = self.f.known(self.K)
        if k is None:
            return self.k_candidates[-1]
        fitting = [c for c in self.k_candidates if c <= k]
        return fitting[-1] if fitting else self.k_candidates[0]

    def load_a(self, m: Int, k: Value, kb: int, row_check: bool, k_check: bool) -> Value:
        g = self.g
        ty = g.ctx.coopmatrix(self.ta, self.block0, kb, MatrixUse.a)
        flag = _checked(row_check, k_check)
        pos = (k, g.idx(m)) if self.tA else (g.idx(m), k)
        return self.load_block(self.A, pos, ty, self.tA, flag)

    def load_b(self, k: Value, n: Int, kb: int, cols: int, col_check: bool, k_check: bool) -> Value:
        g = self.g
        ty = g.ctx.coopmatrix(self.tb, kb, cols, MatrixUse.b)
        flag = _checked(k_check, col_check)
        pos = (g.idx(n), k) if self.tB else (k, g.idx(n))
        return self.load_block(self.B, pos, ty, self.tB, flag)

    def load_block(
        self, memref: Value, pos: tuple[Value, Value], ty: Type, trans: bool, flag: CheckedFlag
    ) -> Value:
        """cooperative_matrix_load of a `ty` block at `pos` (transposed if `trans`)."""
        props = {"tA": Transpose.t if trans else Transpose.n, "checked": flag}
        operands = {"operand": memref, "pos0": pos[0], "pos1": pos[1]}
        return self.b.value("cooperative_matrix_load", operands, props, ty)

    def store_c(
        self,
        op: str,
        val: Value,
        pos: tuple[Value, Value],
        flag: CheckedFlag,
        nontemporal: bool = False,
    ) -> None:
        """cooperative_matrix_`op` (store, atomic_store, atomic_add) of `val` into C at `pos`;
        a `nontemporal` store carries the attribute {"nontemporal"=true}, a hint that the
        SPIR-V conversion turns into a nontemporal, aligned store where the alignment is
        provable (spirv/convert/coopmatrix_memory.py `cm_nontemporal_alignment`)."""
        props = {"tA": Transpose.n, "checked": flag}
        if op != "store":
            props["scope"], props["semantics"] = SCOPE, SEMANTICS
        operands = {"val": val, "operand": self.C, "pos0": pos[0], "pos1": pos[1]}
        inst = self.b.emit("cooperative_matrix_" + op, operands, props)
        if nontemporal:
            ctx = self.g.ctx
            inst.attrs = ctx.dictionary_attr({NONTEMPORAL: ctx.boolean_attr(True)})

    def col_pieces(self, cols_checks: list[bool], cols: int) -> list[tuple[int, int, bool]]:
        """(offset, columns, checked) of the accumulator coopmatrices of a subgroup tile's
        row block: one per entry of `cols_checks` (block1 apart), except that on the standard
        path of a SIMD CPU core (not the DPAS path, whose shapes the matrix table fixes) a
        real tile of 8 or 16 columns is held as coopmatrices of 4. Their accumulators would
        cross the K loop as one 8- or 16-component vector per work-item, which the CPU
        runtime's JIT shuffles and spills in every K step (its disassembly, AVX-512 f32 16^3
        1 x 8: 283 instructions, 28 of them stack accesses, for 64 FMAs; 2 x 4 columns: 48
        instructions, none); 2, 3 and 4 components and scalars (5-7, 9-15) stay in registers."""
        if not self.cpu_path or self.acc.is_complex or cols not in (8, 16):
            return [(j * self.block1, cols, chk) for j, chk in enumerate(cols_checks)]
        (chk,) = cols_checks  # the standard path has one column block (nb1 = 1)
        return [(p, CPU_PIECE_COLS, chk) for p in range(0, cols, CPU_PIECE_COLS)]

    def microkernel(
        self, m0: Int, n0: Int, rows: list[bool], cols_checks: list[bool], cols: int
    ) -> None:
        g, f, ix = self.g, self.f, self.g.index
        pieces = self.col_pieces(cols_checks, cols)
        nm, nn = len(rows), len(pieces)
        m_pos = [f.add(m0, i * self.block0, ix) for i in range(nm)]
        n_pos = [f.add(n0, p[0], ix) for p in pieces]

        def k_step(kb: int, k_check: bool):
            def body(k: Value, accs: list[Value]) -> list[Value]:
                a = [self.load_a(m_pos[i], k, kb, rows[i], k_check) for i in range(nm)]
                b = [
                    self.load_b(k, n_pos[j], kb, w, chk, k_check)
                    for j, (_, w, chk) in enumerate(pieces)
                ]
                mul_add = "cooperative_matrix_mul_add"
                return [
                    self.b.value(mul_add, {"a": a[i], "b": b[j], "c": accs[i * nn + j]})
                    for i in range(nm)
                    for j in range(nn)
                ]

            return body

        zeros = [
            g.zero(g.ctx.coopmatrix(self.acc, self.block0, w, MatrixUse.acc)) for _, w, _ in pieces
        ]
        accs = [zeros[j] for _ in range(nm) for j in range(nn)]
        kb, K0 = self.k_block(), self.K0
        if f.known(K0) != 0:
            accs = self.k_loop(0, K0, kb, accs, k_step(kb, False))
        accs = self.k_remainder(K0, accs, k_step(self.k_candidates[0], self.check_k))
        self.epilogue(accs, m_pos, n_pos, rows, pieces)

    def k_loop(self, start: Int, end: Int, step: int, accs: list[Value], body) -> list[Value]:
        """for k = start; k < end; k += step carrying the accumulators; straight-line when the
        trip count is known to be 1."""
        s, e = self.f.known(start), self.f.known(end)
        if s is not None and e is not None and s < e <= s + step:
            return body(self.g.idx(s), accs)
        return self.g.loop(start, end, step, accs, body, self.loop_attrs)

    def k_remainder(self, K0: Int, accs: list[Value], body) -> list[Value]:
        """for k in [K0, K) step smallest candidate; inside `if K0 < K` when not known."""
        g, f = self.g, self.f
        k0, k = f.known(K0), f.known(self.K)
        step = self.k_candidates[0]
        if k0 is not None and k is not None:
            if k0 >= k:
                return accs
            return self.k_loop(K0, self.K, step, accs, body)
        scope = self.b.if_(g.binary("less_than", g.idx(K0), g.idx(self.K)), [a.type for a in accs])
        with scope as (then, otherwise):
            with then:
                self.b.yield_(*g.loop(K0, self.K, step, accs, body, self.loop_attrs))
            with otherwise:
                self.b.yield_(*accs)
        return scope.results

    def epilogue(
        self,
        accs: list[Value],
        m_pos: list[Int],
        n_pos: list[Int],
        rows: list[bool],
        pieces: list[tuple[int, int, bool]],
    ) -> None:
        """Scale the accumulators by alpha and store them (`store_tile`). On a SIMD CPU core
        with a real accumulator type, a run-time alpha is tested once per subgroup tile,
        together with a run-time beta: alpha 1 and beta 0 (the common case) store the
        accumulators as they are, without the multiplication per accumulator vector (1/K of the
        tile's FMAs) and the per-vector test of beta. With a constant beta only alpha == 1 is
        tested: beta 0 then stores the unscaled accumulators, a constant non-zero beta (or the
        .atomic update) acc + beta*C with acc unscaled. Tested per vector, the runtime's JIT
        would make a select of it, as costly as the multiplication; an if that yields the
        accumulators made it shuffle them (AVX-512 f64 16^3: vpermt2pd per vector); alpha 1
        with a run-time beta tested inside the branch did the same at 32^3 f32
        (CL_CONFIG_DUMP_ASM).

        The type tested is the accumulator's, not alpha's: a real alpha with a complex C takes
        the scaled path. Complex accumulators always do: multiplying by 1+0i is not the identity
        when a component is Inf or NaN (inf*0 is NaN: (inf+nan*i)*(1+0i) = nan+nan*i), so
        skipping it would change such results against the general path."""
        g = self.g
        alpha = self.alpha
        if known_number(alpha) == 1:
            self.store_tile(accs, m_pos, n_pos, rows, pieces)
            return
        alpha = g.promote(alpha, self.acc)

        def scaled() -> list[Value]:
            return [g.binary("cooperative_matrix_scale", alpha, acc) for acc in accs]

        if not self.cpu_path or self.acc.is_complex or known_number(self.alpha) is not None:
            self.store_tile(scaled(), m_pos, n_pos, rows, pieces)
            return
        cond = g.binary("equal", alpha, self.b.constant(1, self.acc))
        beta_tested = known_number(self.beta) is None
        if beta_tested:
            cond = g.binary("and", cond, g.beta_is_zero(self.beta))
        with self.b.if_(cond) as (then, otherwise):
            with then:
                self.store_tile(accs, m_pos, n_pos, rows, pieces, beta_tested)
            with otherwise:
                self.store_tile(scaled(), m_pos, n_pos, rows, pieces)

    def store_tile(
        self,
        accs: list[Value],
        m_pos: list[Int],
        n_pos: list[Int],
        rows: list[bool],
        pieces: list[tuple[int, int, bool]],
        beta_zero: bool = False,
    ) -> None:
        """C = acc + beta*C (or the atomic update) for the tile's scaled accumulators; C = acc
        where `beta_zero` (a run-time beta tested 0)."""
        g = self.g
        nn = len(n_pos)
        for t, acc in enumerate(accs):
            i, j = divmod(t, nn)
            _, cols, col_check = pieces[j]
            c_ty = g.ctx.coopmatrix(self.tc, self.block0, cols, MatrixUse.acc)
            acc_ty = g.ctx.coopmatrix(self.acc, self.block0, cols, MatrixUse.acc)
            pos = (g.idx(m_pos[i]), g.idx(n_pos[j]))
            flag = _checked(rows[i], col_check)
            if g.atomic:
                self.store_c("atomic_" + g.atomic_op(self.beta), g.cast(acc, c_ty), pos, flag)
                continue

            def load_c(
                pos: tuple[Value, Value] = pos, flag: CheckedFlag = flag, c_ty=c_ty, acc_ty=acc_ty
            ) -> Value:
                return g.cast(self.load_block(self.C, pos, c_ty, False, flag), acc_ty)

            out = None if beta_zero else g.combine(acc, self.beta, load_c)
            # C = acc: nothing reads C, so a C of this entry only goes out (`nontemporal_c`)
            nontemporal = out is None and self.nontemporal_c
            out = acc if out is None else out
            self.store_c("store", g.cast(out, c_ty), pos, flag, nontemporal)


def _entry_of_group(view: Value) -> tuple[Inst, int] | None:
    """(the subview, which of its dynamic offsets) when `view` is a subview of which exactly
    one dynamic offset is group_id.x, in a dropped mode (static size 0: the batch mode of a
    stack); else None."""
    inst = view.defining_inst
    if inst is None or inst.name != "subview":
        return None
    dyn_modes = [k for k, o in enumerate(inst.props["static_offsets"]) if o == DYNAMIC]
    hits = [i for i, v in enumerate(inst.operand_list("offsets")) if _is_group_id_x(v)]
    if len(hits) != 1 or inst.props["static_sizes"][dyn_modes[hits[0]]] != 0:
        return None
    return inst, hits[0]


def _is_group_id_x(v: Value) -> bool:
    inst = v.defining_inst
    return inst is not None and inst.name == "group_id" and inst.props["mode"] is Comp3.x


def gemm(g: LinalgGen) -> None:
    GemmLowering(g).build()
