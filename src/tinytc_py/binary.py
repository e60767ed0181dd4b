"""What the compiler hands to the runtimes and the kernel cache: a SPIR-V (or native) binary
with the launch metadata of each kernel (docs/design.md §B1, §B2.2).

It sits below the compiler (which produces it; spirv/convert/metadata.py fills in the metadata)
and below the kernel cache (which stores it), so that the cache need not import the compiler it
serves; it depends on nothing but the error types and the core feature flags.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import Status, TinytcError
from .target.core_info import CoreFeature


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
    (`written`, analysis/kernel_interface.py), the base `alignment` in bytes the compiler
    assumed for it (docs/design.md §B1.4; 0: none) and `nontemporal_alignment`, that same
    alignment where the kernel stores into the parameter's memory nontemporal, which faults at a
    less aligned address, so the runtimes check it (0: the kernel relies on no alignment)."""

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
    nontemporal_alignment: int = 0


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


@dataclass
class Binary:
    """A compiled program: SPIR-V bytes, per-kernel metadata and the core feature flags
    (large register file) the runtime must pass to the device compiler."""

    data: bytes
    kernels: dict[str, KernelInfo] = field(default_factory=dict)
    core_features: CoreFeature = CoreFeature(0)
    format: str = "spirv"
    cache: bool = True  # False: compiled with the kernel cache off, so keep its build out too

    def kernel(self, name: str) -> KernelInfo:
        try:
            return self.kernels[name]
        except KeyError as e:
            raise TinytcError(Status.invalid_arguments, f"no kernel named {name!r}") from e


__all__ = ["ArgInfo", "Binary", "KernelInfo", "ParamInfo"]
