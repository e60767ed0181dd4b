"""The kernel cache behind the OpenCL C API (tests/capi/c/kernel_cache.c): a second run of a C
program finds both the SPIR-V and the device binary of its kernel bundle in the cache, and the
context flag tinytc_optflag_kernel_cache = 0 keeps the program out of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tinytc_py.kernel_cache import stats, store


@pytest.fixture
def cache_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cl_env) -> dict[str, str]:
    monkeypatch.setenv("TINYTC_CACHE_DIR", str(tmp_path))  # for stats.totals() here
    return {**cl_env, "TINYTC_CACHE_DIR": str(tmp_path)}


def kinds() -> list[str]:
    return sorted(e.name.split("-")[0] for e in store.entries())


def test_second_run_hits_both_levels(compile_c, cache_env) -> None:
    prog = compile_c("kernel_cache.c", libs=("tinytc", "tinytc_cl", "OpenCL"))
    assert prog.run(env=cache_env).stdout == "ok\n"
    assert kinds() == ["native", "spirv"]
    first = stats.totals()
    assert (first["spirv_misses"], first["native_misses"]) == (1, 1)
    assert prog.run(env=cache_env).stdout == "ok\n"
    second = stats.totals()
    assert (second["spirv_hits"], second["native_hits"]) == (1, 1)
    assert (second["spirv_misses"], second["native_misses"]) == (1, 1)


def test_context_flag_off_caches_nothing(compile_c, cache_env) -> None:
    prog = compile_c("kernel_cache.c", libs=("tinytc", "tinytc_cl", "OpenCL"))
    assert prog.run("off", env=cache_env).stdout == "ok\n"
    assert kinds() == []
    assert stats.totals() == {}
