"""Fills in the kernel metadata (binary.py) the host needs to launch a converted function
(docs/design.md §B1, §B2.2)."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection

from ...analysis.kernel_interface import KernelInterface
from ...binary import ArgInfo, KernelInfo, ParamInfo
from ...errors import CompilationError, Status
from ...ir.attrs import ArrayAttr, IntegerAttr
from ...ir.region import Func
from ...ir.values import Value
from ...target.core_info import CoreInfo

DEFAULT_SUBGROUP_SIZE = 16

# The argument and parameter records are frozen dataclasses, whose generated __init__ runs
# interpreted even when this module is compiled (about 1 us per ArgInfo, 2.6 us per ParamInfo;
# a kernel with four memref parameters makes some 16 and 5 of them). Equal records are equal
# values, so one instance of each serves every kernel: these memos hand out the instance made
# first. ArgInfo's fields are few small numbers per parameter; ParamInfo's hold the parameter's
# name and type, so that memo is emptied when it reaches PARAM_MEMO_SIZE entries.
_ARG_INFOS: dict[tuple[str, int, int], ArgInfo] = {}
_PARAM_INFOS: dict[tuple[object, ...], ParamInfo] = {}
PARAM_MEMO_SIZE = 4096


def arg_info(kind: str, param: int, mode: int = -1) -> ArgInfo:
    """`ArgInfo(kind, param, mode)`, shared (see _ARG_INFOS)."""
    key = (kind, param, mode)
    found = _ARG_INFOS.get(key)
    if found is None:
        found = _ARG_INFOS[key] = ArgInfo(kind, param, mode)
    return found


def param_info(
    kind: str,
    dtype: str,
    first_arg: int,
    num_args: int,
    shape: tuple[int, ...] = (),
    stride: tuple[int, ...] = (),
    size: int = 0,
    offset: int = 0,
    local: bool = False,
    name: str = "",
    type: str = "",
    written: bool = True,
    alignment: int = 0,
    nontemporal_alignment: int = 0,
) -> ParamInfo:
    """`ParamInfo(...)` of these fields (in ParamInfo's order), shared (see _ARG_INFOS)."""
    key = (
        kind,
        dtype,
        first_arg,
        num_args,
        shape,
        stride,
        size,
        offset,
        local,
        name,
        type,
        written,
        alignment,
        nontemporal_alignment,
    )
    found = _PARAM_INFOS.get(key)
    if found is None:
        if len(_PARAM_INFOS) >= PARAM_MEMO_SIZE:
            _PARAM_INFOS.clear()
        found = _PARAM_INFOS[key] = ParamInfo(*key)
    return found


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


def param_facts(
    func: Func, k: int, facts: KernelInterface, core_info: CoreInfo, memory: bool
) -> tuple[str, str, bool, int]:
    """The launch-check facts of parameter k: its name, its IR type's text, whether the kernel
    may write it and, for a memref or group in global memory (`memory`), the base alignment in
    bytes the compiler assumes (its `alignment` attribute, else the core's default; 0 for the
    others). The converter puts them into the parameter's ParamInfo when it creates it."""
    value = func.params[k]
    alignment = 0
    if memory:
        attrs = func.param_attrs[k]
        align = attrs.get("alignment") if attrs is not None else None
        # int(): 128.0 or np.int64(128) (a host's default_alignment) would key the record memo
        # like 128 (equal, same hash) and hand a record holding a float to a later compile;
        # read untyped, so that compiled code converts it instead of refusing a non-int
        default = getattr(core_info, "default_alignment")  # noqa: B009
        alignment = align.value if isinstance(align, IntegerAttr) else int(default)
    return value.name, str(value.type), k in facts.written, alignment


def mark_nontemporal(info: KernelInfo, func: Func, roots: Collection[Value]) -> None:
    """Record on the ParamInfo of each parameter of `func` among `roots` (the memory the
    kernel stores into nontemporal) that the kernel relies on its alignment."""
    for k, p in enumerate(func.params):
        if p in roots:
            p_info = info.params[k]
            info.params[k] = dataclasses.replace(p_info, nontemporal_alignment=p_info.alignment)


def annotate(info: KernelInfo, facts: KernelInterface) -> None:
    """Add the grid facts of the kernel to its metadata `info`."""
    info.grid_axes = facts.axes
    info.grid_bounds = tuple((b.axis, b.param, b.mode) for b in facts.bounds)
