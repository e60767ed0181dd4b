"""Error reporting: status codes shared with the C API and located compilation errors.

`Status` carries the numeric values of the C API's ``tinytc_status_t`` so that an exception raised
anywhere in the compiler maps onto the C return code without a translation table.
`CompilationError` carries a source range and the IR values involved; `format_error` renders it
in upstream tinytc's format, so that scripts parsing upstream's messages keep working: the first
line is ``file:line.col-col: <status headline> (<detail>)`` (the headline is the status text of
``tinytc_status_to_string``, the range prints its last column inclusively), then the source line
with a tilde range, then a "value defined here" message for each value involved.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Protocol

# Re-exported: the places in a source that errors point at (location.py says why it is apart).
from .location import UNKNOWN_LOCATION as UNKNOWN_LOCATION
from .location import Location as Location
from .location import Position as Position

if TYPE_CHECKING:
    from .ir.values import Value


class Status(IntEnum):
    """Numeric values equal the C API's tinytc_status_t."""

    success = 0x0
    bad_alloc = 0x1
    invalid_arguments = 0x2
    out_of_range = 0x3
    runtime_error = 0x4
    internal_compiler_error = 0x5
    unsupported_subgroup_size = 0x6
    unsupported_work_group_size = 0x7
    compilation_error = 0x8
    file_io_error = 0x9
    parse_error = 0xA
    unavailable_extension = 0xB
    unsupported_backend = 0xC
    invalid_kernel_arguments = 0xD
    unsupported_device = 0xE
    invalid_core_info = 0xF
    unknown_pass_name = 0x10
    not_implemented = 0x11
    compute_runtime_error = 0x12
    ir_out_of_bounds = 0x100
    ir_invalid_shape = 0x101
    ir_incompatible_shapes = 0x102
    ir_shape_stride_mismatch = 0x103
    ir_number_mismatch = 0x104
    ir_invalid_number_of_indices = 0x105
    ir_expected_boolean = 0x106
    ir_expected_number = 0x107
    ir_expected_int = 0x108
    ir_expected_float = 0x109
    ir_expected_complex = 0x10A
    ir_expected_i32 = 0x10B
    ir_expected_index = 0x10C
    ir_expected_coopmatrix = 0x10D
    ir_expected_coopmatrix_or_number = 0x10E
    ir_expected_coopmatrix_number_or_boolean = 0x10F
    ir_expected_memref = 0x110
    ir_expected_memref_or_number = 0x111
    ir_expected_memref_or_group = 0x112
    ir_expected_memref_order_0 = 0x113
    ir_expected_memref_order_1 = 0x114
    ir_expected_memref_order_2 = 0x115
    ir_expected_memref_order_0_or_1 = 0x116
    ir_expected_memref_order_1_or_2 = 0x117
    ir_expected_memref_order_0_1_or_2 = 0x118
    ir_unexpected_yield = 0x119
    ir_yield_mismatch = 0x11A
    ir_subview_mismatch = 0x11B
    ir_invalid_slice = 0x11C
    ir_expand_shape_order_too_small = 0x11D
    ir_expand_shape_mismatch = 0x11E
    ir_collective_called_from_spmd = 0x11F
    ir_fp_unsupported = 0x120
    ir_spmd_called_from_collective = 0x121
    ir_expected_local_address_space = 0x122
    ir_expected_global_address_space = 0x123
    ir_address_space_mismatch = 0x124
    ir_invalid_offset = 0x125
    ir_int_unsupported = 0x126
    ir_boolean_unsupported = 0x127
    ir_complex_unsupported = 0x128
    ir_coopmatrix_unsupported = 0x129
    ir_forbidden_cast = 0x12A
    ir_invalid_beta = 0x12B
    ir_init_return_mismatch = 0x12C
    ir_invalid_matrix_use = 0x12D
    ir_unsupported_coopmatrix_shape = 0x12E
    ir_forbidden_promotion = 0x12F
    ir_constant_mismatch = 0x130
    ir_insufficient_alignment = 0x131
    ir_must_have_yield = 0x132
    ir_yield_in_else_branch_missing = 0x133
    ir_from_to_mismatch = 0x134
    ir_from_tile_shape_mismatch = 0x135
    ir_operand_type_must_match_return_type = 0x136
    ir_invalid_stride = 0x137
    ir_init_return_type_mismatch = 0x138
    ir_value_still_has_uses = 0x139
    ir_expected_array_attribute = 0x140
    ir_expected_boolean_attribute = 0x141
    ir_expected_dictionary_attribute = 0x142
    ir_expected_integer_attribute = 0x143
    ir_expected_string_attribute = 0x144
    ir_duplicate_key_in_dictionary = 0x145
    ir_unexpected_array_attribute_size = 0x146
    ir_expected_non_scalar_memref = 0x150
    ir_complex_number_type_unsupported = 0x151
    ir_tile_shape0_not_multiple_of_sgs = 0x152
    ir_division_by_zero = 0x153
    spirv_forbidden_forward_declaration = 0x1000
    spirv_undefined_value = 0x1001
    spirv_missing_dope_vector = 0x1002
    spirv_unsupported_atomic_data_type = 0x1003
    spirv_required_feature_unavailable = 0x1004
    ext_disabled = 0x8000
    ext_printf_format_mismatch = 0x8001
    ext_bitcast_size_mismatch = 0x8002
    ext_undefined_global = 0x8003
    ext_invalid_global = 0x8004
    ext_global_redefined = 0x8005
    unknown = 0x7FFFFFFF


_DESCRIPTIONS = {
    Status.success: "Success",
    Status.bad_alloc: "Bad allocation",
    Status.invalid_arguments: "Invalid arguments passed to function",
    Status.out_of_range: "Out of range",
    Status.runtime_error: "General runtime error",
    Status.internal_compiler_error: "Internal compiler error",
    Status.unsupported_subgroup_size: "Device does not support subgroup size",
    Status.unsupported_work_group_size: "Device does not support work-group size",
    Status.compilation_error: "Compilation error",
    Status.file_io_error: "I/O error occured in file operation",
    Status.parse_error: "Parse error",
    Status.unavailable_extension: "Required vendor extension is unavailable",
    Status.unsupported_backend: "Unsupported backend",
    Status.invalid_kernel_arguments: "Invalid arguments passed to kernel",
    Status.unsupported_device: "Unsupported device",
    Status.invalid_core_info: "Invalid core info object (e.g. max work group size is 0 or subgroup sizes vector is empty)",
    Status.unknown_pass_name: "Unknown compiler pass name",
    Status.not_implemented: "Not implemented",
    Status.compute_runtime_error: "Error occured in compute runtime",
    Status.ir_out_of_bounds: "Argument is out of bounds",
    Status.ir_invalid_shape: "Invalid shape",
    Status.ir_incompatible_shapes: "Incompatible tensor shapes",
    Status.ir_shape_stride_mismatch: "Dimension of shape and stride must match",
    Status.ir_number_mismatch: "Number type mismatch",
    Status.ir_invalid_number_of_indices: "Number of indices must match memref order or must be 1 for group types",
    Status.ir_expected_boolean: "Expected boolean type",
    Status.ir_expected_number: "Expected number type",
    Status.ir_expected_int: "Expected integer type",
    Status.ir_expected_float: "Expected floating point type",
    Status.ir_expected_complex: "Expected complex type",
    Status.ir_expected_i32: "Expected i32 type",
    Status.ir_expected_index: "Expected index type",
    Status.ir_expected_coopmatrix: "Expected coopmatrix type",
    Status.ir_expected_coopmatrix_or_number: "Expected coopmatrix or number type",
    Status.ir_expected_coopmatrix_number_or_boolean: "Expected coopmatrix type, number type, or boolean type",
    Status.ir_expected_memref: "Expected memref type",
    Status.ir_expected_memref_or_number: "Expected memref or number type",
    Status.ir_expected_memref_or_group: "Expected memref or group type",
    Status.ir_expected_memref_order_0: "Expected memref of order 0 (scalar)",
    Status.ir_expected_memref_order_1: "Expected memref of order 1 (vector)",
    Status.ir_expected_memref_order_2: "Expected memref of order 2 (matrix)",
    Status.ir_expected_memref_order_0_or_1: "Expected memref of order 0 or 1 (scalar or vector)",
    Status.ir_expected_memref_order_1_or_2: "Expected memref of order 1 or 2 (vector or matrix)",
    Status.ir_expected_memref_order_0_1_or_2: "Expected memref of order 0, 1, or 2 (scalar, vector, or matrix)",
    Status.ir_unexpected_yield: "Yield encountered in non-yielding region",
    Status.ir_yield_mismatch: "Number of yielded values does not match number of values yielded by region or the types are different",
    Status.ir_subview_mismatch: "Number of dynamic offsets and sizes must match number of dynamic operands",
    Status.ir_invalid_slice: "Static offset and size must be non-negative or dynamic (?)",
    Status.ir_expand_shape_order_too_small: "Expand shape must have at least 2 entries",
    Status.ir_expand_shape_mismatch: "Number of dynamic expand shape operands must equal number of dynamic modes in static expand shape",
    Status.ir_collective_called_from_spmd: "Collective instruction must not be called from SPMD region",
    Status.ir_fp_unsupported: "Floating point type unsupported by instruction",
    Status.ir_spmd_called_from_collective: "SPMD instruction must not be called from collective region",
    Status.ir_expected_local_address_space: "Expected memref with local address space",
    Status.ir_expected_global_address_space: "Expected memref with global address space",
    Status.ir_address_space_mismatch: "Address space must match",
    Status.ir_invalid_offset: "Offset must be non-negative or dynamic",
    Status.ir_int_unsupported: "Instruction does not support int type",
    Status.ir_boolean_unsupported: "Instruction does not support boolean type",
    Status.ir_complex_unsupported: "Instruction does not support complex type",
    Status.ir_coopmatrix_unsupported: "Instruction does not support coopmatrix type",
    Status.ir_forbidden_cast: "Forbidden cast",
    Status.ir_invalid_beta: "beta must be constant and 0 or 1 for atomic linear algebra operations",
    Status.ir_init_return_mismatch: "The number or types of the initial values does not match the return type list",
    Status.ir_invalid_matrix_use: "Operands have invalid matrix use",
    Status.ir_unsupported_coopmatrix_shape: "Unsupported coopmatrix shape for the combination of Number type, matrix use, and target architecture",
    Status.ir_forbidden_promotion: "Number type promotion is forbidden",
    Status.ir_constant_mismatch: "Type of constant does not match type or returned value",
    Status.ir_insufficient_alignment: "Pointer does not satisfy minimum alignment requirements",
    Status.ir_must_have_yield: "Last instruction of region that returns values must be yield",
    Status.ir_yield_in_else_branch_missing: "Else-branch must have yield instruction if then-branch has yield instruction",
    Status.ir_from_to_mismatch: "length(from) != length(to)",
    Status.ir_from_tile_shape_mismatch: "length(from) != length(tile_shape)",
    Status.ir_operand_type_must_match_return_type: "Operand type must match return type",
    Status.ir_invalid_stride: "Invalid stride",
    Status.ir_init_return_type_mismatch: "Type of initializer does not match return type or the number of return types is not equal the number of initializers",
    Status.ir_value_still_has_uses: "A value shall be erased that still has uses",
    Status.ir_expected_array_attribute: "Expected array attribute",
    Status.ir_expected_boolean_attribute: "Expected boolean attribute",
    Status.ir_expected_dictionary_attribute: "Expected dictionary attribute",
    Status.ir_expected_integer_attribute: "Expected integer attribute",
    Status.ir_expected_string_attribute: "Expected string attribute",
    Status.ir_duplicate_key_in_dictionary: "Duplicate key detected in list of named attributes",
    Status.ir_unexpected_array_attribute_size: "Unexpected array size",
    Status.ir_expected_non_scalar_memref: "Expected memref of dimension greater or equal than 1",
    Status.ir_complex_number_type_unsupported: "Complex number type not supported",
    Status.ir_tile_shape0_not_multiple_of_sgs: "Tile shape 0 is not a multiple of the subgroup size",
    Status.ir_division_by_zero: "Division by zero detected",
    Status.spirv_forbidden_forward_declaration: "Forward declaration of id is forbidden",
    Status.spirv_undefined_value: "Undefined SPIR-V value",
    Status.spirv_missing_dope_vector: "Dope vector missing",
    Status.spirv_unsupported_atomic_data_type: "Atomic data type unsupported by SPIR-V",
    Status.spirv_required_feature_unavailable: "A required SPIR-V feature is unavailable",
    Status.ext_disabled: "Language extension used while extensions are disabled",
    Status.ext_printf_format_mismatch: "Printf format does not match its arguments",
    Status.ext_bitcast_size_mismatch: "Bitcast between types of different size",
    Status.ext_undefined_global: "Undefined global or global of another type",
    Status.ext_invalid_global: "Invalid global type or initializer",
    Status.ext_global_redefined: "Global defined twice",
    Status.unknown: "Unknown status code",
}


def status_description(status: Status) -> str:
    """The descriptive text that ``tinytc_status_to_string`` returns for a status."""
    return _DESCRIPTIONS.get(status, "unknown")


class TinytcError(Exception):
    """Base of every error the compiler raises on purpose; carries a Status for the C API."""

    def __init__(self, status: Status, message: str = "") -> None:
        super().__init__(message or status_description(status))
        self.status = status


class OutOfBoundsError(TinytcError):
    """A bounds-checked kernel (OptFlag.bounds_checks) accessed memory out of bounds: the
    message locates the access and names the index, the bound and the work-group."""

    def __init__(self, message: str) -> None:
        super().__init__(Status.ir_out_of_bounds, message)


@dataclass(frozen=True, slots=True)
class Note:
    """A remark attached to an error, with its own location (e.g. where a value is defined)."""

    location: Location
    message: str


class CompilationError(TinytcError):
    """An error in a program, tied to a source location and to the values involved.

    ``location`` is where the error is (``location.begin.line``, ``.column``; the source name
    is in the rendered message), ``status`` the C API's code, ``notes`` the "defined here"
    remarks for the values involved.
    """

    def __init__(
        self,
        loc: Location,
        status: Status,
        detail: str = "",
        values: Iterable[Value] = (),
    ) -> None:
        self.loc = loc
        self.detail = detail
        self.values = tuple(dict.fromkeys(values))
        self.rendered: str | None = None
        self.hint: str | None = None  # a suggestion printed after the message ("hint: ...")
        super().__init__(status, detail or status_description(status))

    @property
    def location(self) -> Location:
        return self.loc

    @property
    def notes(self) -> tuple[Note, ...]:
        """Where each involved value with a known location is defined (named when it has a
        name; a pass may have made the value, e.g. a folded constant)."""
        return tuple(
            Note(v.loc, f"value defined here ({v})" if v.name else "value defined here")
            for v in self.values
            if v.loc.begin.line
        )

    @property
    def what(self) -> str:
        """The message without location: the status headline, then the detail in parentheses
        (parse errors: the detail alone)."""
        headline = status_description(self.status)
        if self.status == Status.parse_error and self.detail:
            return self.detail  # upstream's parser errors are the message alone
        if not self.detail or self.detail == headline:
            return headline
        return f"{headline} ({self.detail})"

    def __str__(self) -> str:
        return self.rendered if self.rendered is not None else f"{self.loc}: {self.what}"


def _excerpt(lines: list[str], loc: Location) -> str:
    """The first source line of `loc` with a caret range under the located columns."""
    b, e = loc.begin, loc.end
    if not (1 <= b.line <= len(lines)):
        return ""
    text = lines[b.line - 1].expandtabs(1)
    # A range ending on a later line is marked to the end of its first line; an empty range
    # still gets one tilde.
    last = e.column if e.line == b.line else len(text) + 1
    width = max(1, last - b.column)
    return f"{text}\n{' ' * (b.column - 1)}{'~' * width}\n"


def format_located(sources: SourceLookup, loc: Location, what: str) -> str:
    """One diagnostic: ``name:range: what`` followed by the excerpt when the source is known."""
    name, lines = sources.source(loc.begin.source_id)
    prefix = f"{name}:{loc}" if name else str(loc)
    head = f"{prefix}: {what}\n"
    return head + (_excerpt(lines, loc) if lines else "")


def format_error(sources: SourceLookup, err: CompilationError) -> str:
    """The full message: the error, then for each involved value where it is defined."""
    parts = [format_located(sources, err.loc, err.what)]
    parts += [format_located(sources, n.location, n.message) for n in err.notes]
    if err.hint:
        parts.append(f"hint: {err.hint}\n")
    return "".join(parts).rstrip("\n")


class SourceLookup(Protocol):
    """What diagnostics need from whoever owns the sources (the compiler context)."""

    def source(self, source_id: int) -> tuple[str, list[str]]:
        """The name and the lines of a registered source ("" and [] when unknown)."""
        ...
