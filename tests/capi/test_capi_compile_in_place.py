"""A C API compile changes the program in place (tinytc_prog_compile_to_spirv: "runs the default
pipeline on the program (modifies it)"), also for a program parsed from text, which the compile
takes for itself and the handle materializes again when asked (capi/parsed.py): after a compile
the C program (tests/capi/c/compile_in_place.c) sees the program a compile in place leaves,
with the kernel cache off and on."""

from __future__ import annotations

from pathlib import Path

import pytest

from tinytc_py.compiler import assemble_module, compile_to_module
from tinytc_py.ir.context import CompilerContext
from tinytc_py.passes.constant_propagation import ConstantPropagation
from tinytc_py.target.core_info import CoreInfo
from tinytc_py.text.dialect import parse
from tinytc_py.text.printer import print_prog

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = [ROOT / "examples" / "ir" / "matvec_batched.ir", ROOT / "examples" / "ir" / "gemm.ir"]
PVC = 0x030F0000  # tinytc_intel_gpu_architecture_pvc
TGL = 0x03000000  # tinytc_intel_gpu_architecture_tgl


def compiled_in_place(path: Path, info: CoreInfo):
    """A parse of `path` and its binary for `info`, compiled in place (the pipeline always
    runs: no kernel cache), under the C API's default context."""
    prog = parse(path.read_text(), CompilerContext(), str(path))
    return prog, assemble_module(compile_to_module(prog, info)).data


@pytest.fixture(params=["0", "1"], ids=["cache-off", "cache-on"])
def cache(request, monkeypatch, tmp_path) -> dict[str, str]:
    """The C program's kernel-cache switch; with the cache on, its first run fills the
    cache and the second is answered by it."""
    return {"TINYTC_CACHE": request.param, "TINYTC_CACHE_DIR": str(tmp_path / "cache")}


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.name)
def test_print_after_a_compile_shows_the_lowered_program(compile_c, cache, path) -> None:
    prog, _ = compiled_in_place(path, CoreInfo.intel_from_arch(PVC))
    expected = print_prog(prog) + "ok\n"
    assert "subgroup_size=" in expected  # the pipeline's attributes: not the parse
    assert expected != print_prog(parse(path.read_text(), CompilerContext())) + "ok\n"
    exe = compile_c("compile_in_place.c")
    for _ in range(2):  # a miss, then (cache on) a hit
        assert exe.run(str(path), "print", env=cache).stdout == expected


def test_a_pass_after_a_compile_runs_on_the_lowered_program(compile_c, cache) -> None:
    path = PROGRAMS[0]
    info = CoreInfo.intel_from_arch(PVC)
    prog, _ = compiled_in_place(path, info)
    for func in prog.funcs:
        ConstantPropagation().run(func, prog.ctx, None)
    expected = print_prog(prog) + "ok\n"
    exe = compile_c("compile_in_place.c")
    for _ in range(2):
        assert exe.run(str(path), "pass", env=cache).stdout == expected


def test_a_second_compile_compiles_the_lowered_program(compile_c, cache, tmp_path) -> None:
    path = PROGRAMS[1]  # its TGL binary of the PVC lowering differs from that of the parse
    prog, first = compiled_in_place(path, CoreInfo.intel_from_arch(PVC))
    second = assemble_module(compile_to_module(prog, CoreInfo.intel_from_arch(TGL))).data
    assert second != compiled_in_place(path, CoreInfo.intel_from_arch(TGL))[1]
    exe = compile_c("compile_in_place.c")
    out1, out2 = tmp_path / "pvc.spv", tmp_path / "tgl.spv"
    for _ in range(2):
        exe.run(str(path), "twice", str(out1), str(out2), env=cache)
        assert out1.read_bytes() == first
        assert out2.read_bytes() == second
