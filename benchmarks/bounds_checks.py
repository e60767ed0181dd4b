"""The cost of bounds-checked mode (flags=["bounds-checks"], docs/bounds-checks.rst): the same
kernels compiled without and with the checks, launched on device-resident pyopencl arrays.

    flock /work/cpu.lock .venv/bin/python benchmarks/bounds_checks.py [--repeat N] [--mb MB]

Kernels (one work-group per batch entry, `%g = group_id.x`):
- gemm: C_g = A_g B_g for n x n x n f32 entries (subviews of 3-d memrefs, then `gemm`): the
  checks are the subviews' (once per work-group) and the gemm's shape agreement, which the
  static shapes settle at compile time;
- axpby: B_g = 2 A_g + B_g for columns of 4096 f32 (subview + `axpby`): the same kind of checks;
- foreach: the same update written as a foreach with a load, a load and a store per element,
  where every access is checked (the worst case: three compares per element).
A and B (and C) of all entries take --mb MiB, so every kernel streams from memory. Checked
launches also allocate, zero and read back the 56-byte report record, which is part of the
cost measured. Each figure is the median of --repeat interleaved rounds (timing.py); the
results of both modes are compared first (they must be equal).
"""

from __future__ import annotations

import argparse

import numpy as np

from timing import cpu_description, interleaved_medians
from tinytc_py.ir.context import CompilerContext
from tinytc_py.ir.enums import OptFlag
from tinytc_py.runtime import device as cl_device
from tinytc_py.runtime.opencl import program
from tinytc_py.text.dialect import parse

GEMM = """
func @gemm(%A: memref<f32x{n}x{n}x?>, %B: memref<f32x{n}x{n}x?>, %C: memref<f32x{n}x{n}x?>) {{
    %g = group_id.x : index
    %one = constant 1.0 : f32
    %zero = constant 0.0 : f32
    %a = subview %A[0:{n}, 0:{n}, %g] : memref<f32x{n}x{n}>
    %b = subview %B[0:{n}, 0:{n}, %g] : memref<f32x{n}x{n}>
    %c = subview %C[0:{n}, 0:{n}, %g] : memref<f32x{n}x{n}>
    gemm.n.n %one, %a, %b, %zero, %c
}}
"""

COLUMNS = """
func @axpby(%A: memref<f32x{n}x?>, %B: memref<f32x{n}x?>) {{
    %g = group_id.x : index
    %two = constant 2.0 : f32
    %one = constant 1.0 : f32
    %a = subview %A[0:{n}, %g] : memref<f32x{n}>
    %b = subview %B[0:{n}, %g] : memref<f32x{n}>
    axpby.n %two, %a, %one, %b
}}
func @foreach(%A: memref<f32x{n}x?>, %B: memref<f32x{n}x?>) {{
    %g = group_id.x : index
    %two = constant 2.0 : f32
    %c0 = constant 0 : index
    %cn = constant {n} : index
    foreach (%i) = (%c0), (%cn) {{
        %x = load %A[%i, %g] : f32
        %y = load %B[%i, %g] : f32
        %ax = mul %two, %x : f32
        %r = add %ax, %y : f32
        store %r, %B[%i, %g]
    }}
}}
"""


def build(text: str, checked: bool):
    ctx = CompilerContext()
    ctx.set_optimization_flag(OptFlag.bounds_checks, int(checked))
    ctx.set_optimization_flag(OptFlag.kernel_cache, 0)
    return program(parse(text, ctx))


def device_arrays(shape: tuple[int, ...], count: int, seed: int) -> list:
    import pyopencl.array as cla

    rng = np.random.default_rng(seed)
    queue = cl_device.default_queue()
    return [
        cla.to_device(queue, np.asfortranarray(rng.standard_normal(shape).astype(np.float32)))
        for _ in range(count)
    ]


def compare(name: str, size: str, kernels: dict, make_args, groups: int, repeat: int) -> None:
    """Equal results first, then the interleaved timing of both modes."""
    outs = []
    for k in kernels.values():
        args = make_args()
        k(*args, num_groups=groups)
        outs.append(args[-1].get())
    assert np.array_equal(outs[0], outs[1]), f"{name}: checked and unchecked results differ"
    args = make_args()
    times = interleaved_medians(
        {mode: (lambda k=k: k(*args, num_groups=groups)) for mode, k in kernels.items()}, repeat
    )
    off, on = times["unchecked"] * 1e3, times["checked"] * 1e3
    print(f"{name:>8}  {size:>16}  {groups:>7}  {off:>12.3f}  {on:>10.3f}  {on / off:>7.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--mb", type=int, default=256, help="MiB of all operands together")
    args = ap.parse_args()
    budget = args.mb << 20
    print(f"bounds-checked mode vs default mode, {cpu_description()}")
    print(f"device: {cl_device.default_device().name.strip()}; ms per launch (median)")
    print(f"{'kernel':>8}  {'entry':>16}  {'groups':>7}  {'unchecked ms':>12}  "
          f"{'checked ms':>10}  {'ratio':>7}")  # fmt: skip
    for n in (16, 32, 64):
        batch = max(1, budget // (3 * n * n * 4))
        text = GEMM.format(n=n)
        kernels = {m: build(text, m == "checked").kernel("gemm") for m in ("unchecked", "checked")}
        compare(
            "gemm", f"{n}x{n}x{n} f32", kernels,
            lambda n=n, batch=batch: device_arrays((n, n, batch), 3, n), batch, args.repeat,
        )  # fmt: skip
    n = 4096
    batch = max(1, budget // (2 * n * 4))
    text = COLUMNS.format(n=n)
    for name in ("axpby", "foreach"):
        kernels = {m: build(text, m == "checked").kernel(name) for m in ("unchecked", "checked")}
        compare(
            name, f"{n} f32", kernels,
            lambda: device_arrays((n, batch), 2, 7), batch, args.repeat,
        )  # fmt: skip


if __name__ == "__main__":
    main()
