"""The three libraries: exported symbols equal the API description, SONAMEs and links follow
upstream, and libtinytc_cl / libtinytc_ze link and run next to libtinytc."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from .conftest import ROOT, load_tool

gen = load_tool(ROOT / "tools" / "gen_capi.py", "gen_capi")


def _exported(path) -> list[str]:
    out = subprocess.run(
        ["nm", "-D", "--defined-only", str(path)], capture_output=True, text=True, check=True
    ).stdout
    return sorted(line.split()[-1] for line in out.splitlines() if line.strip())


@pytest.mark.parametrize("library", ["tinytc", "tinytc_cl", "tinytc_ze"])
def test_exported_symbols_equal_the_description(capi_libs, library):
    if shutil.which("nm") is None:
        pytest.skip("nm not installed")
    assert _exported(capi_libs / f"lib{library}.so") == gen.load_api().exported(library)


@pytest.mark.parametrize("library", ["tinytc", "tinytc_cl", "tinytc_ze"])
def test_soname_and_links(capi_libs, library):
    link = capi_libs / f"lib{library}.so"
    assert link.resolve().name == f"lib{library}.so.0.4.0"
    assert (capi_libs / f"lib{library}.so.0").is_symlink()
    dynamic = subprocess.run(
        ["readelf", "-d", str(link)], capture_output=True, text=True, check=True
    ).stdout
    assert f"Library soname: [lib{library}.so.0]" in dynamic
    if library != "tinytc":
        assert "Shared library: [libtinytc.so.0]" in dynamic


def test_interop_libraries_link_and_answer(compile_c):
    """-ltinytc -ltinytc_cl -ltinytc_ze links; the interop functions are reachable (phase 1:
    not_implemented except the pure-C global size helper)."""
    src = """
#include <tinytc/tinytc.h>
#include <tinytc/tinytc_cl.h>
#include <tinytc/tinytc_ze.h>
#include <stdio.h>
int main(void) {
    size_t ng[3] = {10, 2, 1}, ls[3] = {16, 1, 1}, gs[3];
    tinytc_support_level_t level;
    tinytc_compiler_context_t ctx;
    tinytc_cl_get_global_size(ng, ls, gs);
    printf("%zu %zu %zu\\n", gs[0], gs[1], gs[2]);
    printf("%d\\n", tinytc_cl_get_support_level(NULL, &level));
    printf("%d\\n", tinytc_ze_get_support_level(NULL, &level));
    if (tinytc_compiler_context_create(&ctx)) return 1;
    return tinytc_compiler_context_release(ctx);
}
"""
    prog = compile_c(src, libs=("tinytc", "tinytc_cl", "tinytc_ze"))
    lines = prog.run().stdout.splitlines()
    assert lines[0] == "160 2 1"
    assert all(int(s) in (2, 17) for s in lines[1:])  # invalid_arguments or not_implemented
