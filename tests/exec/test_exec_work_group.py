"""The work-group collectives extension (docs/extensions.md) on every number type, over
work-groups of several subgroups, against NumPy.

Work-item p (the linear id subgroup_linear_id * subgroup_size + subgroup_local_id, which is the
OpenCL linear local id) reads x[p] and stores the nine reduce / inclusive scan / exclusive scan
x add / max / min results (add only for complex numbers) and work_group_broadcast of the
work-item given by a kernel argument. Integers use values near their limits so that sums wrap;
floating values are small integers so that every order of summation is exact.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from .support import (
    NP_DTYPE,
    NUMBER_TYPES,
    bf16_bits,
    bf16_value,
    build,
    device_subgroup_sizes,
    group_reference,
)

OPS = [
    f"work_group_{k}_{o}"
    for k in ("reduce", "inclusive_scan", "exclusive_scan")
    for o in ("add", "max", "min")
]
# (subgroup size, work-group size): 8, 4 and 3 subgroups, in one or two dimensions
SHAPES = [(8, (32, 2)), (16, (64, 1)), (32, (32, 3))]


def kernel(ty: str, S: int, wgs: tuple[int, int]) -> tuple[str, list[str]]:
    ops = [op for op in OPS if not (ty.startswith("c") and not op.endswith("add"))]
    n = wgs[0] * wgs[1]
    body = "\n".join(
        f"        %r{k} = {op} %a : {ty}\n"
        f"        %c{k} = constant {k} : index\n"
        f"        store %r{k}, %o[%i, %c{k}]"
        for k, op in enumerate(ops)
    )
    return (
        f"""
func @k(%x: memref<{ty}x{n}>, %o: memref<{ty}x{n}x{len(ops) + 1}>, %src: i32)
    attributes {{subgroup_size={S}, work_group_size=[{wgs[0]},{wgs[1]}]}} {{
    parallel {{
        %sl = subgroup_linear_id : i32
        %S = subgroup_size : i32
        %ll = subgroup_local_id : i32
        %base = mul %sl, %S : i32
        %p = add %base, %ll : i32
        %i = cast %p : index
        %a = load %x[%i] : {ty}
{body}
        %b = work_group_broadcast %a, %src : {ty}
        %cb = constant {len(ops)} : index
        store %b, %o[%i, %cb]
    }}
}}
""",
        ops,
    )


def values(ty: str, n: int) -> np.ndarray:
    rng = np.random.default_rng(n)
    if ty.startswith("c"):
        return (rng.integers(-3, 4, n) + 1j * rng.integers(-3, 4, n)).astype(NP_DTYPE[ty])
    if ty == "bf16":
        return bf16_bits(rng.integers(-3, 4, n).astype(np.float32))
    if ty in ("f16", "f32", "f64"):
        return rng.integers(-3, 4, n).astype(NP_DTYPE[ty])
    info = np.iinfo(NP_DTYPE[ty])
    extremes = np.array([info.max, info.min, info.max - 1, -1], NP_DTYPE[ty])
    return np.concatenate([extremes, rng.integers(-100, 100, n - 4).astype(NP_DTYPE[ty])])


@pytest.mark.parametrize(("S", "wgs"), SHAPES)
@pytest.mark.parametrize("ty", NUMBER_TYPES)
def test_work_group_collectives(ty, S, wgs):
    if S not in device_subgroup_sizes():
        pytest.skip(f"the device has no subgroup size {S}")
    text, ops = kernel(ty, S, wgs)
    n = wgs[0] * wgs[1]
    x = values(ty, n)
    out = np.zeros((n, len(ops) + 1), x.dtype, order="F")
    src = n - 5
    build(text).kernel("k")(x, out, src, num_groups=(1, 1, 1))
    for k, op in enumerate(ops):
        if ty == "bf16":
            want = group_reference(op, bf16_value(x), lambda r: bf16_bits(r.astype(np.float32)))
        else:
            want = group_reference(op, x, lambda r, t=x.dtype: r.astype(t))  # ints wrap around
        np.testing.assert_array_equal(out[:, k], want, err_msg=op)
    np.testing.assert_array_equal(out[:, -1], np.full(n, x[src]), err_msg="broadcast")


@pytest.mark.parametrize("example", ["softmax.ir", "softmax_no_extensions.ir"])
@pytest.mark.parametrize("n", [1, 100, 128, 1000])
def test_softmax_examples(example, n):
    """examples/ir/softmax.ir (work-group reductions) and its portable twin against NumPy."""
    text = (Path(__file__).resolve().parents[2] / "examples" / "ir" / example).read_text()
    x = np.asfortranarray(np.random.default_rng(n).standard_normal((n, 5)).astype(np.float32) * 4)
    y = np.zeros_like(x)
    build(text).kernel("softmax")(x, y, num_groups=(5, 1, 1))
    e = np.exp(x.astype(np.float64) - x.max(axis=0))
    np.testing.assert_allclose(y, e / e.sum(axis=0), rtol=2e-6, atol=1e-7)
