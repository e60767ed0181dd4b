"""Fills in the kernel metadata (binary.py) the host needs to launch a converted function
(docs/design.md §B1, §B2.2)."""

from __future__ import annotations

from dataclasses import replace

from ...analysis.kernel_interface import kernel_interface
from ...binary import KernelInfo
from ...errors import CompilationError, Status
from ...ir.attrs import ArrayAttr, IntegerAttr
from ...ir.region import Func
from ...target.core_info import CoreInfo

DEFAULT_SUBGROUP_SIZE = 16


def _int_attr(attr, default: int | None = None) -> int | None:
    return attr.value if isinstance(attr, IntegerAttr) else default


def kernel_sizes(func: Func, core_info: CoreInfo) -> tuple[int, tuple[int, int]]:
    """Subgroup size and work-group size from the function attributes (docs/design.md §B2.2).

    Without attributes: subgroup size 16 (or the smallest supported size above it) and
    work-group size [S, 1]; the work-group-size pass will choose properly later.
    """
    attrs = func.attrs
    sgs = _int_attr(attrs.get("subgroup_size")) if attrs is not None else None
    wgs_attr = attrs.get("work_group_size") if attrs is not None else None
    if sgs is None:
        sizes = sorted(core_info.subgroup_sizes)
        sgs = next((s for s in sizes if s >= DEFAULT_SUBGROUP_SIZE), sizes[-1])
    if sgs not in core_info.subgroup_sizes:
        raise CompilationError(
            func.loc, Status.unsupported_subgroup_size, f"subgroup size {sgs} is not supported"
        )
    if isinstance(wgs_attr, ArrayAttr):
        wgs = tuple(_int_attr(v, 0) for v in wgs_attr.values)
        w0, w1 = (wgs + (1,))[:2]
    else:
        w0, w1 = sgs, 1
    max_wgs = core_info.max_work_group_size(sgs)
    if w0 <= 0 or w1 <= 0 or w0 % sgs or w0 * w1 > max_wgs:
        raise CompilationError(
            func.loc,
            Status.unsupported_work_group_size,
            f"work-group size [{w0}, {w1}] is not supported with subgroup size {sgs}"
            f" (maximum {max_wgs})",
        )
    return sgs, (w0, w1)


def annotate(info: KernelInfo, func: Func, core_info: CoreInfo) -> None:
    """Add the launch-check facts of `func` (names, types, written parameters, alignments, grid
    use) to its metadata `info`, whose params the converter has filled in."""
    facts = kernel_interface(func)
    written = facts.written
    for k, (p, value) in enumerate(zip(info.params, func.params, strict=True)):
        attrs = func.param_attrs[k]
        align = attrs.get("alignment") if attrs is not None else None
        alignment = 0
        if p.kind != "scalar" and not p.local:
            alignment = (
                align.value if isinstance(align, IntegerAttr) else core_info.default_alignment
            )
        info.params[k] = replace(
            p, name=value.name, type=str(value.type), written=k in written, alignment=alignment
        )
    info.grid_axes = facts.axes
    info.grid_bounds = tuple((b.axis, b.param, b.mode) for b in facts.bounds)
