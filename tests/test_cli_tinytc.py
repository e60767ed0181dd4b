"""The offline compiler `tinytc` (cli/tinytc.py): binary and -S output, -d/-O/-f/-F, -o, errors;
and `tinytc-opt -d`. Runs main(argv) in-process, plus one subprocess run of the console script."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tinytc_py import options as lib_options
from tinytc_py.analysis.tiling import suggest_subgroup_size
from tinytc_py.cli import opt as opt_cli
from tinytc_py.cli import tinytc as tinytc_cli
from tinytc_py.spirv import dump, validate
from tinytc_py.target.core_info import CoreFeature
from tinytc_py.target.cpu_core import host_cpu_core

pytestmark = pytest.mark.timeout(120, method="thread")

SPIRV_MAGIC = bytes.fromhex("03022307")  # 0x07230203, little endian

EMPTY = "func @empty() {\n}\n"
KERNEL = """\
func @scale(%alpha: f32, %A: memref<f32x?>) {
    %c0 = constant 0 : index
    %n = size %A[0] : index
    foreach (%i) = (%c0), (%n) {
        %a = load %A[%i] : f32
        %b = mul %alpha, %a : f32
        store %b, %A[%i]
    }
}
"""
SYNTAX_ERROR = "func @f() {\n    %x = add %y\n}\n"


@pytest.fixture
def source(tmp_path: Path):
    def write(text: str, name: str = "in.ir") -> str:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return str(path)

    return write


def run_binary(capsysbinary, argv: list[str]) -> tuple[int, bytes, str]:
    rc = tinytc_cli.main(argv)
    out, err = capsysbinary.readouterr()
    return rc, out, err.decode()


def run_text(capsys, argv: list[str]) -> tuple[int, str, str]:
    rc = tinytc_cli.main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


def execution_modes(text: str) -> tuple[str, str]:
    local = re.search(r"OpExecutionMode %\d+ LocalSize (\d+ \d+ \d+)", text)
    sgs = re.search(r"OpExecutionMode %\d+ SubgroupSize (\d+)", text)
    assert local and sgs, text
    return local.group(1), sgs.group(1)


def test_binary_to_stdout_is_valid_spirv(capsysbinary, source):
    rc, out, err = run_binary(capsysbinary, [source(KERNEL)])
    assert (rc, err) == (0, "")
    assert out.startswith(SPIRV_MAGIC)
    validate(out)
    assert "OpEntryPoint Kernel %" in dump(out)


def test_dash_o_dash_is_stdout(capsysbinary, source):
    rc, out, _ = run_binary(capsysbinary, ["-o", "-", source(EMPTY)])
    assert rc == 0 and out.startswith(SPIRV_MAGIC)


def test_output_file(capsysbinary, source, tmp_path: Path):
    target = tmp_path / "out.spv"
    rc, out, err = run_binary(capsysbinary, ["-o", str(target), source(KERNEL)])
    assert (rc, out, err) == (0, b"", "")
    data = target.read_bytes()
    assert data.startswith(SPIRV_MAGIC)
    validate(data)


def test_text_dump_to_file(capsys, source, tmp_path: Path):
    target = tmp_path / "out.spvasm"
    rc, out, _ = run_text(capsys, ["-S", "-o", str(target), source(EMPTY)])
    assert (rc, out) == (0, "")
    assert "OpEntryPoint Kernel" in target.read_text(encoding="utf-8")


def test_stdin(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(EMPTY))
    rc, out, _ = run_text(capsys, ["-S"])
    assert rc == 0 and 'OpEntryPoint Kernel %4 "empty"' in out


@pytest.mark.parametrize(
    ("device", "modes"),
    [
        # docs/design.md §B2.1: an empty function gets the largest subgroup size, [S, 1]
        ("pvc", ("32 1 1", "32")),
        ("bmg", ("32 1 1", "32")),
        ("tgl", ("32 1 1", "32")),
    ],
)
def test_execution_modes_per_device(capsys, source, device, modes):
    rc, out, err = run_text(capsys, ["-S", "-d", device, source(EMPTY)])
    assert (rc, err) == (0, "")
    assert "OpEntryPoint Kernel" in out
    assert "OpCapability SubgroupDispatch" in out
    assert execution_modes(out) == modes


def cpu_subgroup_size() -> int:
    """The CPU device runs a subgroup as the 32-bit lanes of one vector register (core info
    vector_register_size, docs/design.md §B2.1): 16 with AVX-512, 8 with AVX2. Read from the ISA the
    CPU runtime targets on this host, so the expectation holds on every host."""
    return host_cpu_core().vector_bytes // 4


def test_execution_modes_cpu_follow_the_vector_width(capsys, source):
    S = cpu_subgroup_size()
    assert S in (4, 8, 16)
    rc, out, err = run_text(capsys, ["-S", "-d", "cpu", source(EMPTY)])
    assert (rc, err) == (0, "")
    assert execution_modes(out) == (f"{S} 1 1", f"{S}")


def test_default_device_is_pvc(capsys, source):
    rc, out, _ = run_text(capsys, ["-S", source(EMPTY)])
    assert rc == 0
    assert execution_modes(out) == ("32 1 1", "32")


def test_function_attributes_are_kept(capsys, source):
    text = "func @k() attributes {subgroup_size=16, work_group_size=[32, 2]} {\n}\n"
    rc, out, _ = run_text(capsys, ["-S", "-d", "tgl", source(text)])
    assert rc == 0
    assert execution_modes(out) == ("32 2 1", "16")


@pytest.mark.parametrize(
    "options",
    [
        ["-O0"],
        ["-O1"],
        ["-O2"],
        ["-O", "0", "-f", "unsafe-fp-math"],
        ["-fno-unsafe-fp-math"],
        ["-Flarge-register-file"],
        ["-F", "large-register-file", "-d", "bmg"],
        ["--device", "tgl", "--output", "-"],
    ],
)
def test_options_accepted(capsysbinary, source, options):
    rc, out, err = run_binary(capsysbinary, [*options, source(KERNEL)])
    assert (rc, err) == (0, "")
    validate(out)


def test_large_register_file_sets_core_feature():
    info = lib_options.core_info_for_device("pvc", ["large-register-file"])
    assert info.core_features & CoreFeature.large_register_file
    assert info.register_space == 16384
    assert lib_options.core_info_for_device("pvc").register_space == 8192


@pytest.mark.parametrize(
    ("device", "space", "width", "sgs"), [("cpu-avx512", 2048, 64, 16), ("cpu-avx2", 512, 32, 8)]
)
def test_pinned_cpu(device, space, width, sgs):
    """-d cpu-avx512 / cpu-avx2 pin the ISA's register file whatever the host."""
    info = lib_options.core_info_for_device(device)
    assert info.subgroup_sizes == (4, 8, 16, 32, 64)
    assert info.register_space == space
    assert info.max_work_group_size(64) >= 64
    # like the OpenCL CPU device's core info: a subgroup fills one vector register
    assert info.vector_register_size == width
    assert suggest_subgroup_size([], info) == sgs


def test_cpu_without_device_is_the_host(monkeypatch):
    """-d cpu without an OpenCL CPU device: the same register file, from the host's ISA."""
    monkeypatch.setattr(lib_options, "_opencl_cpu_core_info", lambda: None)
    info = lib_options.core_info_for_device("cpu")
    assert info.cpu == host_cpu_core()
    assert info.register_space == info.cpu.vector_bytes * info.cpu.registers
    assert info.vector_register_size // 4 == cpu_subgroup_size()


GEMM_F16_ATOMIC = """\
func @k(%A: memref<f32x32x16>, %B: memref<f32x16x24>, %C: memref<f32x32x24>, %h: memref<f16x4>) {
    %one = constant 1.0 : f32
    gemm.n.n %one, %A, %B, %one, %C
    %x = constant 1.0 : f16
    %c0 = constant 0 : index
    %0 = atomic_add %x, %h[%c0] : f16
}
"""


def test_cpu_is_the_same_with_or_without_device(monkeypatch, capsysbinary, source):
    """-d cpu is deterministic: the OpenCL CPU device's core info and the one made without a
    device agree (register file, subgroup sizes, SPIR-V features: no half atomic add, which the
    CPU runtime cannot link), so both give the same binary, or the same error."""
    with_device = lib_options._opencl_cpu_core_info()
    if with_device is None:
        pytest.skip("no OpenCL CPU device")
    gemm = source(GEMM_F16_ATOMIC.replace("f16", "f32"), "gemm.ir")
    f16 = source(GEMM_F16_ATOMIC, "f16.ir")
    results = [run_binary(capsysbinary, ["-d", "cpu", p]) for p in (gemm, f16)]
    monkeypatch.setattr(lib_options, "_opencl_cpu_core_info", lambda: None)
    without = lib_options.core_info_for_device("cpu")
    assert without.name != with_device.name
    without.name = with_device.name
    assert without == with_device
    assert [run_binary(capsysbinary, ["-d", "cpu", p]) for p in (gemm, f16)] == results
    assert results[0][0] == 0 and results[0][1][:4] == b"\x03\x02\x23\x07"
    assert results[1][0] == 1 and f"{f16}:6.10" in results[1][2]
    assert "atomic_float16_add_global, which the target lacks" in results[1][2]


def test_syntax_error_has_location(capsys, source):
    path = source(SYNTAX_ERROR, "bad.ir")
    rc, out, err = run_text(capsys, ["-S", path])
    assert rc == 1 and out == ""
    assert f"{path}:2.14" in err
    assert "undefined identifier %y" in err and "Traceback" not in err


def test_missing_feature_is_an_error(capsys, source):
    """tgl has no float64 (docs/design.md §B7.2)."""
    path = source("func @k(%a: memref<f64x4>) {\n}\n", "f64.ir")
    rc, _, err = run_text(capsys, ["-d", "tgl", "-S", path])
    assert rc == 1
    assert f"{path}:1.1" in err and "float64" in err


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["-f", "fast-everything"], "unknown flag 'fast-everything'"),
        (["-F", "huge-register-file"], "unknown core feature 'huge-register-file'"),
    ],
)
def test_bad_options(capsys, source, options, message):
    rc, _, err = run_text(capsys, [*options, source(EMPTY)])
    assert rc == 1 and message in err


def test_missing_file(capsys, tmp_path: Path):
    rc, _, err = run_text(capsys, [str(tmp_path / "nope.ir")])
    assert rc == 1 and err.startswith("tinytc: ") and "nope.ir" in err


def test_bad_device_is_a_usage_error(capsys, source):
    with pytest.raises(SystemExit) as exc:
        tinytc_cli.main(["-d", "a100", source(EMPTY)])
    assert exc.value.code == 2


def test_console_script_subprocess(source, tmp_path: Path):
    """The installed `tinytc` script: binary on stdout, error exit status 1."""
    exe = Path(sys.executable).parent / "tinytc"
    if not exe.exists():
        pytest.skip("console script not installed (pip install -e .)")
    good = subprocess.run([str(exe), source(KERNEL)], capture_output=True, timeout=120)
    assert good.returncode == 0, good.stderr.decode()
    assert good.stdout.startswith(SPIRV_MAGIC)
    validate(good.stdout)
    path = source(SYNTAX_ERROR, "bad.ir")
    bad = subprocess.run([str(exe), "-S", path], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1
    assert f"{path}:2.14" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.parametrize(("device", "sizes"), [("pvc", "32, [32,1]"), ("cpu", None)])
def test_opt_device(capsys, source, device, sizes):
    if sizes is None:
        S = cpu_subgroup_size()
        sizes = f"{S}, [{S},1]"
    rc = opt_cli.main(["-d", device, "-p", "work-group-size", source(EMPTY)])
    out, _ = capsys.readouterr()
    sgs, wgs = sizes.split(", ", 1)
    assert rc == 0
    assert f"subgroup_size={sgs}, work_group_size={wgs}" in out
