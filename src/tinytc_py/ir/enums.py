"""Enumerations of instruction modifiers; numeric values equal the C API's enums (capi/api/enums.toml)."""

from __future__ import annotations

from enum import Enum, IntEnum, IntFlag


class Exec(IntEnum):
    """Where an instruction may appear (the language's collective / SPMD / mixed classes); not
    a C API enum. Here rather than in inst.py so that regions need not import instructions."""

    mixed = 0
    collective = 1
    spmd = 2


class Comp3(IntEnum):
    x = 0
    y = 1
    z = 2


class ReduceMode(IntEnum):
    row = 0
    column = 1


class Transpose(IntEnum):
    n = 0
    t = 1


class AddressSpace(IntFlag):
    """Bit values so that barrier fence flags can combine them."""

    global_ = 1
    local = 2

    @property
    def text(self) -> str:
        return "global" if self is AddressSpace.global_ else "local"


class CheckedFlag(IntEnum):
    none = 0
    rows = 1
    cols = 2
    both = 3


class MemoryScope(IntEnum):
    cross_device = 0
    device = 1
    work_group = 2
    subgroup = 3


class MemorySemantics(IntEnum):
    relaxed = 0
    acquire = 2
    release = 4
    acquire_release = 8
    sequentially_consistent = 16


class MatrixUse(IntEnum):
    a = 0
    b = 1
    acc = 2

    @property
    def text(self) -> str:
        return "matrix_" + self.name


class OptFlag(IntEnum):
    """Compiler-context flags (tinytc_optflag_t). unsafe_fp_math is upstream's; the others are
    tinytc-py extensions, numbered after it (their defaults: `OPT_FLAG_DEFAULTS`)."""

    unsafe_fp_math = 0
    autotune = 1  # time candidate GEMM blockings on the device, keep the fastest
    kernel_cache = 2  # reuse SPIR-V and device binaries from the on-disk kernel cache
    legacy_language = 3  # read source text as the legacy (v0.3) tensor language
    extensions = 4  # accept the tinytc-py language extensions (docs/extensions.md)
    bounds_checks = 5  # check every memory access at run time (docs/bounds-checks.rst)


# Default state of each flag when it was not set, at every optimization level. unsafe-fp-math
# is off (upstream turns it on at level 2): by default, folding keeps IEEE results, such as the
# sign of -0.0 + 0.0.
OPT_FLAG_DEFAULTS: dict[OptFlag, bool] = {
    OptFlag.unsafe_fp_math: False,
    OptFlag.autotune: False,
    OptFlag.kernel_cache: True,
    OptFlag.legacy_language: False,
    OptFlag.extensions: True,
    OptFlag.bounds_checks: False,
}


class ResultUniformity(IntEnum):
    """Not a C API enum: whether an instruction's results in an SPMD region hold one value for the whole subgroup
    (ir/uniformity.py)."""

    follows_operands = 0  # varying iff an operand it depends on is varying
    varying = 1  # varying whatever the operands (a scan's prefixes, an atomic's old values)
    uniform = 2  # uniform whatever the operands (a broadcast, a reduction)


class Syntax(Enum):
    """The hand-written text syntaxes of the instruction rows without a format (`InstSpec.syntax`):
    text/parser.py's PARSE_HOOKS and text/printer.py's PRINT_HOOKS hold a hook for each (the ir
    package does not import the text package; tests/test_ops.py checks that both registries
    cover exactly the kinds the rows use)."""

    constant = "constant"
    subview = "subview"
    expand = "expand"
    for_ = "for"
    if_ = "if"
    foreach = "foreach"
    parallel = "parallel"
    printf = "printf"
    coop_apply = "coop_apply"

    # The parser looks its hook up by the row's syntax for every hand-written instruction:
    # Enum's own __hash__ is Python code (a hash of the name), the identity hash is C and
    # agrees with equality (members are singletons compared by identity), as for ScalarKind.
    __hash__ = object.__hash__
