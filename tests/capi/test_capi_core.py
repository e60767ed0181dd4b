"""The core C API through libtinytc.so, from C programs (tests/capi/c/*.c) run without any Python
environment variables."""

from __future__ import annotations

import shutil
import subprocess

import pytest


def spirv_val(path) -> None:
    if shutil.which("spirv-val") is None:
        pytest.skip("spirv-val not installed")
    result = subprocess.run(["spirv-val", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_parse_compile_and_validate(compile_c, tmp_path):
    spv = tmp_path / "copy.spv"
    out = compile_c("core_compile.c").run(str(spv)).stdout
    data = spv.read_bytes()
    assert data[:4] == bytes.fromhex("03022307")  # SPIR-V magic, little endian
    assert out == f"spirv {len(data)} bytes\n"
    assert len(data) > 200 and len(data) % 4 == 0
    spirv_val(spv)


def test_error_paths_and_reporter(compile_c):
    out = compile_c("errors.c").run().stdout
    assert "report 1: <memory>:2.18-19: undefined identifier %c" in out
    assert "report 2: kernel.ir:2.5-8: custom problem" in out
    assert out.endswith("ok\n")


def test_reference_counts(compile_c):
    assert compile_c("refcount.c").run().stdout == "ok\n"


def test_strings_core_info_and_passes(compile_c):
    out = compile_c("info_strings.c").run().stdout
    passes = out.split("passes:\n", 1)[1].split()
    assert "check-ir" in passes and "work-group-size" in passes


def test_library_starts_without_python_environment(compile_c):
    """A program whose first call is into libtinytc finds Python and its packages by itself."""
    src = """
#include <tinytc/tinytc.h>
#include <stdio.h>
int main(void) {
    tinytc_compiler_context_t ctx;
    tinytc_status_t s = tinytc_compiler_context_create(&ctx);
    printf("%s\\n", tinytc_status_to_string(s));
    return s != tinytc_status_success || tinytc_compiler_context_release(ctx);
}
"""
    result = compile_c(src).run()
    assert result.stdout == "Success\n"
    assert result.stderr == ""


def test_dump_goes_to_stderr(compile_c):
    src = """
#include <tinytc/tinytc.h>
static const char text[] = "func @f(%a: f32) {\\n}\\n";
int main(void) {
    tinytc_prog_t p;
    if (tinytc_parse_string(&p, sizeof(text), text, NULL)) return 1;
    if (tinytc_prog_dump(p)) return 2;
    return tinytc_prog_release(p);
}
"""
    assert compile_c(src).run().stderr == "func @f(%a: f32) {\n}\n"


def test_parse_stdin_and_file(compile_c, tmp_path):
    ir = tmp_path / "k.ir"
    ir.write_text("func @k(%a: i32) {\n}\n")
    src = """
#include <tinytc/tinytc.h>
#include <stdio.h>
int main(int argc, char **argv) {
    tinytc_prog_t p, q;
    char *s;
    (void)argc;
    if (tinytc_parse_stdin(&p, NULL)) return 1;
    if (tinytc_parse_file(&q, argv[1], NULL)) return 2;
    if (tinytc_prog_print_to_string(p, &s)) return 3;
    printf("%s", s);
    tinytc_string_destroy(s);
    if (tinytc_prog_print_to_file(q, argv[2])) return 4;
    tinytc_prog_release(p);
    return tinytc_prog_release(q);
}
"""
    copy = tmp_path / "copy.ir"
    result = compile_c(src).run(str(ir), str(copy), input="func @s(%b: f64) {\n}\n")
    assert result.stdout == "func @s(%b: f64) {\n}\n"
    assert copy.read_text() == "func @k(%a: i32) {\n}\n"


def test_every_listed_pass_runs(compile_c):
    src = """
#include <tinytc/tinytc.h>
#include <stdio.h>
static const char text[] =
    "func @g(%A: memref<f32x32x8>, %B: memref<f32x8x16>, %C: memref<f32x32x16>) {\\n"
    "    %one = constant 1.0 : f32\\n"
    "    %zero = constant 0.0 : f32\\n"
    "    gemm.n.n %one, %A, %B, %zero, %C\\n"
    "}\\n";
int main(void) {
    size_t n, i;
    char const *const *names;
    tinytc_core_info_t info;
    if (tinytc_list_function_passes(&n, &names)) return 1;
    if (tinytc_core_info_intel_create_from_name(&info, "pvc")) return 2;
    for (i = 0; i < n; ++i) {
        tinytc_prog_t p;
        if (tinytc_parse_string(&p, sizeof(text), text, NULL)) return 3;
        printf("%s %d\\n", names[i], (int)tinytc_run_function_pass(names[i], p, info));
        tinytc_prog_release(p);
    }
    return tinytc_core_info_release(info);
}
"""
    out = compile_c(src).run().stdout
    statuses = dict(line.split() for line in out.splitlines())
    assert statuses and all(s == "0" for s in statuses.values()), statuses
