"""Error reporting: status codes shared with the C API and located compilation errors.

`Status` carries the numeric values of the C API's ``tinytc_status_t`` so that an exception raised
anywhere in the compiler maps onto the C return code without a translation table.
`CompilationError` carries a source range and the IR values involved; `format_error` renders it
the way compilers do (``file:line.col-line.col: error: ...``, the source line, a caret range and
"defined here" notes), using the sources registered in the compiler context.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Protocol

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
    Status.success: "no error",
    Status.bad_alloc: "memory allocation failed",
    Status.invalid_arguments: "bad argument (typically a NULL handle/out-pointer or inconsistent sizes)",
    Status.out_of_range: "index/size outside the allowed range",
    Status.runtime_error: "generic runtime failure (any other std::exception upstream)",
    Status.internal_compiler_error: "compiler bug/unexpected state",
    Status.unsupported_subgroup_size: "requested subgroup size not supported by device",
    Status.unsupported_work_group_size: "requested work-group size not supported by device",
    Status.compilation_error: "generic compilation failure",
    Status.file_io_error: "file could not be opened/read/written",
    Status.parse_error: "tensor-IR text could not be parsed",
    Status.unavailable_extension: "needed vendor extension missing (e.g. clSetKernelArgMemPointerINTEL for USM)",
    Status.unsupported_backend: "backend not supported",
    Status.invalid_kernel_arguments: "kernel arguments inconsistent (e.g. alpha/beta size != scalar size in recipes)",
    Status.unsupported_device: "device cannot be used (e.g. unknown vendor)",
    Status.invalid_core_info: "core info unusable (e.g. zero max work-group size or no subgroup sizes)",
    Status.unknown_pass_name: "tinytc_run_function_pass got an unknown pass name",
    Status.not_implemented: "feature not implemented",
    Status.compute_runtime_error: "an OpenCL/Level Zero call failed (all runtime errors map to this)",
    Status.ir_out_of_bounds: "argument (e.g. mode number) out of bounds",
    Status.ir_invalid_shape: "shape invalid (negative non-dynamic extent etc.)",
    Status.ir_incompatible_shapes: "operand shapes do not fit together",
    Status.ir_shape_stride_mismatch: "shape and stride have different lengths",
    Status.ir_number_mismatch: "number types of operands differ",
    Status.ir_invalid_number_of_indices: "index count must equal memref order (or 1 for groups)",
    Status.ir_expected_boolean: "boolean type required",
    Status.ir_expected_number: "number type required",
    Status.ir_expected_int: "integer type required",
    Status.ir_expected_float: "floating-point type required",
    Status.ir_expected_complex: "complex type required",
    Status.ir_expected_i32: "i32 type required",
    Status.ir_expected_index: "index type required",
    Status.ir_expected_coopmatrix: "coopmatrix type required",
    Status.ir_expected_coopmatrix_or_number: "coopmatrix or number type required",
    Status.ir_expected_coopmatrix_number_or_boolean: "coopmatrix, number or boolean type required",
    Status.ir_expected_memref: "memref type required",
    Status.ir_expected_memref_or_number: "memref or number type required",
    Status.ir_expected_memref_or_group: "memref or group type required",
    Status.ir_expected_memref_order_0: "order-0 (scalar) memref required",
    Status.ir_expected_memref_order_1: "order-1 (vector) memref required",
    Status.ir_expected_memref_order_2: "order-2 (matrix) memref required",
    Status.ir_expected_memref_order_0_or_1: "order-0 or order-1 memref required",
    Status.ir_expected_memref_order_1_or_2: "order-1 or order-2 memref required",
    Status.ir_expected_memref_order_0_1_or_2: "memref of order 0, 1 or 2 required",
    Status.ir_unexpected_yield: "yield inside a region that yields nothing",
    Status.ir_yield_mismatch: "yielded values do not match the expected count/types",
    Status.ir_subview_mismatch: "count of dynamic offsets/sizes differs from TINYTC_DYNAMIC placeholders",
    Status.ir_invalid_slice: "static offset/size negative and not dynamic",
    Status.ir_expand_shape_order_too_small: "expand shape needs at least 2 entries",
    Status.ir_expand_shape_mismatch: "count of dynamic expand-shape operands differs from dynamic entries",
    Status.ir_collective_called_from_spmd: "collective instruction used inside SPMD region",
    Status.ir_fp_unsupported: "instruction does not accept floating-point type",
    Status.ir_spmd_called_from_collective: "SPMD-only instruction used in collective region",
    Status.ir_expected_local_address_space: "memref must be in local address space",
    Status.ir_expected_global_address_space: "memref must be in global address space",
    Status.ir_address_space_mismatch: "address spaces differ",
    Status.ir_invalid_offset: "offset negative and not dynamic",
    Status.ir_int_unsupported: "instruction does not accept integer type",
    Status.ir_boolean_unsupported: "instruction does not accept boolean type",
    Status.ir_complex_unsupported: "instruction does not accept complex type",
    Status.ir_coopmatrix_unsupported: "instruction does not accept coopmatrix type",
    Status.ir_forbidden_cast: "cast between these types not allowed",
    Status.ir_invalid_beta: "atomic BLAS op needs constant beta equal to 0 or 1",
    Status.ir_init_return_mismatch: "initial values do not match return types (count/types)",
    Status.ir_invalid_matrix_use: "coopmatrix operands have wrong matrix use",
    Status.ir_unsupported_coopmatrix_shape: "coopmatrix shape unsupported for type/use/target",
    Status.ir_forbidden_promotion: "number type promotion not allowed",
    Status.ir_constant_mismatch: "constant value kind does not match its type",
    Status.ir_insufficient_alignment: "pointer alignment below requirement",
    Status.ir_must_have_yield: "value-returning region must end with yield",
    Status.ir_yield_in_else_branch_missing: "else branch lacks yield although then branch has one",
    Status.ir_from_to_mismatch: "from/to arrays of foreach differ in length (or are empty)",
    Status.ir_from_tile_shape_mismatch: "from array and tile_shape differ in length",
    Status.ir_operand_type_must_match_return_type: "operand type must equal result type",
    Status.ir_invalid_stride: "stride invalid",
    Status.ir_init_return_type_mismatch: "loop init values vs. result types: count or type differs",
    Status.ir_value_still_has_uses: "tried to erase a value that is still used",
    Status.ir_expected_array_attribute: "array attribute required",
    Status.ir_expected_boolean_attribute: "boolean attribute required",
    Status.ir_expected_dictionary_attribute: "dictionary attribute required",
    Status.ir_expected_integer_attribute: "integer attribute required",
    Status.ir_expected_string_attribute: "string attribute required",
    Status.ir_duplicate_key_in_dictionary: "same name twice in a dictionary",
    Status.ir_unexpected_array_attribute_size: "array attribute has wrong length",
    Status.ir_expected_non_scalar_memref: "memref of order >= 1 required",
    Status.ir_complex_number_type_unsupported: "complex number type not supported here",
    Status.ir_tile_shape0_not_multiple_of_sgs: "first tile extent not divisible by the subgroup size",
    Status.ir_division_by_zero: "constant division by zero",
    Status.spirv_forbidden_forward_declaration: "SPIR-V id forward-declared where not allowed",
    Status.spirv_undefined_value: "SPIR-V value undefined",
    Status.spirv_missing_dope_vector: "dope vector (dynamic shape/stride data) missing",
    Status.spirv_unsupported_atomic_data_type: "atomic on this data type not expressible in SPIR-V",
    Status.spirv_required_feature_unavailable: "needed SPIR-V feature not enabled in core info",
    Status.ext_disabled: "language extension used while the extensions flag is off",
    Status.ext_printf_format_mismatch: "printf format does not match its arguments",
    Status.ext_bitcast_size_mismatch: "bitcast between types of different bit width",
    Status.ext_undefined_global: "global_ref names no global of the program or has another type",
    Status.ext_invalid_global: "global type or initializer invalid",
    Status.ext_global_redefined: "global defined twice in a program",
    Status.unknown: "unknown error (catch-all)",
}


def status_description(status: Status) -> str:
    """The descriptive text that ``tinytc_status_to_string`` returns for a status."""
    return _DESCRIPTIONS.get(status, "unknown")


@dataclass(frozen=True, slots=True)
class Position:
    """A point in a source: source id (0 = unknown), line and column counting from 1."""

    source_id: int = 0
    line: int = 0
    column: int = 0


@dataclass(frozen=True, slots=True)
class Location:
    """A half-open source range [begin, end)."""

    begin: Position = Position()
    end: Position = Position()

    def __str__(self) -> str:
        b, e = self.begin, self.end
        if b.line == 0:
            return "<unknown>"
        if b.line == e.line:
            return f"{b.line}.{b.column}-{e.column}"
        return f"{b.line}.{b.column}-{e.line}.{e.column}"

    @staticmethod
    def span(first: Location, last: Location) -> Location:
        """The range from the start of `first` to the end of `last`."""
        return Location(first.begin, last.end)


UNKNOWN_LOCATION = Location()


class TinytcError(Exception):
    """Base of every error the compiler raises on purpose; carries a Status for the C API."""

    def __init__(self, status: Status, message: str = "") -> None:
        super().__init__(message or status_description(status))
        self.status = status


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
        """Where each involved value with a known location is defined."""
        return tuple(
            Note(v.loc, f"value defined here: {v}") for v in self.values if v.loc.begin.line
        )

    @property
    def what(self) -> str:
        """The headline message without location: the detail, or the status description."""
        return self.detail or status_description(self.status)

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


def format_located(sources: SourceLookup, loc: Location, kind: str, what: str) -> str:
    """One diagnostic: ``name:range: kind: what`` followed by the excerpt when the source is known."""
    name, lines = sources.source(loc.begin.source_id)
    prefix = f"{name}:{loc}" if name else str(loc)
    head = f"{prefix}: {kind}: {what}\n"
    return head + (_excerpt(lines, loc) if lines else "")


def format_error(sources: SourceLookup, err: CompilationError) -> str:
    """The full message: the error, then a note for each involved value saying where it is defined."""
    parts = [format_located(sources, err.loc, "error", err.what)]
    parts += [format_located(sources, n.location, "note", n.message) for n in err.notes]
    if err.hint:
        parts.append(f"hint: {err.hint}\n")
    return "".join(parts).rstrip("\n")


class SourceLookup(Protocol):
    """What diagnostics need from whoever owns the sources (the compiler context)."""

    def source(self, source_id: int) -> tuple[str, list[str]]:
        """The name and the lines of a registered source ("" and [] when unknown)."""
        ...
