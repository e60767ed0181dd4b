"""The runtime-independent half of launching a kernel: programs that hand out their kernels,
the kernel object users call (signature, docstring, arguments by position or name, the grid),
the checks every launch makes before anything runs, and how Python values become the kernel
arguments of the calling convention (docs/design.md §B1). The OpenCL and Level Zero runtimes share
it and differ only in how a program is built, how memory is allocated and how an argument is
set (`BuiltKernel.launch`); host memory of any kind reaches them as a NumPy view
(runtime/host_arrays.py).

A launch is all or nothing: the arguments are converted and checked (types, shapes, dtypes,
writability, the grid against what the kernel reads and against the extents it indexes with
`group_id`) before anything is enqueued, and every refusal is a `TypeError` (a wrong Python
type, a missing or unknown argument) or a `TinytcError` naming the kernel, the parameter and
what it expected.

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

import abc
import functools
import inspect
import keyword
import operator
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ..binary import Binary, KernelInfo, ParamInfo
from ..errors import Status, TinytcError
from ..ir.types import DYNAMIC
from ..numpy_types import DTYPES
from ..spirv.convert import float_to_bf16_bits
from .bounds_report import raise_if_violated, with_report, without_record
from .host_arrays import require_host_array, require_writable


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


Grid = tuple[int, int, int]


class BuiltKernel(abc.ABC):
    """A kernel of a BuiltProgram, with its metadata (parameters, sizes) from the binary.

    Called as ``kernel(*args, num_groups=..., queue=None, **named)``: one argument per IR
    parameter, by position or by the parameter's name. The runtime subclass runs the checked
    arguments (`launch`)."""

    def __init__(self, program: BuiltProgram, info: KernelInfo) -> None:
        self.program = program
        self.info = info
        self.caller_info = without_record(info)  # the parameters a caller passes
        self.labels = [label(info, k) for k in range(len(info.params))]  # label(), made once
        # Held by a launch from its first argument set to its enqueue: the arguments are set
        # on the kernel's one runtime handle (clSetKernelArg, zeKernelSetArgumentValue), which
        # two threads launching this kernel at once would otherwise overwrite for each other.
        self.launch_lock = threading.Lock()
        self.names = python_names(self.caller_info)
        self.__signature__ = signature(self.caller_info, self.names)
        # help(kernel) documents the object's class: each kernel gets a subclass of its own
        # that carries its docstring (parameters, types, grid)
        cls = type(self)
        doc = docstring(self.caller_info, self.names, self.work_group_size)
        self.__class__ = type(cls.__name__, (cls,), {"__doc__": doc, "__module__": cls.__module__})

    @property
    def work_group_size(self) -> tuple[int, int, int]:
        return (*self.info.work_group_size, 1)

    def __repr__(self) -> str:
        params = ", ".join(
            f"%{p.name or k}: {p.type}" for k, p in enumerate(self.caller_info.params)
        )
        return (
            f"<Kernel @{self.info.name}({params}) work_group_size={self.work_group_size}"
            f" on {device_name(self.program.device)!r}>"
        )

    def __call__(self, *args: Any, num_groups: Any = None, queue: Any = None, **named: Any) -> None:
        values = bind_call(self.caller_info, self.names, args, named)
        grid = grid_of(self.info, num_groups)
        values, record = with_report(self.info, values)  # bounds-checked mode only
        self.launch(values, grid, queue)
        raise_if_violated(self.info, record)

    @abc.abstractmethod
    def launch(self, args: list[Any], grid: Grid, queue: Any) -> None:
        """Convert and set `args` (one per parameter, in order), check them against `grid`
        (check_grid_bounds) and run the kernel; the runtime's part."""

    def bind_checked(self, binder: ArgBinder, args: Sequence[Any], grid: Grid) -> bool:
        """Set every argument through `binder` and check the grid against the extents they
        report (check_grid_bounds); whether there is work to run (no dimension of the grid
        is 0)."""
        params = self.info.params
        extents = [binder.bind(k, p, a) for k, (p, a) in enumerate(zip(params, args, strict=True))]
        check_grid_bounds(self.info, grid, extents)
        return 0 not in grid

    def launch_failed(self, error: Exception) -> TinytcError:
        """The error a launch the runtime refused (enqueue, submit) raises."""
        return TinytcError(
            Status.compute_runtime_error, f"kernel @{self.info.name}: the launch failed: {error}"
        )


class ArgBinder(Protocol):
    """What a runtime sets kernel arguments with (`BuiltKernel.bind_checked`)."""

    def bind(self, k: int, p: ParamInfo, a: Any) -> Sequence[int] | int:
        """Set argument k; its extents (shape, or a group's member count) for the grid check."""
        ...


def device_name(device: Any) -> str:
    return str(getattr(device, "name", device)).strip()


def python_names(info: KernelInfo) -> list[str]:
    """The keyword each parameter is passed by: its IR name, or argK when that is no Python
    identifier (an unnamed %0) or clashes with a keyword or another parameter."""
    out: list[str] = []
    for k, p in enumerate(info.params):
        name = p.name
        if (
            not name.isidentifier()
            or keyword.iskeyword(name)
            or name in out
            or name in ("num_groups", "queue")
        ):
            name = f"arg{k}"
        out.append(name)
    return out


def grid_required(info: KernelInfo) -> bool:
    return any(info.grid_axes)


def signature(info: KernelInfo, names: Sequence[str]) -> inspect.Signature:
    """The kernel's call signature: its parameters (annotated with their IR types), then the
    keyword-only grid (required when the kernel reads group_id or num_groups) and queue."""
    P = inspect.Parameter
    params = [
        P(n, P.POSITIONAL_OR_KEYWORD, annotation=p.type)
        for n, p in zip(names, info.params, strict=True)
    ]
    grid_default = P.empty if grid_required(info) else 1
    params.append(P("num_groups", P.KEYWORD_ONLY, default=grid_default))
    params.append(P("queue", P.KEYWORD_ONLY, default=None))
    return inspect.Signature(params, return_annotation=None)


_AXES = "xyz"


def docstring(info: KernelInfo, names: Sequence[str], wgs: Sequence[int]) -> str:
    lines = [f"Kernel @{info.name}: {info.name}{signature(info, names)}", "", "Parameters:"]
    for n, p in zip(names, info.params, strict=True):
        use = ""
        if p.kind != "scalar":
            use = "  (written by the kernel)" if p.written else "  (read only)"
        lines.append(f"    {n}: {p.type}{use}")
    used = [a for a, u in zip(_AXES, info.grid_axes, strict=True) if u]
    size = "x".join(str(w) for w in wgs)
    if used:
        lines.append(
            f"    num_groups: int or (x, y, z), required: work-groups of {size} work-items;"
            f" the kernel reads group_id/num_groups of {', '.join(used)}"
        )
    else:
        lines.append(
            f"    num_groups: 1 by default: the kernel never reads group_id or num_groups, so one"
            f" work-group of {size} work-items does all of its work (more repeat it)"
        )
    for axis, k, mode in info.grid_bounds:
        what = "the number of members" if mode == -1 else f"the extent of mode {mode}"
        lines.append(
            f"        num_groups.{_AXES[axis]} <= {what} of {names[k]} (group_id indexes it)"
        )
    lines.append(
        "    queue: OpenCL: a pyopencl.CommandQueue on the kernel's device (default: the queue"
        " of the pyopencl array arguments, else the device's shared queue); SYCL: a"
        " dpctl.SyclQueue; Level Zero: none"
    )
    return "\n".join(lines)


def bind_call(
    info: KernelInfo, names: Sequence[str], args: Sequence[Any], named: dict[str, Any]
) -> list[Any]:
    """The arguments in parameter order, from positional and keyword arguments (TypeError for
    a missing, repeated or unknown one, as for a Python function)."""
    if not named and len(args) == len(names):
        return list(args)
    if len(args) > len(names):
        raise TypeError(
            f"kernel @{info.name} takes {len(names)} arguments ({', '.join(names)}), got {len(args)}"
        )
    values: dict[str, Any] = dict(zip(names, args, strict=False))
    for key, value in named.items():
        if key not in names:
            known = ", ".join([*names, "num_groups", "queue"])
            raise TypeError(
                f"kernel @{info.name} got an unexpected keyword argument {key!r} (it takes {known})"
            )
        if key in values:
            raise TypeError(f"kernel @{info.name} got multiple values for argument {key!r}")
        values[key] = value
    missing = [n for n in names if n not in values]
    if missing:
        raise TypeError(f"kernel @{info.name} is missing argument(s) {', '.join(missing)}")
    return [values[n] for n in names]


# The most work-groups along one axis: Level Zero's group count is a uint32_t per axis (and
# OpenCL's global size, count x work-group size, a size_t), for every runtime alike.
MAX_GROUPS = 2**32 - 1


def grid_of(info: KernelInfo, num_groups: Any) -> Grid:
    """The grid (x, y, z) of a launch: `num_groups` as an int or a sequence of up to 3 ints.

    Required when the kernel reads group_id or num_groups; otherwise 1 by default (every
    work-group of a larger grid runs the same work, which only kernels whose work-groups
    combine their results atomically want)."""
    if type(num_groups) is int and 0 <= num_groups <= MAX_GROUPS:  # the common case, as below
        return (num_groups, 1, 1)
    name = info.name
    if num_groups is None:
        if grid_required(info):
            used = ", ".join(a for a, u in zip(_AXES, info.grid_axes, strict=True) if u)
            raise TypeError(
                f"kernel @{name} needs num_groups= (the number of work-groups; the kernel reads"
                f" group_id/num_groups of {used})"
            )
        return (1, 1, 1)
    try:
        if isinstance(num_groups, (int, np.integer)):
            counts = [_count(num_groups)]
        else:
            counts = [_count(n) for n in num_groups]
    except TypeError:
        raise TypeError(
            f"kernel @{name}: num_groups must be an int or a sequence of 1 to 3 ints,"
            f" got {num_groups!r}"
        ) from None
    if not 1 <= len(counts) <= 3:
        raise TypeError(f"kernel @{name}: num_groups has 1 to 3 entries, got {num_groups!r}")
    grid = (*counts, 1, 1, 1)[:3]
    if any(n < 0 for n in grid):
        raise invalid_argument(f"kernel @{name}: num_groups {num_groups!r} is negative")
    if any(n > MAX_GROUPS for n in grid):
        raise invalid_argument(
            f"kernel @{name}: num_groups {num_groups!r} exceeds {MAX_GROUPS} (2**32 - 1)"
            " work-groups along an axis"
        )
    return grid  # type: ignore[return-value]


def _count(value: Any) -> int:
    """An int or NumPy integer (not a bool, a float or a string) as an int."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError
    return operator.index(value)


def check_grid_bounds(info: KernelInfo, grid: Grid, extents: Sequence[Sequence[int] | int]) -> None:
    """Refuse a grid larger than an extent the kernel indexes with group_id (`extents[k]`:
    argument k's shape, or a group's member count); such a launch would access memory
    beyond the argument. A bounds-checked kernel checks these accesses itself and reports the
    first one out of bounds (bounds_report.py), so its grid is not limited here."""
    if info.bounds_checks is not None:
        return
    for axis, k, mode in info.grid_bounds:
        extent = extents[k]
        bound = extent if isinstance(extent, int) else extent[mode]
        if grid[axis] > bound:
            p = info.params[k]
            what = "members" if mode == -1 else f"entries in mode {mode}"
            raise invalid_argument(
                f"kernel @{info.name}: num_groups.{_AXES[axis]} = {grid[axis]} exceeds the"
                f" {bound} {what} of %{p.name} ({p.type}), which the kernel indexes with"
                f" group_id.{_AXES[axis]}"
            )


def label(info: KernelInfo, k: int) -> str:
    """How messages about argument k start: the kernel, the parameter and what it expects."""
    p = info.params[k]
    return f"kernel @{info.name}, parameter %{p.name or k}: expected {p.type or p.dtype}"


def describe(value: Any) -> str:
    """A short description of a Python argument for messages."""
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        return f"{type(value).__name__} of shape {tuple(shape)} and dtype {dtype}"
    return f"{type(value).__name__} {value!r}"[:120]


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

    members: Sequence[Any]
    offset: int = 0


def invalid_argument(message: str) -> TinytcError:
    return TinytcError(Status.invalid_kernel_arguments, message)


def usm_pointer(buffer: Any, what: str) -> int:
    """The USM pointer a Level Zero or SYCL Memref holds: a nonzero int (anything else would
    reach the kernel as an address)."""
    if isinstance(buffer, bool) or not isinstance(buffer, (int, np.integer)):
        raise TypeError(
            f"{what}, got a tinytc_py.Memref of {describe(buffer)}; a Memref takes a USM pointer"
            " (int)"
        )
    if not 0 < int(buffer) < 2**64:
        raise invalid_argument(
            f"{what}, got a tinytc_py.Memref of the USM pointer {int(buffer):#x}"
        )
    return int(buffer)


def is_aligned(address: int, alignment: int) -> bool:
    """Whether `address` is a multiple of `alignment` bytes (0 or 1: any address)."""
    return address % max(1, alignment) == 0


def require_aligned(
    address: int, alignment: int, what: str, got: str = "a tinytc_py.Memref"
) -> int:
    """`address`, the base of the memory a kernel uses in place (`got`), when it has the
    `alignment` in bytes the kernel relies on (ParamInfo.nontemporal_alignment: its
    nontemporal vector stores, vmovntpd on x86, fault at a less aligned address; 0: none;
    docs/design.md §B1.4); else the invalid-argument error."""
    if not is_aligned(address, alignment):
        raise invalid_argument(
            f"{what}, got {got} at address {address:#x}, which is not aligned to"
            f" the parameter's {alignment} bytes (pass aligned memory, or declare a smaller"
            " {alignment=N} on the parameter)"
        )
    return address


def global_size(num_groups: int | Sequence[int], local: Sequence[int]) -> tuple[int, int, int]:
    """num_groups x work-group size, per dimension (docs/design.md §B2.3)."""
    if type(num_groups) is tuple and len(num_groups) == 3 and len(local) == 3:  # a launch's Grid
        return (num_groups[0] * local[0], num_groups[1] * local[1], num_groups[2] * local[2])
    return tuple(n * l for n, l in zip(group_count(num_groups), local, strict=False))  # type: ignore[return-value]


def group_count(num_groups: int | Sequence[int]) -> tuple[int, int, int]:
    ng = (num_groups,) if isinstance(num_groups, int) else tuple(num_groups)
    return (ng + (1, 1, 1))[:3]  # type: ignore[return-value]


# The values a Python int or float converts to without a check (scalar_value's fast path): the
# integer types' ranges, and the finite f32 range (a float beyond it becomes inf, below).
_INT_RANGES = {
    d: (int(np.iinfo(np.dtype(t)).min), int(np.iinfo(np.dtype(t)).max))
    for d, t in DTYPES.items()
    if d != "bf16" and np.issubdtype(t, np.integer)
}
_F32_MAX = float(np.finfo(np.float32).max)


def scalar_value(dtype: str, value: Any, what: str) -> np.generic:
    """`value` as the NumPy scalar a `dtype` parameter takes. As in Python's own conversions
    (float(1j) is a TypeError), a value of the wrong kind (an array, a string, a complex number
    for a real type, None, a float for an integer type) raises TypeError; a number of the right
    kind that the type cannot hold (a Python or NumPy integer out of range) raises TinytcError
    (invalid_kernel_arguments).

    The common arguments take a fast path with the same result: a NumPy scalar of the
    parameter's type as it is, a Python float for f64 (or a finite one in f32's range) and a
    Python int in the integer type's range converted directly (the general checks cost
    about 6 us, a launch sets several scalars)."""
    kind = type(value)
    if kind is float:
        if dtype == "f64" or (dtype == "f32" and -_F32_MAX <= value <= _F32_MAX):
            return DTYPES[dtype](value)
    elif kind is int:
        bounds = _INT_RANGES.get(dtype)
        if bounds is not None and bounds[0] <= value <= bounds[1]:
            return DTYPES[dtype](value)
    elif dtype != "bf16" and kind is DTYPES.get(dtype):
        return value  # type: ignore[no-any-return]
    if dtype not in DTYPES:
        raise invalid_argument(f"{what}, which cannot be a kernel argument")
    if value is None or isinstance(value, (str, bytes)) or np.ndim(value) != 0:
        raise TypeError(f"{what}, got {describe(value)}")
    if np.iscomplexobj(value) and not dtype.startswith("c"):
        raise TypeError(f"{what}, got the complex number {value!r}")
    bounds = _INT_RANGES.get(dtype)
    if bounds is not None:  # an integer type takes integers only, checked as Python ints
        number = value[()] if isinstance(value, np.ndarray) else value
        if not isinstance(number, (int, np.integer, np.bool_)):
            raise TypeError(
                f"{what}, got {type(value).__name__} {value!r}; an integer parameter takes an int"
            )
        if not bounds[0] <= int(number) <= bounds[1]:
            raise invalid_argument(
                f"{what}, got {value!r}, which is not a valid {dtype} ({bounds[0]}..{bounds[1]})"
            )
        return DTYPES[dtype](int(number))
    try:
        if dtype == "bf16" and not isinstance(value, np.uint16):
            return np.uint16(float_to_bf16_bits(float(value)))
        with np.errstate(over="ignore"):  # a float beyond the type's range is inf, as in a cast
            return DTYPES[dtype](value)
    except (OverflowError, TypeError, ValueError) as e:  # e.g. an object NumPy cannot convert
        raise invalid_argument(f"{what}, got {value!r}, which is not a valid {dtype} ({e})") from e


def elem_strides(arr: Any) -> tuple[int, ...] | None:
    """The array's strides in elements (0 for extents <= 1), or None if not whole elements."""
    size = arr.dtype.itemsize  # pyopencl.array.Array has no .itemsize
    return _elem_strides(tuple(arr.shape), tuple(arr.strides), size)


def _elem_strides(
    shape: Sequence[int], strides: Sequence[int], size: int
) -> tuple[int, ...] | None:
    if any(s <= 0 or s % size for s, n in zip(strides, shape, strict=False) if n > 1):
        return None
    return tuple(s // size if n > 1 else 0 for s, n in zip(strides, shape, strict=False))


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


def memref_layout(p: ParamInfo, arr: Any, what: str) -> tuple[int, ...]:
    """Element strides to pass `arr` with (its own if they fit the type, else Fortran order);
    `arr` is a NumPy or pyopencl array."""
    return layout_and_own(p, arr, what)[0]


def layout_and_own(p: ParamInfo, arr: Any, what: str) -> tuple[tuple[int, ...], bool]:
    """memref_layout, and whether those strides are the array's own (at every mode of more
    than one entry), so that its memory can be the memref (see in_place)."""
    strides, own, reason = _layout(p, tuple(arr.shape), tuple(arr.strides), arr.dtype)
    if reason:
        raise invalid_argument(f"{what}, got {describe(arr)}: {reason}")
    return strides, own


def own_layout(p: ParamInfo, arr: Any, what: str) -> tuple[int, ...]:
    """memref_layout for memory used in place (device arrays): only the array's own strides."""
    strides, own, reason = _layout(p, tuple(arr.shape), tuple(arr.strides), arr.dtype)
    if not reason and not own:
        reason = "its strides do not fit the memref's"
    if reason:
        raise invalid_argument(f"{what}, got {describe(arr)}: {reason}")
    return strides


@functools.lru_cache(maxsize=256)
def _layout(
    p: ParamInfo, shape: tuple[int, ...], strides: tuple[int, ...], dtype: np.dtype
) -> tuple[tuple[int, ...], bool, str]:
    """(element strides to pass, whether they are the array's own, why the array does not fit
    or ""); remembered, since a program launches its kernels on arrays of few layouts."""
    if len(shape) != len(p.shape):
        return (), False, f"{len(shape)} modes instead of {len(p.shape)}"
    for mode, (e, n) in enumerate(zip(p.shape, shape, strict=True)):
        if e not in (DYNAMIC, n):
            return (), False, f"mode {mode} has {n} entries instead of {e}"
    if dtype != DTYPES[p.dtype]:
        return (), False, f"the element type must be {np.dtype(DTYPES[p.dtype])}"
    own = _elem_strides(shape, strides, dtype.itemsize)
    fortran = fortran_strides(shape)
    full_stride = p.stride if DYNAMIC not in p.stride else fortran
    for cand in (own, fortran, full_stride):
        if cand is not None and _fits(p, shape, cand):
            out = tuple(c if c else f for c, f in zip(cand, fortran, strict=False))
            return out, cand is own, ""
    return (), False, "no layout of the array fits the memref's strides"


def check_memref_shape(
    p: ParamInfo, shape: Sequence[int], strides: Sequence[int], what: str
) -> None:
    """A `Memref`'s shape and strides against the parameter's type."""
    if len(shape) != len(p.shape) or len(strides) != len(p.shape):
        raise invalid_argument(f"{what}, got a Memref of shape {tuple(shape)}")
    for mode, (e, n, es, st) in enumerate(zip(p.shape, shape, p.stride, strides, strict=True)):
        if e not in (DYNAMIC, n) or (es not in (DYNAMIC, st) and n > 1):
            raise invalid_argument(
                f"{what}, got a Memref of shape {tuple(shape)} and strides {tuple(strides)}"
                f" (mode {mode} does not fit)"
            )


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
    modes, stride_modes = _dynamic_modes(p)
    return [np.int64(shape[i]) for i in modes] + [np.int64(strides[i]) for i in stride_modes]


@functools.lru_cache(maxsize=256)
def _dynamic_modes(p: ParamInfo) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The modes of a memref parameter whose extent, and whose stride, is dynamic."""
    return (
        tuple(i for i, e in enumerate(p.shape) if e == DYNAMIC),
        tuple(i for i, e in enumerate(p.stride) if e == DYNAMIC),
    )


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


def group_members(p: ParamInfo, arg: Any, what: str) -> Group:
    """A group argument (a Group, or a list or tuple of host arrays) with its members as NumPy
    views of the caller's memory (host_arrays.py), checked to be writable if the kernel
    writes the group."""
    if isinstance(arg, Group):
        grp = arg
    elif isinstance(arg, (list, tuple)):
        grp = Group(list(arg))
    else:
        raise TypeError(f"{what}, got {describe(arg)}; pass a list of arrays or a tinytc_py.Group")
    members = []
    for i, m in enumerate(grp.members):
        arr = require_host_array(m, f"{what} (member {i})", "a tinytc_py.Group of them")
        require_writable(arr, p.written, f"{what} (member {i})")
        members.append(arr)
    return Group(members, grp.offset)


def check_group_arity(p: ParamInfo, count: int, offset: int, what: str) -> None:
    """A group argument's member count and offset against the group type (every runtime)."""
    if p.size != DYNAMIC and p.size != count:
        raise invalid_argument(f"{what}, got {count} members")
    if p.offset != DYNAMIC and offset != p.offset:
        raise invalid_argument(f"{what}, got the offset {offset}")


def group_layout(p: ParamInfo, grp: Group, what: str) -> GroupLayout:
    """The layout of a group whose members are NumPy arrays (group_members)."""
    members = list(grp.members)
    check_group_arity(p, len(members), grp.offset, what)
    count = max(1, len(members))
    dyn_shape = [i for i, e in enumerate(p.shape) if e == DYNAMIC]
    dyn_stride = [i for i, e in enumerate(p.stride) if e == DYNAMIC]
    tables = [np.zeros(count, dtype=np.int64) for _ in dyn_shape + dyn_stride]
    strides, sizes = [], []
    for i, m in enumerate(members):
        st = memref_layout(p, m, f"{what} (member {i})")
        strides.append(st)
        sizes.append(grp.offset + max(1, span(m.shape, st)))
        for row, j in enumerate(dyn_shape):
            tables[row][i] = m.shape[j]
        for row, j in enumerate(dyn_stride):
            tables[len(dyn_shape) + row][i] = st[j]
    return GroupLayout(members, grp.offset, strides, sizes, tables)


def in_place(arr: np.ndarray, strides: Sequence[int], alignment: int) -> bool:
    """Whether a kernel can use `arr`'s own memory as the memref (on a device that reads host
    memory): the element strides passed are the array's own, and its address has the base
    alignment the compiler assumed for the parameter (docs/design.md §B1.4)."""
    own = elem_strides(arr)
    return (
        arr.size > 0
        and own is not None
        and all(o == s or n <= 1 for o, s, n in zip(own, strides, arr.shape, strict=True))
        and is_aligned(arr.ctypes.data, alignment)
    )
