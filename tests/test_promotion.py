"""The promotion relation α ⪯ β of the language reference ("every value of α is exactly
representable in β"), promote(α, β), and their use by the verifier of mixed-precision BLAS and
cooperative-matrix instructions.

The reference's printed matrix is derived here from the definition, with these facts:
significand bits (incl. the implicit one) bf16 8, f16 11, f32 24, f64 53; exponent range of bf16
equals f32's, which exceeds f16's; complex types hold two parts of f32 (c32) or f64 (c64); index
is a 64-bit integer in this implementation (size 8), so it holds exactly the values of i64.
"""

from __future__ import annotations

import itertools

import pytest

from tinytc_py.errors import CompilationError, Status
from tinytc_py.ir.context import CompilerContext
from tinytc_py.ir.types import ScalarKind, promote
from tinytc_py.text.dialect import parse

ORDER = ["i8", "i16", "i32", "i64", "index", "bf16", "f16", "f32", "f64", "c32", "c64"]

# Row α, column β: 1 where α ⪯ β.
#                 i8 i16 i32 i64 idx bf16 f16 f32 f64 c32 c64
EXPECTED_TABLE = """
i8               1   1   1   1   1   1   1   1   1   1   1
i16              .   1   1   1   1   .   .   1   1   1   1
i32              .   .   1   1   1   .   .   .   1   .   1
i64              .   .   .   1   1   .   .   .   .   .   .
index            .   .   .   1   1   .   .   .   .   .   .
bf16             .   .   .   .   .   1   .   1   1   1   1
f16              .   .   .   .   .   .   1   1   1   1   1
f32              .   .   .   .   .   .   .   1   1   1   1
f64              .   .   .   .   .   .   .   .   1   .   1
c32              .   .   .   .   .   .   .   .   .   1   1
c64              .   .   .   .   .   .   .   .   .   .   1
"""


def expected() -> dict[tuple[str, str], bool]:
    table = {}
    rows = [line.split() for line in EXPECTED_TABLE.strip().splitlines()]
    assert [r[0] for r in rows] == ORDER
    for row in rows:
        assert len(row) == len(ORDER) + 1
        for beta, cell in zip(ORDER, row[1:], strict=True):
            table[row[0], beta] = cell == "1"
    return table


TABLE = expected()
CTX = CompilerContext()


def ty(name: str):
    return CTX.number(ScalarKind[name])


@pytest.mark.parametrize("alpha", ORDER)
def test_promotable_row(alpha):
    got = [beta for beta in ORDER if ty(alpha).promotable_to(ty(beta))]
    want = [beta for beta in ORDER if TABLE[alpha, beta]]
    assert got == want


def test_row_counts_of_the_reference_matrix():
    """The reference's 10x10 matrix (without index) has these numbers of ones per row. Its
    printed i32 row shows a fifth one (i32 ⪯ c32) that contradicts the definition: c32's parts
    are f32 with 24 significant bits, which cannot hold every i32."""
    ten = [k for k in ORDER if k != "index"]
    counts = [sum(TABLE[a, b] for b in ten) for a in ten]
    assert counts == [10, 7, 4, 1, 5, 5, 4, 2, 2, 1]
    assert not TABLE["i32", "c32"] and not TABLE["i32", "f32"]


def test_relation_is_reflexive_and_transitive():
    for a in ORDER:
        assert TABLE[a, a]
    for a, b, c in itertools.product(ORDER, repeat=3):
        if TABLE[a, b] and TABLE[b, c]:
            assert TABLE[a, c], (a, b, c)


def test_relation_is_antisymmetric_except_i64_index():
    pairs = {
        (a, b)
        for a, b in itertools.product(ORDER, repeat=2)
        if a != b and TABLE[a, b] and TABLE[b, a]
    }
    assert pairs == {("i64", "index"), ("index", "i64")}


def test_relation_follows_exact_representability():
    """Cross-check of the table against significand width / exponent range / complexity."""
    bits = {"i8": 7, "i16": 15, "i32": 31, "i64": 63, "index": 63}
    mant = {"bf16": 8, "f16": 11, "f32": 24, "f64": 53, "c32": 24, "c64": 53}
    emax = {"bf16": 127, "f16": 15, "f32": 127, "f64": 1023, "c32": 127, "c64": 1023}
    emin = {"bf16": -133, "f16": -24, "f32": -149, "f64": -1074, "c32": -149, "c64": -1074}

    def representable(a: str, b: str) -> bool:
        if a in bits:
            return bits[a] <= bits[b] if b in bits else bits[a] <= mant[b]
        if b in bits:
            return False
        if a.startswith("c") and not b.startswith("c"):
            return False
        return mant[a] <= mant[b] and emax[a] <= emax[b] and emin[a] >= emin[b]

    for a, b in itertools.product(ORDER, repeat=2):
        assert representable(a, b) == TABLE[a, b], (a, b)


@pytest.mark.parametrize("a, b", list(itertools.product(ORDER, repeat=2)))
def test_promote_all_pairs(a, b):
    result = promote(ty(a), ty(b))
    if TABLE[a, b]:
        assert result is ty(b)
    elif TABLE[b, a]:
        assert result is ty(a)
    else:
        assert result is None


@pytest.mark.parametrize(
    "a, b, result",
    [
        ("i8", "bf16", "bf16"),
        ("bf16", "i8", "bf16"),
        ("i16", "f32", "f32"),
        ("i32", "f64", "f64"),
        ("f32", "c32", "c32"),
        ("c32", "f32", "c32"),
        ("f16", "c64", "c64"),
        ("i32", "i8", "i32"),
        ("f64", "f64", "f64"),
        ("i64", "index", "index"),
        ("index", "i64", "i64"),
        ("i32", "f32", None),
        ("i16", "f16", None),
        ("i16", "bf16", None),
        ("bf16", "f16", None),
        ("f16", "bf16", None),
        ("c32", "f64", None),
        ("f64", "c32", None),
        ("i64", "f64", None),
        ("i32", "c32", None),
        ("index", "f64", None),
    ],
)
def test_promote_examples(a, b, result):
    got = promote(ty(a), ty(b))
    assert got is (ty(result) if result else None)


def test_promotion_is_context_independent():
    other = CompilerContext()
    for a, b in itertools.product(ORDER, repeat=2):
        x, y = other.number(ScalarKind[a]), other.number(ScalarKind[b])
        assert x.promotable_to(y) == TABLE[a, b]


# ---- verification of mixed-precision instructions ---------------------------------------------


def gemm(alpha: str, a: str, b: str, beta: str, c: str) -> str:
    return (
        f"func @k(%alpha: {alpha}, %A: memref<{a}x8x8>, %B: memref<{b}x8x8>, %beta: {beta},\n"
        f"        %C: memref<{c}x8x8>) {{\n"
        "    gemm.n.n %alpha, %A, %B, %beta, %C\n"
        "}\n"
    )


@pytest.mark.parametrize(
    "alpha, a, b, beta, c",
    [
        ("f32", "f32", "f32", "f32", "f32"),
        ("f32", "f32", "f32", "f64", "f64"),
        ("i8", "i8", "f16", "f16", "f32"),
        ("f32", "bf16", "f32", "f32", "c32"),
        ("f32", "f32", "c32", "c32", "c64"),
        ("i16", "i32", "i16", "i64", "i64"),
        ("i32", "i32", "f64", "f64", "c64"),
        ("bf16", "bf16", "bf16", "bf16", "bf16"),
        ("i8", "i8", "i8", "i8", "f16"),
    ],
)
def test_gemm_mixed_precision_accepted(alpha, a, b, beta, c):
    parse(gemm(alpha, a, b, beta, c))


@pytest.mark.parametrize(
    "alpha, a, b, beta, c, values",
    [
        # promote(A, B) fails
        ("f32", "f16", "bf16", "f32", "f32", ["%A", "%B"]),
        ("f32", "i32", "f32", "f32", "f64", ["%A", "%B"]),
        ("f64", "c32", "f64", "c64", "c64", ["%A", "%B"]),
        ("i64", "i64", "f64", "f64", "f64", ["%A", "%B"]),
        # type(alpha) is not promotable to promote(A, B)
        ("f64", "f32", "f32", "f32", "f64", ["%alpha"]),
        ("f16", "bf16", "bf16", "f32", "f32", ["%alpha"]),
        ("c32", "f32", "f32", "c32", "c32", ["%alpha"]),
        # promote(A, B) is not promotable to element_type(C)
        ("f32", "f32", "f64", "f32", "f32", ["%A", "%B", "%C"]),
        ("i32", "i32", "i32", "f32", "f32", ["%A", "%B", "%C"]),
        ("f32", "c32", "f32", "f64", "f64", ["%A", "%B", "%C"]),
        # type(beta) is not promotable to element_type(C)
        ("f32", "f32", "f32", "f64", "f32", ["%beta"]),
        ("f32", "f32", "f32", "c32", "f64", ["%beta"]),
    ],
)
def test_gemm_mixed_precision_rejected(alpha, a, b, beta, c, values):
    with pytest.raises(CompilationError) as info:
        parse(gemm(alpha, a, b, beta, c), name="gemm.ir")
    err = info.value
    assert err.status is Status.ir_forbidden_promotion
    assert (err.loc.begin.line, err.loc.begin.column) == (3, 5)
    assert [str(v) for v in err.values] == values
    assert "Number type promotion is forbidden (" in str(err)
    assert f"value defined here ({values[0]})" in str(err)


def axpby(alpha: str, a: str, beta: str, b: str) -> str:
    return (
        f"func @k(%alpha: {alpha}, %A: memref<{a}x8>, %beta: {beta}, %B: memref<{b}x8>) {{\n"
        "    axpby.n %alpha, %A, %beta, %B\n"
        "}\n"
    )


@pytest.mark.parametrize(
    "alpha, a, beta, b",
    [
        ("f32", "f32", "f32", "f64"),
        ("i8", "f16", "f16", "c32"),
        ("f32", "f32", "c32", "c32"),
        ("i16", "i32", "i32", "f64"),
    ],
)
def test_axpby_mixed_precision_accepted(alpha, a, beta, b):
    parse(axpby(alpha, a, beta, b))


@pytest.mark.parametrize(
    "alpha, a, beta, b",
    [
        ("f32", "f64", "f32", "f32"),  # A not promotable to B
        ("f32", "i32", "f32", "f32"),
        ("f32", "f16", "bf16", "bf16"),
        ("f64", "f32", "f32", "f32"),  # alpha not promotable to A
        ("f32", "f32", "f64", "f32"),  # beta not promotable to B
        ("f32", "c32", "c32", "f64"),
    ],
)
def test_axpby_mixed_precision_rejected(alpha, a, beta, b):
    with pytest.raises(CompilationError) as info:
        parse(axpby(alpha, a, beta, b))
    assert info.value.status is Status.ir_forbidden_promotion


@pytest.mark.parametrize(
    "inst, a, b, c, ok",
    [
        ("gemv", "memref<f16x8x8>", "memref<f32x8>", "memref<f64x8>", True),
        ("gemv", "memref<f16x8x8>", "memref<bf16x8>", "memref<f32x8>", False),
        ("ger", "memref<i8x8>", "memref<f16x8>", "memref<f16x8x8>", True),
        ("ger", "memref<i32x8>", "memref<f32x8>", "memref<f64x8x8>", False),
        ("hadamard", "memref<f32x8>", "memref<c32x8>", "memref<c64x8>", True),
        ("hadamard", "memref<f64x8>", "memref<c32x8>", "memref<c64x8>", False),
    ],
)
def test_other_blas3_use_promote(inst, a, b, c, ok):
    src = (
        f"func @k(%A: {a}, %B: {b}, %C: {c}) {{\n"
        "    %one = constant 1.0 : f16\n"
        "    %zero = constant 0.0 : f16\n"
        f"    {inst} %one, %A, %B, %zero, %C\n"
        "}\n"
    )
    if ok:
        parse(src)
        return
    with pytest.raises(CompilationError) as info:
        parse(src)
    assert info.value.status is Status.ir_forbidden_promotion


@pytest.mark.parametrize(
    "a, b, c, ok",
    [
        ("f16", "f16", "f32", True),
        ("i8", "i8", "i32", True),
        ("bf16", "bf16", "f32", True),
        ("f16", "bf16", "f32", False),
        ("f32", "f32", "f16", False),
        ("i32", "i32", "f32", False),
    ],
)
def test_cooperative_matrix_mul_add_uses_promote(a, b, c, ok):
    src = (
        f"func @k(%A: memref<{a}x16x8>, %B: memref<{b}x8x16>, %C: memref<{c}x16x16>) "
        "attributes {subgroup_size = 16} {\n"
        "    parallel {\n"
        "        %c0 = constant 0 : index\n"
        f"        %a = cooperative_matrix_load %A[%c0, %c0] : coopmatrix<{a}x16x8, matrix_a>\n"
        f"        %b = cooperative_matrix_load %B[%c0, %c0] : coopmatrix<{b}x8x16, matrix_b>\n"
        f"        %c = cooperative_matrix_load %C[%c0, %c0] : coopmatrix<{c}x16x16, matrix_acc>\n"
        f"        %d = cooperative_matrix_mul_add %a, %b, %c : coopmatrix<{c}x16x16, matrix_acc>\n"
        "    }\n"
        "}\n"
    )
    if ok:
        parse(src)
        return
    with pytest.raises(CompilationError) as info:
        parse(src)
    assert info.value.status is Status.ir_forbidden_promotion
