"""The top-level API (`tinytc_py.compile`, `devices`, `parse`, `Builder`, the recipes on arrays):
kernels run on every device found and are compared with NumPy; errors carry status and location;
`import tinytc_py` loads neither the compiler nor a runtime."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tinytc_py
from available_devices import devices
from tinytc_py import CompilationError, Status, TinytcError

AXPY = """\
func @axpy(%alpha: f32, %x: memref<f32x?>, %y: memref<f32x?>) {
    %n = size %x[0] : index
    %c0 = constant 0 : index
    foreach (%i) = (%c0), (%n) {
        %xi = load %x[%i] : f32
        %yi = load %y[%i] : f32
        %a = mul %alpha, %xi : f32
        %r = add %a, %yi : f32
        store %r, %y[%i]
    }
}
"""


def test_import_loads_neither_compiler_nor_runtime():
    code = (
        "import sys, tinytc_py\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('numpy', 'pyopencl', 'cffi')\n"
        "         or m.startswith(('tinytc_py.ir', 'tinytc_py.runtime', 'tinytc_py.spirv'))]\n"
        "print(heavy)\n"
        "tinytc_py.compile\n"
        "print('tinytc_py.api' in sys.modules, 'pyopencl' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["[]", "True False"]


def test_every_public_name_resolves():
    for name in tinytc_py.__all__:
        assert getattr(tinytc_py, name) is not None, name
    assert tinytc_py.Builder is importlib.import_module("tinytc_py.ir.builder").IRBuilder
    assert sorted(dir(tinytc_py)) == sorted(tinytc_py.__all__)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        tinytc_py.nope  # noqa: B018


def test_compile_and_run_on_every_device():
    x = np.arange(1000, dtype=np.float32)
    for device in devices():
        prog = tinytc_py.compile(AXPY, device=device)
        assert prog.device == device and prog.kernels == ("axpy",)
        y = np.linspace(-1, 1, 1000, dtype=np.float32)
        want = 2.5 * x + y
        prog.kernel("axpy")(2.5, x, y, num_groups=1)
        np.testing.assert_allclose(y, want, rtol=1e-6, err_msg=str(device))


def test_default_device_is_first_and_used_by_default():
    found = devices()
    assert found[0].runtime == "opencl"
    assert tinytc_py.compile("func @k() {}").device == found[0]
    assert all(d.runtime in tinytc_py.api.RUNTIMES for d in found)


def test_without_pyopencl_level_zero_devices_remain():
    if not any(d.runtime == "level_zero" for d in devices()):
        pytest.skip("no Level Zero device")
    code = (
        "import sys; sys.modules['pyopencl'] = None  # as if the 'opencl' extra were missing\n"
        "import numpy as np, tinytc_py\n"
        "print(sorted({d.runtime for d in tinytc_py.devices()}))\n"
        "prog = tinytc_py.compile('func @k(%a: i32, %x: memref<i32x4>) {\\n"
        "  %c = constant 0 : index\\n  store %a, %x[%c]\\n}')\n"
        "x = np.zeros(4, np.int32)\n"
        "prog.kernel('k')(7, x)\n"
        "print(prog.device.runtime, x.tolist())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["['level_zero']", "level_zero [7, 0, 0, 0]"]


def test_compile_a_file_with_options(tmp_path: Path):
    devices()
    path = tmp_path / "axpy.ir"
    path.write_text(AXPY)
    prog = tinytc_py.compile(path, opt_level=0, flags=["unsafe-fp-math", "no-kernel-cache"])
    y = np.zeros(10, np.float32)
    prog.kernel("axpy")(1.0, np.ones(10, np.float32), y)
    assert y.tolist() == [1.0] * 10


def test_compile_a_built_program():
    found = devices()
    b = tinytc_py.Builder()
    ctx = b.ctx
    vec = ctx.memref(ctx.i32, [8])
    with b.function("fill", [ctx.i32, vec]) as f:
        value, out = f.params
        with b.foreach([b.constant(0, ctx.index)], [b.constant(8, ctx.index)]) as i:
            b.store(value, out, [i])
    out = np.zeros(8, np.int32)
    tinytc_py.compile(b, device=found[-1]).kernel("fill")(-7, out)
    assert out.tolist() == [-7] * 8


def test_target_without_device_gives_spirv_and_dump():
    prog = tinytc_py.compile(AXPY, target="pvc")
    assert prog.device is None
    assert prog.spirv[:4] == bytes.fromhex("03022307")  # the magic number, little-endian
    text = prog.dump()
    assert text.startswith("; SPIR-V\n")
    assert "OpEntryPoint Kernel %" in text and '"axpy"' in text
    with pytest.raises(TinytcError, match="without a device") as err:
        prog.kernel("axpy")
    assert err.value.status == Status.invalid_arguments


def test_bad_options_are_clear_errors():
    with pytest.raises(ValueError, match="unknown flag 'fast'"):
        tinytc_py.compile(AXPY, target="pvc", flags=["fast"])
    with pytest.raises(ValueError, match="opt_level must be 0, 1 or 2"):
        tinytc_py.compile(AXPY, target="pvc", opt_level=3)
    with pytest.raises(ValueError, match="unknown dialect 'old'"):
        tinytc_py.compile(AXPY, target="pvc", dialect="old")
    with pytest.raises(ValueError, match="unknown device 'h100'"):
        tinytc_py.compile(AXPY, target="h100")
    with pytest.raises(TypeError, match="not a device"):
        tinytc_py.compile(AXPY, device="gpu0")


def test_compilation_error_has_location_status_and_notes(tmp_path: Path):
    path = tmp_path / "bad.ir"
    path.write_text("func @f(%a: i32,\n        %b: f32) {\n    %r = add %a, %b : f32\n}\n")
    with pytest.raises(CompilationError) as info:
        tinytc_py.compile(path, target="pvc")
    err = info.value
    assert err.status == Status.ir_number_mismatch
    assert (err.location.begin.line, err.location.begin.column) == (3, 10)
    assert (err.location.end.line, err.location.end.column) == (3, 26)
    assert [(n.location.begin.line, n.location.begin.column) for n in err.notes] == [(1, 9), (2, 9)]
    assert [n.message for n in err.notes] == ["value defined here (%a)", "value defined here (%b)"]
    assert (
        str(err).splitlines()[0]
        == f"{path}:3.10-25: Number type mismatch (operand types differ (i32 vs f32))"
    )


def test_parse_error_names_the_source():
    with pytest.raises(CompilationError) as info:
        tinytc_py.parse("func @f() {\n  %x = constant 1 : f33\n}", name="k.ir")
    assert info.value.status == Status.parse_error
    assert str(info.value).splitlines()[0] == "k.ir:2.21-23: unknown type 'f33'"


def _complex_if(dtype, rng, shape):
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return np.asfortranarray(a.astype(dtype))


@pytest.mark.parametrize(
    ("dtype", "transA", "transB"),
    [
        (np.float32, "n", "n"),
        (np.float64, "t", "n"),
        (np.complex64, "n", "t"),
        (np.float32, "t", "t"),
    ],
)
def test_small_gemm_batched_on_arrays(dtype, transA, transB):
    devices()
    rng = np.random.default_rng(5)
    M, N, K, n = 5, 3, 7, 9
    A = _complex_if(dtype, rng, (K, M, n) if transA == "t" else (M, K, n))
    B = _complex_if(dtype, rng, (N, K, n) if transB == "t" else (K, N, n))
    C = _complex_if(dtype, rng, (M, N, n))
    opA = A.transpose(1, 0, 2) if transA == "t" else A
    opB = B.transpose(1, 0, 2) if transB == "t" else B
    want = 1.5 * np.einsum("ikb,kjb->ijb", opA, opB) - 0.5 * C
    out = tinytc_py.small_gemm_batched(1.5, A, B, -0.5, C, transA=transA, transB=transB)
    assert out is C
    tol = 1e-4 if np.dtype(dtype).itemsize <= 8 and dtype != np.float64 else 1e-10
    np.testing.assert_allclose(C, want, rtol=tol, atol=tol)


def test_small_gemm_batched_beta_zero_ignores_c_and_takes_c_order_arrays():
    devices()
    rng = np.random.default_rng(6)
    A = rng.standard_normal((4, 6, 3)).astype(np.float32)  # C order: staged column-major
    B = rng.standard_normal((6, 2, 3)).astype(np.float32)
    C = np.full((4, 2, 3), np.nan, np.float32)
    tinytc_py.small_gemm_batched(1.0, A, B, 0.0, C)
    np.testing.assert_allclose(C, np.einsum("ikb,kjb->ijb", A, B), rtol=1e-5, atol=1e-5)


def test_small_gemm_batched_with_device_arrays():
    pytest.importorskip("pyopencl")
    import pyopencl.array as cla

    from tinytc_py.runtime import device as cl_device

    found = devices()
    queue = cl_device.default_queue()
    rng = np.random.default_rng(8)
    A = np.asfortranarray(rng.standard_normal((3, 2, 4)))
    B = np.asfortranarray(rng.standard_normal((2, 5, 4)))
    dA, dB = cla.to_device(queue, A), cla.to_device(queue, B)
    dC = cla.zeros(queue, (3, 5, 4), np.float64, order="F")
    tinytc_py.small_gemm_batched(2.0, dA, dB, 0.0, dC, device=found[0])
    np.testing.assert_allclose(dC.get(), 2 * np.einsum("ikb,kjb->ijb", A, B), rtol=1e-12)


def test_recipes_reject_mismatched_arrays():
    A = np.zeros((2, 3, 4), np.float32)
    C = np.zeros((2, 5, 4), np.float32)
    with pytest.raises(TinytcError, match=r"B has shape \(3, 5, 3\), expected \(3, 5, 4\)"):
        tinytc_py.small_gemm_batched(1.0, A, np.zeros((3, 5, 3), np.float32), 0.0, C)
    with pytest.raises(TinytcError, match="B has dtype float64, C float32"):
        tinytc_py.small_gemm_batched(1.0, A, np.zeros((3, 5, 4)), 0.0, C)
    with pytest.raises(TinytcError, match="A must have 2 modes"):
        tinytc_py.tall_and_skinny(1.0, A, np.zeros((3, 5), np.float32), 0.0, C[:, :, 0])
    with pytest.raises(TinytcError, match="recipes do not support dtype bool"):
        tinytc_py.tall_and_skinny(1.0, *(np.zeros((2, 2), bool),) * 2, 0.0, np.zeros((2, 2), bool))


@pytest.mark.parametrize("M", [1, 129, 1000])
def test_tall_and_skinny_on_arrays(M):
    devices()
    rng = np.random.default_rng(M)
    A = np.asfortranarray(rng.standard_normal((M, 6)).astype(np.float32))
    B = np.asfortranarray(rng.standard_normal((6, 3)).astype(np.float32))
    C = np.asfortranarray(rng.standard_normal((M, 3)).astype(np.float32))
    want = 0.5 * A.astype(np.float64) @ B + 2.0 * C
    tinytc_py.tall_and_skinny(0.5, A, B, 2.0, C)
    np.testing.assert_allclose(C, want, rtol=1e-4, atol=1e-4)
