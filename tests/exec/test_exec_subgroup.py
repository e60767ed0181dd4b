"""subgroup_broadcast and subgroup reduce/scan (add/min/max) on every type, against NumPy.

One work-group of one subgroup (S = 8) per launch; lane p reads x[p] and writes its results.
"""

from __future__ import annotations

import numpy as np
import pytest

from tinytc_py.runtime.opencl import DTYPES

from .support import bf16_bits, bf16_value, build, group_reference

S = 8
TYPES = ["i8", "i16", "i32", "i64", "index", "bf16", "f16", "f32", "f64", "c32", "c64"]
NP = {t: d for t, d in DTYPES.items() if t != "bf16"}  # bf16 is checked through its bits
OPS = [
    f"subgroup_{k}_{o}"
    for k in ("reduce", "inclusive_scan", "exclusive_scan")
    for o in ("add", "max", "min")
]


def kernel(ty: str) -> str:
    ops = [op for op in OPS if not (ty.startswith("c") and not op.endswith("add"))]
    body = "\n".join(
        f"        %r{k} = {op} %x : {ty}\n        store %r{k}, %out[%lid, %c{k}]"
        for k, op in enumerate(ops)
    )
    consts = "\n".join(f"        %c{k} = constant {k} : index" for k in range(len(ops) + 1))
    n = len(ops)
    return (
        f"""
func @k(%in: memref<{ty}x{S}>, %out: memref<{ty}x{S}x{n + 1}>, %src: i32)
    attributes {{subgroup_size={S}, work_group_size=[{S},1]}} {{
    parallel {{
        %l = subgroup_local_id : i32
        %lid = cast %l : index
{consts}
        %x = load %in[%lid] : {ty}
{body}
        %b = subgroup_broadcast %x, %src : {ty}
        store %b, %out[%lid, %c{n}]
    }}
}}
""",
        ops,
    )


@pytest.mark.parametrize("ty", TYPES)
def test_subgroup_operations(ty):
    text, ops = kernel(ty)
    rng = np.random.default_rng(1)
    if ty == "bf16":
        vals = np.array([1.5, -2.0, 3.25, 0.5, -7.0, 100.0, 0.125, 2.0], np.float32)
        x = bf16_bits(vals)
        ref_x = vals
    elif ty.startswith("c"):
        x = (rng.integers(-8, 8, S) + 1j * rng.integers(-8, 8, S)).astype(NP[ty])
        ref_x = x
    elif ty.startswith("f"):
        x = rng.integers(-50, 50, S).astype(NP[ty]) / 4
        ref_x = x
    else:
        info = np.iinfo(NP[ty])
        # values near the limits so that sums wrap around
        x = np.array([info.max, 3, -5, info.min, 7, info.max - 2, -1, 2], NP[ty])
        ref_x = x
    out = np.zeros((S, len(ops) + 1), x.dtype, order="F")
    src = 5
    build(text).kernel("k")(x, out, src, num_groups=(1, 1, 1))
    for k, op in enumerate(ops):
        got = bf16_value(out[:, k]) if ty == "bf16" else out[:, k]
        if ty == "bf16":
            want = group_reference(op, ref_x, lambda r: bf16_value(bf16_bits(r.astype(np.float32))))
        elif x.dtype.kind == "i":
            want = group_reference(op, ref_x, lambda r, t=x.dtype: r.astype(t))  # wraps around
        else:
            want = group_reference(op, ref_x, lambda r, t=x.dtype: r.astype(t))
        np.testing.assert_array_equal(got, want, err_msg=op)
    np.testing.assert_array_equal(out[:, -1], np.full(S, x[src]))
