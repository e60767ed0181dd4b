"""The runtime-independent half of launching a kernel: programs that hand out their kernels,
and how Python values become the kernel arguments of the calling convention (docs/design.md §B1).
The OpenCL and Level Zero runtimes share it and differ only in how a program is built, how
memory is allocated and how an argument is set.

- scalars: Python or NumPy numbers converted to the parameter's type (bf16: a float, rounded,
  or np.uint16 bits);
- memrefs: NumPy arrays (tinytc memrefs are column-major; the array's own element strides are
  used when they fit the memref type, otherwise Fortran order), or `Memref(buffer, shape,
  strides)` for memory the caller already has on the device (a cl.Buffer, or a USM pointer);
- groups: a list of NumPy arrays or `Group(members, offset)`: a table of member pointers plus
  one table per dynamic shape or stride entry, each holding one int64 per member; member i's
  data starts `offset` elements after G[i].
Dynamic shape and stride entries are int64, in elements.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..compiler import Binary
from ..errors import Status, TinytcError
from ..ir.types import DYNAMIC
from ..numpy_types import DTYPES
from ..spirv.convert import KernelInfo, ParamInfo, float_to_bf16_bits


class BuiltProgram:
    """A compiled program built for one device of a runtime. `kernel(name)` makes the
    runtime's kernel (`kernel_class(program, kernel info)`) once per name."""

    kernel_class: Any

    def __init__(self, binary: Binary, context: Any, device: Any) -> None:
        self.binary = binary
        self.context = context
        self.device = device
        self._kernels: dict[str, Any] = {}

    def kernel(self, name: str) -> Any:
        k = self._kernels.get(name)
        if k is None:
            k = self._kernels[name] = self.kernel_class(self, self.binary.kernel(name))
        return k


class BuiltKernel:
    """A kernel of a BuiltProgram, with its metadata (parameters, sizes) from the binary."""

    def __init__(self, program: BuiltProgram, info: KernelInfo) -> None:
        self.program = program
        self.info = info

    @property
    def work_group_size(self) -> tuple[int, int, int]:
        return (*self.info.work_group_size, 1)


@dataclass
class Memref:
    """Device memory viewed as a memref: shape and strides in elements. `buffer` is what the
    runtime passes (a cl.Buffer for OpenCL, a USM pointer for Level Zero)."""

    buffer: Any
    shape: tuple[int, ...]
    strides: tuple[int, ...]


@dataclass
class Group:
    """Group argument: member arrays and the offset (in elements) applied to every member."""

    members: Sequence[np.ndarray]
    offset: int = 0


def invalid_argument(message: str) -> TinytcError:
    return TinytcError(Status.invalid_kernel_arguments, message)


def global_size(num_groups: int | Sequence[int], local: Sequence[int]) -> tuple[int, int, int]:
    """num_groups x work-group size, per dimension (docs/design.md §B2.3)."""
    return tuple(n * l for n, l in zip(group_count(num_groups), local, strict=False))  # type: ignore[return-value]


def group_count(num_groups: int | Sequence[int]) -> tuple[int, int, int]:
    ng = (num_groups,) if isinstance(num_groups, int) else tuple(num_groups)
    return (ng + (1, 1, 1))[:3]  # type: ignore[return-value]


def check_arg_count(name: str, params: Sequence[ParamInfo], args: Sequence[Any]) -> None:
    if len(args) != len(params):
        raise invalid_argument(f"{name} takes {len(params)} arguments, got {len(args)}")


def scalar_value(dtype: str, value: Any, what: str) -> np.generic:
    """`value` as the NumPy scalar a `dtype` parameter takes."""
    if dtype not in DTYPES:
        raise invalid_argument(f"{what}: {dtype} cannot be a kernel argument")
    try:
        if dtype == "bf16" and not isinstance(value, np.uint16):
            return np.uint16(float_to_bf16_bits(float(value)))
        with np.errstate(over="ignore"):  # a float beyond the type's range is inf, as in a cast
            return DTYPES[dtype](value)
    except (OverflowError, TypeError, ValueError) as e:  # e.g. 300 for an i8, nan for an i32
        raise invalid_argument(f"{what}: {value!r} is not a valid {dtype} ({e})") from e


def elem_strides(arr: Any) -> tuple[int, ...] | None:
    """The array's strides in elements (0 for extents <= 1), or None if not whole elements."""
    size = arr.dtype.itemsize  # pyopencl.array.Array has no .itemsize
    if any(s <= 0 or s % size for s, n in zip(arr.strides, arr.shape, strict=False) if n > 1):
        return None
    return tuple(s // size if n > 1 else 0 for s, n in zip(arr.strides, arr.shape, strict=False))


def fortran_strides(shape: Sequence[int]) -> tuple[int, ...]:
    out, s = [], 1
    for n in shape:
        out.append(s)
        s *= n
    return tuple(out)


def _fits(p: ParamInfo, shape: Sequence[int], strides: Sequence[int]) -> bool:
    return all(
        e in (DYNAMIC, x) or n <= 1 for e, x, n in zip(p.stride, strides, shape, strict=False)
    )


def memref_layout(p: ParamInfo, arr: np.ndarray, what: str) -> tuple[int, ...]:
    """Element strides to pass `arr` with (its own if they fit the type, else Fortran order)."""
    if arr.ndim != len(p.shape) or any(
        e not in (DYNAMIC, n) for e, n in zip(p.shape, arr.shape, strict=False)
    ):
        raise invalid_argument(f"{what}: array shape {arr.shape} does not fit memref shape")
    want = np.dtype(DTYPES[p.dtype])
    if arr.dtype != want:
        raise invalid_argument(f"{what}: expected dtype {want}, got {arr.dtype}")
    fortran = fortran_strides(arr.shape)
    full_stride = tuple(fortran)
    if DYNAMIC not in p.stride:
        full_stride = p.stride
    for cand in (elem_strides(arr), fortran, full_stride):
        if cand is not None and _fits(p, arr.shape, cand):
            return tuple(c if c else f for c, f in zip(cand, fortran, strict=False))
    raise invalid_argument(f"{what}: no layout of the array fits the memref strides")


def span(shape: Sequence[int], strides: Sequence[int]) -> int:
    """Elements from the first to one past the last element of a strided array."""
    if any(n == 0 for n in shape):
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(shape, strides, strict=False))


def staged(
    arr: np.ndarray, strides: Sequence[int], flat: np.ndarray, offset: int = 0
) -> np.ndarray:
    """A view of `flat` (from element `offset`) with arr's shape and the given strides."""
    item = arr.itemsize
    return np.lib.stride_tricks.as_strided(
        flat[offset:], shape=arr.shape, strides=tuple(s * item for s in strides)
    )


def dope_values(p: ParamInfo, shape: Sequence[int], strides: Sequence[int]) -> list[np.int64]:
    """The arguments that follow a memref's pointer: its dynamic extents, then its dynamic
    strides."""
    out = [np.int64(n) for e, n in zip(p.shape, shape, strict=False) if e == DYNAMIC]
    out += [np.int64(s) for e, s in zip(p.stride, strides, strict=False) if e == DYNAMIC]
    return out


@dataclass
class GroupLayout:
    """How a group argument is laid out: per member its strides and the element count of its
    staging buffer (offset included), and the dope tables (one row per dynamic entry)."""

    members: list[np.ndarray]
    offset: int
    strides: list[tuple[int, ...]]
    sizes: list[int]
    tables: list[np.ndarray]

    def trailing(self, p: ParamInfo) -> list[np.int64]:
        """The scalar arguments after the tables: dynamic group size, then dynamic offset."""
        out = [np.int64(len(self.members))] if p.size == DYNAMIC else []
        return out + ([np.int64(self.offset)] if p.offset == DYNAMIC else [])


def group_layout(p: ParamInfo, arg: Any, what: str) -> GroupLayout:
    grp = arg if isinstance(arg, Group) else Group(list(arg))
    members = [np.asarray(m) for m in grp.members]
    if p.size != DYNAMIC and p.size != len(members):
        raise invalid_argument(f"{what}: group size {p.size}, got {len(members)} members")
    if p.offset != DYNAMIC and grp.offset != p.offset:
        raise invalid_argument(f"{what}: group offset is {p.offset}")
    count = max(1, len(members))
    dyn_shape = [i for i, e in enumerate(p.shape) if e == DYNAMIC]
    dyn_stride = [i for i, e in enumerate(p.stride) if e == DYNAMIC]
    tables = [np.zeros(count, dtype=np.int64) for _ in dyn_shape + dyn_stride]
    strides, sizes = [], []
    for i, m in enumerate(members):
        st = memref_layout(p, m, f"{what} member {i}")
        strides.append(st)
        sizes.append(grp.offset + max(1, span(m.shape, st)))
        for row, j in enumerate(dyn_shape):
            tables[row][i] = m.shape[j]
        for row, j in enumerate(dyn_stride):
            tables[len(dyn_shape) + row][i] = st[j]
    return GroupLayout(members, grp.offset, strides, sizes, tables)


def writeback_targets(arg: Any) -> list[Any]:
    """The original member objects of a group argument (to copy results back into)."""
    return list(arg.members if isinstance(arg, Group) else arg)
