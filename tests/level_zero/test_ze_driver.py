"""Our Level Zero driver for the CPU (capi/ze_cpu), used through the real Level Zero loader by C
programs (tests/level_zero/c) and by cffi: exports, properties, USM, modules and kernels run on
immediate and regular command lists, events, fences, error paths; with and without the loader's
validation layer."""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from .conftest import clean_env, key_values, load_driver_build

pytestmark = pytest.mark.timeout(300)

ZE_HEADERS = Path("/usr/include/level_zero")
MODULE_BUILD_FAILURE = 0x70000004
INVALID_NATIVE_BINARY = 0x7800000F

AXPY_GROUP = """
func @axpy_group(%alpha: f32, %x: memref<f32x?>, %Y: group<memref<f32x?>x?>)
    attributes {subgroup_size=16, work_group_size=[16,1]} {
    %id = group_id.x : index
    %y = load %Y[%id] : memref<f32x?>
    %n = size %x[0] : index
    %c0 = constant 0 : index
    foreach (%i) = (%c0), (%n) {
        %xi = load %x[%i] : f32
        %yi = load %y[%i] : f32
        %p = mul %alpha, %xi : f32
        %s = add %p, %yi : f32
        store %s, %y[%i]
    }
}
"""

# A valid module (spirv-val accepts it) that the CPU runtime cannot link: the kernel calls an
# imported function nobody defines.
UNRESOLVED_IMPORT = """
               OpCapability Addresses
               OpCapability Kernel
               OpCapability Linkage
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "k"
               OpDecorate %ext LinkageAttributes "tinytc_missing_function" Import
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
        %ext = OpFunction %void None %fn
               OpFunctionEnd
          %k = OpFunction %void None %fn
          %l = OpLabel
          %c = OpFunctionCall %void %ext
               OpReturn
               OpFunctionEnd
"""

VALIDATION = [pytest.param(False, id="plain"), pytest.param(True, id="validation-layer")]


@pytest.fixture(scope="session")
def axpy_spv(tmp_path_factory) -> Path:
    from tinytc_py.compiler import compile_to_spirv
    from tinytc_py.text.dialect import parse

    path = tmp_path_factory.mktemp("spv") / "axpy_group.spv"
    path.write_bytes(compile_to_spirv(parse(AXPY_GROUP)).data)
    return path


def getter_names() -> set[str]:
    """Every Get...ProcAddrTable getter the 1.4 headers declare."""
    names = set()
    for header in ("ze_ddi.h", "zet_ddi.h", "zes_ddi.h"):
        text = (ZE_HEADERS / header).read_text()
        names |= set(re.findall(r"^(ze[ts]?Get\w+ProcAddrTable)\(", text, re.MULTILINE))
    return names


def test_exports_only_the_table_getters(ze_driver):
    out = subprocess.run(
        ["nm", "-D", "--defined-only", str(ze_driver)], capture_output=True, text=True, check=True
    ).stdout
    exported = {line.split()[-1] for line in out.splitlines() if line.strip()}
    assert exported == getter_names()
    assert len(exported) == 53


def test_links_with_nodelete(ze_driver):
    out = subprocess.run(["readelf", "-d", str(ze_driver)], capture_output=True, text=True).stdout
    assert "NODELETE" in out
    assert "libOpenCL.so.1" in out


def test_vendors_folder_points_at_the_runtime(ze_driver):
    icds = sorted((ze_driver.parent / "ze_tinytc_cpu_vendors").glob("*.icd"))
    ours = [p for p in icds if p.name == "tinytc-intel-cpu.icd"]
    assert ours, icds
    lib = Path(ours[0].read_text().strip())
    assert lib.is_absolute() and lib.name == "libintelocl.so" and lib.is_file()


@pytest.mark.parametrize("validation", VALIDATION)
def test_properties(ze_program, validation):
    props = key_values(ze_program("properties.c").run(validation=validation).stdout)
    assert props["api_version"] == "1.4"
    assert props["vendor_id"] == "0x8086"
    assert props["type"] == "2"  # ZE_DEVICE_TYPE_CPU
    assert props["name"]
    assert props["ip_version"] == "0"
    assert props["threads_per_eu"] == "16" and props["eus_per_subslice"] == "8"
    assert int(props["max_mem_alloc_size"]) > 0
    assert props["sub_devices"] == "0"
    assert int(props["max_total_group_size"]) >= 256
    sizes = [int(s) for s in props["subgroup_sizes"].split()]
    assert 8 in sizes and 16 in sizes
    assert props["spirv_version"] == "1.4"
    assert props["fp16"] == "1" and props["fp64"] == "1"
    assert props["atomics_fp16"] == "0x0"
    assert props["atomics_fp32"] == props["atomics_fp64"] == "0x70007"
    assert props["memory_count"] == "1" and int(props["memory_total"]) > 0
    assert props["queue_groups"] == "1" and props["queue_group_queues"] == "1"
    assert props["queue_group_compute"] == props["queue_group_copy"] == "1"
    assert "extension=ZE_extension_float_atomics" in ze_program("properties.c").run().stdout


def test_driver_version_names_the_build(ze_program, tmp_path):
    """Kernel caches key native binaries by the driverVersion (runtime/level_zero.py), so a
    driver built from other sources or flags reports another one; the same build, the same."""
    build = load_driver_build()
    source = tmp_path / "module.c"
    source.write_text("int x;\n")
    digest = build.build_digest([source], ["gcc"])
    assert build.build_digest([source], ["gcc", "-O0"]) != digest
    source.write_text("int y;\n")
    assert build.build_digest([source], ["gcc"]) != digest
    other = build.build_driver(tmp_path / "lib", flags=("-DZE_CPU_TEST_VARIANT=1",))
    program = ze_program("properties.c")
    version = key_values(program.run().stdout)["driver_version"]
    assert key_values(program.run().stdout)["driver_version"] == version
    rebuilt = dataclasses.replace(program, driver=other)
    assert key_values(rebuilt.run().stdout)["driver_version"] != version


def arrays(stdout: str, label: str) -> list[np.ndarray]:
    return [
        np.array(line.split("=", 1)[1].split(), dtype=np.float32)
        for line in stdout.splitlines()
        if line.startswith(label + "=")
    ]


@pytest.mark.parametrize("mode", ["immediate", "regular", "native"])
@pytest.mark.parametrize("validation", VALIDATION)
def test_kernel_launch(ze_program, axpy_spv, mode, validation):
    out = ze_program("kernel.c").run(str(axpy_spv), mode, validation=validation).stdout
    info = key_values(out)
    assert info["num_args"] == "6"  # alpha, x, size of x, Y, shapes of Y, size of Y
    assert info["required_group_size"] == "16 1 1"
    assert info["required_subgroup_size"] == "16"
    assert info["kernel_name"] == "axpy_group"
    assert info["suggested_group_size"] == "16 1 1"
    (x1,), (x2,) = arrays(out, "x1"), arrays(out, "x2")
    before, after = arrays(out, "y_before"), arrays(out, "y_after")
    assert len(before) == len(after) == 3
    for y0, y in zip(before, after, strict=True):
        # regular: two launches, appended with (2, x1) and (3, x2), executed afterwards
        want = y0 + 2 * x1 + 3 * x2 if mode == "regular" else y0 + 2 * x1
        np.testing.assert_allclose(y, want, rtol=1e-6)


@pytest.mark.parametrize("validation", VALIDATION)
def test_memory_events_and_fences(ze_program, validation):
    ze_program("events.c").run(validation=validation)


@pytest.mark.parametrize("validation", VALIDATION)
def test_invalid_arguments(ze_program, validation):
    args = () if validation else ("wrong-kinds",)
    ze_program("invalid.c").run(*args, validation=validation)


def _spirv_variants(good: bytes) -> dict[str, bytes]:
    zero_word_count = bytearray(good)
    zero_word_count[20:24] = bytes(4)  # first instruction: word count 0 (pitfall 3)
    return {
        "wrong-magic": b"\0\0\0\0" + good[4:],
        "odd-size": good[:-2],
        "zero-word-count": bytes(zero_word_count),
        "no-function-end": good[:-4],
        "truncated": good[:-8],  # a block without terminator: crashes the runtime's JIT
    }


@pytest.mark.parametrize(
    "case", ["wrong-magic", "odd-size", "zero-word-count", "no-function-end", "truncated"]
)
def test_malformed_spirv_is_rejected_quickly(ze_program, axpy_spv, tmp_path, case):
    path = tmp_path / f"{case}.spv"
    path.write_bytes(_spirv_variants(axpy_spv.read_bytes())[case])
    out = key_values(ze_program("module_errors.c").run(str(path), "il").stdout)
    assert int(out["result"], 16) in (INVALID_NATIVE_BINARY, MODULE_BUILD_FAILURE)
    assert out["log"]


def test_foreign_native_binary_is_rejected(ze_program, axpy_spv):
    out = key_values(ze_program("module_errors.c").run(str(axpy_spv), "native").stdout)
    assert int(out["result"], 16) == INVALID_NATIVE_BINARY
    assert "native binary" in out["log"]


@pytest.mark.parametrize("validation", VALIDATION)
def test_build_failure_has_the_runtime_log(ze_program, tmp_path, validation):
    if shutil.which("spirv-as") is None:
        pytest.skip("spirv-as (spirv-tools) is needed")
    source = tmp_path / "import.spvasm"
    source.write_text(textwrap.dedent(UNRESOLVED_IMPORT))
    spv = tmp_path / "import.spv"
    subprocess.run(["spirv-as", str(source), "-o", str(spv)], check=True)
    subprocess.run(["spirv-val", str(spv)], check=True)
    result = ze_program("module_errors.c").run(str(spv), "il", validation=validation)
    assert f"result=0x{MODULE_BUILD_FAILURE:x}" in result.stdout
    assert "tinytc_missing_function" in result.stdout  # the OpenCL build log


def test_no_cpu_device_fails_init_cleanly(ze_program, tmp_path):
    empty = tmp_path / "no-vendors"
    empty.mkdir()
    result = ze_program("properties.c").run(env={"OCL_ICD_VENDORS": str(empty)}, check=False)
    assert result.returncode == 1, result.stderr
    assert "zeInit(0) returned 0x78000001" in result.stderr  # ZE_RESULT_ERROR_UNINITIALIZED


CFFI_SCRIPT = """
import os, sys
os.environ["ZE_ENABLE_ALT_DRIVERS"] = sys.argv[1]
import cffi
ffi = cffi.FFI()
ffi.cdef('''
typedef struct _ze_driver_handle_t *ze_driver_handle_t;
typedef struct _ze_device_handle_t *ze_device_handle_t;
typedef struct {
    uint32_t stype; void *pNext; uint32_t type; uint32_t vendorId; uint32_t deviceId;
    uint32_t flags; uint32_t subdeviceId; uint32_t coreClockRate; uint64_t maxMemAllocSize;
    uint32_t maxHardwareContexts; uint32_t maxCommandQueuePriority; uint32_t numThreadsPerEU;
    uint32_t physicalEUSimdWidth; uint32_t numEUsPerSubslice; uint32_t numSubslicesPerSlice;
    uint32_t numSlices; uint64_t timerResolution; uint32_t timestampValidBits;
    uint32_t kernelTimestampValidBits; uint8_t uuid[16]; char name[256];
} ze_device_properties_t;
int zeInit(uint32_t flags);
int zeDriverGet(uint32_t *count, ze_driver_handle_t *drivers);
int zeDeviceGet(ze_driver_handle_t driver, uint32_t *count, ze_device_handle_t *devices);
int zeDeviceGetProperties(ze_device_handle_t device, ze_device_properties_t *props);
''')
ze = ffi.dlopen("libze_loader.so.1")
assert ze.zeInit(0) == 0
count = ffi.new("uint32_t *", 1)
driver = ffi.new("ze_driver_handle_t *")
assert ze.zeDriverGet(count, driver) == 0 and count[0] == 1
device = ffi.new("ze_device_handle_t *")
assert ze.zeDeviceGet(driver[0], count, device) == 0
props = ffi.new("ze_device_properties_t *", {"stype": 3})
assert ze.zeDeviceGetProperties(device[0], props) == 0
print("vendor=0x%x" % props.vendorId)
print("name=" + ffi.string(props.name).decode())
"""


def test_python_cffi_through_the_loader(ze_driver, tmp_path):
    script = tmp_path / "ze_cffi.py"
    script.write_text(CFFI_SCRIPT)
    result = subprocess.run(
        [sys.executable, str(script), str(ze_driver)],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    out = key_values(result.stdout)
    assert out["vendor"] == "0x8086" and out["name"]
