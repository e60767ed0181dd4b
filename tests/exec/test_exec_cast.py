"""cast between every allowed pair of number types, executed on the CPU OpenCL device.

Allowed: every non-complex type to every number type, complex to complex (complex to real is
forbidden). One program per source type casts to every destination at once.

Semantics checked against NumPy / exact Python arithmetic:
- int -> int: two's complement wrap-around on narrowing, sign extension on widening;
- int -> float: round to nearest even; beyond the range of f16 (and bf16) gives inf;
- float -> int: truncation toward zero; NaN, infinities and values whose truncation is out of
  range are undefined (SPIR-V OpConvertFToS) and are not compared;
- float -> float: round to nearest even, overflow to inf, underflow to (signed) zero, NaN and
  the sign of zero kept;
- real -> complex: the real part is converted as above and the imaginary part is +0;
- to bf16: through f32 (an f64 or a wide integer is rounded to f32 first, then to bf16).
"""

from __future__ import annotations

import numpy as np
import pytest

from .support import (
    COMPLEX_TYPES,
    COMPONENT,
    INT_TYPES,
    NP_DTYPE,
    NUMBER_TYPES,
    as_float64,
    bf16_bits,
    build,
    elementwise,
    num_groups,
)

pytestmark = pytest.mark.timeout(120, method="thread")

INT_CANDIDATES = [0, 1, -1, 2, -2, 100, -100, 127, -128, 128, -129, 255, 256, 32767, -32768]
INT_CANDIDATES += [32768, -32769, 65504, 65519, 65520, 65535, 70000, -70000, 2**24 + 1]
INT_CANDIDATES += [2**31 - 1, -(2**31), 2**31, 2**53 + 1, -(2**62) - 1, 2**63 - 1, -(2**63)]
# ties of f32 (f64) after a first rounding to f64 (f32): a single rounding must go up
INT_CANDIDATES += [2**62 + 2**38 + 1, -(2**62 + 2**38 + 1), 2**60 + 2**7 + 1, 2**25 + 2**14 + 1]

FLOAT_CANDIDATES = [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.7, -2.7]
FLOAT_CANDIDATES += [127.9, -128.9, 255.5, 32767.5, -32768.75, 65504.0, 65519.99, 65520.0]
FLOAT_CANDIDATES += [1e5, 2.5e9, -2.1e9, 1e18, -9.2e18, 1e300, -1e300, 1e-300, 1e-8, 3e-8]
FLOAT_CANDIDATES += [1 + 2**-11, 1 + 2**-11 + 2**-40, 1 + 2**-24 + 2**-60, 1 + 2**-8, 3.4e38]
FLOAT_CANDIDATES += [1e39, 1.0078125 + 2**-8, -(1 + 2**-8 + 2**-30)]


def source_values(src: str) -> tuple[np.ndarray, list]:
    """(array of type src, the exact values as Python ints or float64s)."""
    if src in INT_TYPES:
        info = np.iinfo(NP_DTYPE[src])
        vals = [v for v in INT_CANDIDATES if info.min <= v <= info.max]
        return np.array(vals, NP_DTYPE[src]), vals
    with np.errstate(over="ignore"):
        if src in COMPLEX_TYPES:
            re = np.array(FLOAT_CANDIDATES)
            z = np.zeros(len(re), NP_DTYPE[src])
            z.real, z.imag = re, np.roll(re, 7)  # (re + 1j * im would turn inf into nan)
            return z, list(z.astype(np.complex128))
        if src == "bf16":
            a = bf16_bits(np.array(FLOAT_CANDIDATES, np.float32))
        else:
            a = np.array(FLOAT_CANDIDATES).astype(NP_DTYPE[src])
    return a, list(as_float64(a, src))


def destinations(src: str) -> list[str]:
    return list(COMPLEX_TYPES) if src in COMPLEX_TYPES else list(NUMBER_TYPES)


def run_casts(src: str, a: np.ndarray) -> dict[str, np.ndarray]:
    dsts = destinations(src)
    params = [f"%a: memref<{src}x?>"] + [f"%o{k}: memref<{d}x?>" for k, d in enumerate(dsts)]
    body = [f"%x = load %a[%i] : {src}"]
    for k, d in enumerate(dsts):
        body += [f"%r{k} = cast %x : {d}", f"store %r{k}, %o{k}[%i]"]
    outs = [np.zeros(len(a), NP_DTYPE[d]) for d in dsts]
    build(elementwise("casts", ", ".join(params), body)).kernel("casts")(
        a, *outs, num_groups=num_groups(len(a))
    )
    return dict(zip(dsts, outs))


def to_int(vals: list, dst: str) -> tuple[np.ndarray, np.ndarray]:
    """(mask of defined conversions, expected values) for a cast to integer type dst."""
    info = np.iinfo(NP_DTYPE[dst])
    bits = info.bits
    want, ok = [], []
    for v in vals:
        if isinstance(v, int):
            want.append((v + 2 ** (bits - 1)) % 2**bits - 2 ** (bits - 1))  # wrap-around
            ok.append(True)
        elif np.isfinite(v) and info.min <= int(v) <= info.max:  # int() truncates
            want.append(int(v))
            ok.append(True)
        else:
            want.append(0)
            ok.append(False)
    return np.array(ok), np.array(want, NP_DTYPE[dst])


def round_int(v: int, bits: int) -> int:
    """v rounded to `bits` significant bits, to nearest even (exactly representable after)."""
    n = abs(v).bit_length()
    if n <= bits:
        return v
    shift = n - bits
    q, r = divmod(abs(v), 1 << shift)
    if r > 1 << (shift - 1) or (r == 1 << (shift - 1) and q & 1):
        q += 1
    return (q << shift) * (1 if v > 0 else -1)


def to_float(vals: list, src: str, dst: str) -> np.ndarray:
    """Expected float64 values of a cast of `vals` to float type dst."""
    with np.errstate(over="ignore"):
        if dst != "bf16":
            if src in INT_TYPES:  # ints beyond 2^24 / 2^53 must round once, from the exact value
                bits = {"f16": 11, "f32": 24, "f64": 53}[dst]
                return np.array([float(round_int(v, bits)) for v in vals]).astype(NP_DTYPE[dst])
            return np.array(vals).astype(NP_DTYPE[dst]).astype(np.float64)
        f32 = np.array([np.float32(v) for v in vals], np.float32)  # via f32, see docstring
        return as_float64(bf16_bits(f32), "bf16")


def assert_float_equal(got: np.ndarray, want: np.ndarray, msg: str) -> None:
    np.testing.assert_array_equal(got, want, err_msg=msg)
    zero = want == 0
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]), err_msg=msg)


@pytest.mark.parametrize("src", NUMBER_TYPES)
def test_cast_from(src):
    a, vals = source_values(src)
    out = run_casts(src, a)
    for dst, got in out.items():
        msg = f"cast {src} -> {dst}"
        if src in COMPLEX_TYPES:
            with np.errstate(over="ignore"):
                want = np.array(vals).astype(NP_DTYPE[dst])
            np.testing.assert_array_equal(got, want, err_msg=msg)
        elif dst in INT_TYPES:
            ok, want = to_int(vals, dst)
            np.testing.assert_array_equal(got[ok], want[ok], err_msg=msg)
        elif dst in COMPLEX_TYPES:
            re = to_float(vals, src, COMPONENT[dst])
            assert_float_equal(got.real.astype(np.float64), re, msg + " (re)")
            assert_float_equal(got.imag.astype(np.float64), np.zeros_like(re), msg + " (im)")
        else:
            assert_float_equal(as_float64(got, dst), to_float(vals, src, dst), msg)


def test_cast_rounding_cases():
    """Spot checks of the boundary cases the table above contains."""
    a, _ = source_values("f64")
    out = run_casts("f64", a)
    vals = list(FLOAT_CANDIDATES)
    h = out["f16"].astype(np.float64)
    assert h[vals.index(65519.99)] == 65504.0
    assert h[vals.index(65520.0)] == np.inf  # a tie that rounds to the (infinite) even value
    assert h[vals.index(1 + 2**-11)] == 1.0  # tie to even
    assert h[vals.index(1 + 2**-11 + 2**-40)] == 1 + 2**-10  # no double rounding through f32
    assert h[vals.index(1e-8)] == 0.0 and h[vals.index(3e-8)] == 2.0**-24  # subnormal f16
    assert out["f32"][vals.index(1e39)] == np.inf
    assert out["i32"][vals.index(-2.7)] == -2 and out["i8"][vals.index(127.9)] == 127
