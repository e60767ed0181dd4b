"""Kernel metadata the host needs to launch a converted function (docs/design.md §B1, §B2.2)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ...analysis.kernel_interface import grid_axes, grid_bounds, written_params
from ...errors import CompilationError, Status
from ...ir.attrs import ArrayAttr, IntegerAttr
from ...ir.region import Func
from ...target.core_info import CoreInfo

DEFAULT_SUBGROUP_SIZE = 16


@dataclass(frozen=True)
class ArgInfo:
    """One kernel argument. `kind`: scalar, memref, shape, stride, group, group_shape,
    group_stride, group_size or group_offset; `param` is the IR parameter it belongs to and
    `mode` the shape/stride mode (-1 otherwise)."""

    kind: str
    param: int
    mode: int = -1


@dataclass(frozen=True)
class ParamInfo:
    """An IR parameter as the host sees it: `kind` scalar/memref/group, `dtype` the (element)
    type's text, static `shape`/`stride` (DYNAMIC for '?'), group `size`/`offset`, and the range
    [first_arg, first_arg + num_args) of its kernel arguments. For launch checks and messages:
    the parameter's `name` (without '%'), its IR `type` text, whether the kernel may write it
    (`written`, analysis/kernel_interface.py) and the base `alignment` in bytes the compiler
    assumed for it (docs/design.md §B1.4; 0: none)."""

    kind: str
    dtype: str
    first_arg: int
    num_args: int
    shape: tuple[int, ...] = ()
    stride: tuple[int, ...] = ()
    size: int = 0
    offset: int = 0
    local: bool = False
    name: str = ""
    type: str = ""
    written: bool = True
    alignment: int = 0


@dataclass
class KernelInfo:
    """A kernel's launch metadata. `grid_axes`: whether the kernel reads group_id/num_groups of
    x, y, z; `grid_bounds`: (axis, parameter, mode) triples, num_groups[axis] <= the extent of
    that mode of that argument (mode -1: a group's member count); see
    analysis/kernel_interface.py. `bounds_checks`: None in default mode; in bounds-checked mode
    the message template of each check id, and the last parameter is the report record
    (bounds_record.py)."""

    name: str
    work_group_size: tuple[int, int]
    subgroup_size: int
    params: list[ParamInfo] = field(default_factory=list)
    args: list[ArgInfo] = field(default_factory=list)
    grid_axes: tuple[bool, bool, bool] = (True, True, True)
    grid_bounds: tuple[tuple[int, int, int], ...] = ()
    bounds_checks: list[str] | None = None


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
    written = written_params(func)
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
    info.grid_axes = grid_axes(func)
    info.grid_bounds = tuple((b.axis, b.param, b.mode) for b in grid_bounds(func))
