"""The host code yateto (SeisSol's code generator) emits for its tinytc backend, compiled with
g++ against our tinytc.hpp / tinytc_sycl.hpp and libtinytc_sycl, launched on the CPU device and
checked against NumPy.

yateto is not a dependency: the test runs when YATETO_SRC names a checkout of SeisSol/yateto,
and generates everything into its temporary directory. The generator is driven the way SeisSol
drives it for Intel GPUs: a heterogeneous architecture with the `oneapi` backend, kernels with
target="gpu", and tinytc as the only GEMM tool. Its host code includes tinytc/tinytc.hpp and
tinytc/tinytc_sycl.hpp and runs each kernel with create_kernel_bundle, create_kernel,
get_group_size and get_global_size on the caller's sycl::queue, passing every tensor as a group
(an array of pointers) with yateto's extraOffset; tests/capi/c/yateto_main.cpp sets them up.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from .conftest import clean_env
from .test_sycl import C_DIR, build_cxx

#: Drives yateto's generator (argv: yateto checkout, output folder). Shapes are those below.
GENERATOR = """
import sys
sys.path.insert(0, sys.argv[1])
from yateto import Generator, Tensor, useArchitectureIdentifiedBy
from yateto.gemm_configuration import GeneratorCollection, tinytc

arch = useArchitectureIdentifiedBy("dhsw", "dpvc", "oneapi")
g = Generator(arch)
A, B, C = Tensor("A", (8, 6)), Tensor("B", (6, 5)), Tensor("C", (8, 5))
E, F = Tensor("E", (5, 4)), Tensor("F", (8, 4))
g.add("gemm", C["ij"] <= C["ij"] + A["ik"] * B["kj"], target="gpu")
g.add("chain", F["il"] <= A["ik"] * B["kj"] * E["jl"], target="gpu")
g.add("scale", C["ij"] <= 3.0 * C["ij"], target="gpu")
g.generate(sys.argv[2], gemm_cfg=GeneratorCollection([tinytc(arch)]))
"""
SHAPES = {"A": (8, 6), "B": (6, 5), "C": (8, 5), "E": (5, 4), "F": (8, 4)}


def _gemm(t):
    return {"C": t["C"] + t["A"] @ t["B"]}


#: kernel -> (its tensors, what it computes from them with NumPy: output tensor -> batch).
#: gemm: C += AB (beta 1); chain: F = ABE (two GEMMs fused into one tinytc kernel, beta 0);
#: scale: C = 3C (two copy-scale kernels through a temporary from yateto's linear allocator).
#: (A transposed operand, C = T^T B, is left out: the IR yateto writes for it declares its
#: subview with the transposed shape but the untransposed strides, which tinytc rejects; its
#: gemm.t.n then has incompatible shapes, which upstream tinytc v0.4.0 rejects as well.)
KERNELS = {
    "gemm": ("ABC", _gemm),
    "chain": ("ABEF", lambda t: {"F": t["A"] @ t["B"] @ t["E"]}),
    "scale": ("C", lambda t: {"C": 3.0 * t["C"]}),
}
N = 37  # batch size (numElements)


@pytest.fixture(scope="module")
def yateto_program(sycl_libs, tmp_path_factory) -> Path:
    src = os.environ.get("YATETO_SRC")
    if not src or not (Path(src) / "yateto" / "codegen" / "common.py").is_file():
        pytest.skip("set YATETO_SRC to a checkout of SeisSol/yateto")
    work = tmp_path_factory.mktemp("yateto")
    out = work / "generated"
    out.mkdir()
    script = work / "generate.py"
    script.write_text(GENERATOR)
    gen = subprocess.run(
        [sys.executable, str(script), src, str(out)], capture_output=True, text=True
    )
    assert gen.returncode == 0, gen.stdout[-2000:] + gen.stderr[-4000:]
    host_code = (out / "gpulike_subroutine.cpp").read_text()
    assert '#include "tinytc/tinytc_sycl.hpp"' in host_code
    assert "tinytc::create_kernel_bundle(" in host_code and "tinytc::get_global_size(" in host_code
    sources = [out / f for f in ("kernel.cpp", "gpulike_subroutine.cpp", "tensor.cpp", "init.cpp")]
    flags = (f"-I{out}", f"-I{Path(src) / 'include'}")
    build_cxx([*sources, C_DIR / "yateto_main.cpp"], work / "yateto_main", sycl_libs, flags)
    return work / "yateto_main"


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_yateto_kernel(yateto_program, cl_env, kernel, tmp_path):
    names, compute = KERNELS[kernel]
    rng = np.random.default_rng(len(kernel))
    tensors = {t: rng.standard_normal((N, *SHAPES[t])) for t in names}
    for t, batch in tensors.items():  # column-major copies, one after the other
        np.ascontiguousarray(batch.transpose(0, 2, 1)).tofile(tmp_path / f"{t}.bin")
    result = subprocess.run(
        [str(yateto_program), kernel, str(tmp_path), str(N)],
        capture_output=True,
        text=True,
        env={**clean_env(), **cl_env},
        timeout=300,
    )
    assert result.returncode == 0 and result.stdout == f"{kernel}: ok\n", result.stderr[-4000:]
    expected = {**tensors, **compute(tensors)}
    for t in names:
        got = np.fromfile(tmp_path / f"{t}.out.bin").reshape(N, SHAPES[t][1], SHAPES[t][0])
        np.testing.assert_allclose(got.transpose(0, 2, 1), expected[t], rtol=1e-12, atol=1e-12)
