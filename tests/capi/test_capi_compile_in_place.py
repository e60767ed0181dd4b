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


FAILING = r"""
#include "check.h"

#include <stdlib.h>

static char const source[] =
    "func @k(%a: memref<f32x8>) attributes{subgroup_size=64} {\n"
    "    %c = constant 1.0 : f32\n"
    "}\n";

int main(void) {
    tinytc_compiler_context_t ctx;
    tinytc_prog_t prg;
    tinytc_core_info_t pvc;
    tinytc_binary_t bin;
    char *str;
    int round;
    OK(tinytc_compiler_context_create(&ctx));
    OK(tinytc_parse_string(&prg, sizeof(source), source, ctx));
    OK(tinytc_core_info_intel_create_from_arch(&pvc, tinytc_intel_gpu_architecture_pvc));
    for (round = 0; round < 2; ++round) { /* the handle stays usable: the same error again */
        EXPECT_STATUS(tinytc_prog_compile_to_spirv_and_assemble(&bin, prg, pvc),
                      tinytc_status_unsupported_subgroup_size);
    }
    OK(tinytc_prog_print_to_string(prg, &str));
    fputs(str, stdout);
    tinytc_string_destroy(str);
    /* the program now given out: compiled in place, as in tinytc */
    EXPECT_STATUS(tinytc_prog_compile_to_spirv_and_assemble(&bin, prg, pvc),
                  tinytc_status_unsupported_subgroup_size);
    OK(tinytc_run_function_pass("constant-propagation", prg, pvc));
    OK(tinytc_core_info_release(pvc));
    OK(tinytc_prog_release(prg));
    OK(tinytc_compiler_context_release(ctx));
    puts("ok");
    return 0;
}
"""


def test_a_failed_compile_leaves_the_parse(compile_c, cache) -> None:
    """A compile that fails (PVC has no subgroup size 64) records nothing: compiled again, the
    handle fails the same way, and it prints the parse of its text; compiled once more, the
    program it gave out, it fails the same way and still takes a pass."""
    text = "func @k(%a: memref<f32x8>) attributes{subgroup_size=64} {\n"
    text += "    %c = constant 1.0 : f32\n}\n"
    expected = print_prog(parse(text, CompilerContext()))
    assert "constant" in expected
    assert compile_c(FAILING).run(env=cache).stdout == expected + "ok\n"


def test_a_changed_core_info_gets_a_new_snapshot() -> None:
    """The snapshot a compile of a parsed program records (capi/parsed.py `_snapshot`) is reused
    only while the core info is unchanged: a host that compiles, changes its core info's
    subgroup sizes or default alignment and compiles again gets the new values recorded."""
    from tinytc_py.capi.parsed import _snapshot
    from tinytc_py.options import core_info_for_device

    info = core_info_for_device("pvc")
    first = _snapshot(info)
    assert _snapshot(info) is first
    info.subgroup_sizes = [32]
    second = _snapshot(info)
    assert list(second.subgroup_sizes) == [32]
    assert list(first.subgroup_sizes) != [32]
    info.default_alignment = 8
    assert _snapshot(info).default_alignment == 8
    assert _snapshot(core_info_for_device("pvc")).default_alignment != 8
