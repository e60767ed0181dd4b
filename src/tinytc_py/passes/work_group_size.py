"""work-group-size: chooses the function's subgroup_size and work_group_size attributes
(docs/design.md §B2.1) from the linear-algebra instructions it contains.

A function that has both attributes keeps them; a missing one is computed (the subgroup size
first, then the local tiling for it). Given or computed, the sizes are checked against the core
info: the subgroup size must be supported (unsupported_subgroup_size), and W0 % S == 0 and
W0*W1 <= the maximum work-group size (unsupported_work_group_size).

The core info is a constructor argument; without one the pass uses the PVC core
(`CoreInfo.default()`, small register file), which is what the lit tests assume.
"""

from __future__ import annotations

from ..analysis.tiling import (
    BlasShape,
    blas_shapes,
    suggest_local_tiling,
    suggest_subgroup_size,
)
from ..errors import CompilationError, Status, TinytcError
from ..ir.attrs import ArrayAttr, IntegerAttr, int_value
from ..ir.region import Func
from ..target.core_info import CoreInfo
from .base import FunctionPass


def function_sizes(func: Func) -> tuple[int | None, list[int] | None]:
    """(subgroup_size, work_group_size) from the function's attributes (None when absent)."""
    attrs = func.attrs
    sgs = attrs.get("subgroup_size") if attrs is not None else None
    wgs = attrs.get("work_group_size") if attrs is not None else None
    s = sgs.value if isinstance(sgs, IntegerAttr) else None
    w = [int_value(a) for a in wgs.values] if isinstance(wgs, ArrayAttr) else None
    return s, w


def chosen_subgroup_size(func: Func, info: CoreInfo, shapes: list[BlasShape] | None = None) -> int:
    """The subgroup size this pass gives `func` for `info`: its attribute, else the heuristic's
    choice for its linear algebra (`shapes`, found when not given). The GEMM autotuner times
    its candidates at this size, so they are timed as the compile will run them."""
    sgs, _ = function_sizes(func)
    if sgs is not None:
        return sgs
    return suggest_subgroup_size(blas_shapes(func) if shapes is None else shapes, info)


def ensure_sizes(func: Func, ctx, out, core_info: CoreInfo | None) -> tuple[int, list[int]]:
    """The function's (subgroup_size, work_group_size), computed by this pass first when an
    attribute is missing (the lowering passes may run without it, e.g. from tinytc-opt)."""
    sgs, wgs = function_sizes(func)
    if sgs is None or wgs is None:
        WorkGroupSize(core_info).run(func, ctx, out)
        sgs, wgs = function_sizes(func)
    return sgs, wgs


class WorkGroupSize(FunctionPass):
    name = "work-group-size"

    def __init__(self, core_info: CoreInfo | None = None) -> None:
        self.info = core_info or CoreInfo.default()

    def run(self, func, ctx, out) -> None:
        sgs, wgs = function_sizes(func)
        given = sgs is not None and wgs is not None
        shapes = [] if given else blas_shapes(func)
        sgs = chosen_subgroup_size(func, self.info, shapes)
        max_wgs = self._max_work_group_size(func, sgs)
        if wgs is None:
            m, n = suggest_local_tiling(shapes, sgs, self.info)
            wgs = [m * sgs, n]
        if wgs[0] % sgs or wgs[0] * wgs[1] > max_wgs:
            raise CompilationError(
                func.loc,
                Status.unsupported_work_group_size,
                f"unsupported work-group size [{wgs[0]}, {wgs[1]}] for subgroup size {sgs} "
                f"(W0 must be a multiple of it, W0*W1 at most {max_wgs})",
            )
        if given:
            return
        items = {k.value: v for k, v in func.attrs.items} if func.attrs is not None else {}
        items["subgroup_size"] = ctx.integer_attr(sgs)
        items["work_group_size"] = ctx.array_attr([ctx.integer_attr(w) for w in wgs])
        func.attrs = ctx.dictionary_attr(items)

    def _max_work_group_size(self, func: Func, sgs: int) -> int:
        try:
            return self.info.max_work_group_size(sgs)
        except TinytcError as exc:
            raise CompilationError(
                func.loc, Status.unsupported_subgroup_size, f"subgroup size {sgs} is not supported"
            ) from exc
