"""The autotuner behind the OpenCL C API (tests/capi/c/autotune.c): with the compiler-context
flag tinytc_optflag_autotune a C program's first compile of a batched GEMM times candidate
blockings on the device and stores the fastest in the tuning cache; a second process's compile
takes the stored choice without timing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tinytc_py import gemm_tuning
from tinytc_py.analysis.gemm_model import GemmProblem, cpu_candidates, subgroup_size
from tinytc_py.cli import cache as cache_cli
from tinytc_py.kernel_cache import stats
from tinytc_py.target.gemm_blocking import GemmBlocking, GemmKey

KEY = GemmKey(32, 24, 16, ("f32",) * 3, (False, False))  # the gemm of autotune.c


@pytest.fixture
def cache_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cl_env) -> dict[str, str]:
    monkeypatch.setenv("TINYTC_CACHE_DIR", str(tmp_path))  # for stats.totals() here
    return {**cl_env, "TINYTC_CACHE_DIR": str(tmp_path)}


def cpu_core_info():
    from tinytc_py.runtime import device, opencl

    info = opencl.core_info_for(device.default_device())
    if info.cpu is None:
        pytest.skip("the autotuner tunes CPU devices only")
    return info


def run(prog, env: dict[str, str], *args: str) -> str:
    out = prog.run(*args, env=env).stdout
    assert out.endswith("ok\n")
    return out


def test_c_autotune_tunes_once_then_reuses_the_choice(
    compile_c, cache_env, tmp_path, capsys
) -> None:
    info = cpu_core_info()
    prog = compile_c("autotune.c", libs=("tinytc", "tinytc_cl", "OpenCL"))
    run(prog, cache_env)  # the C program checks the GEMM against its own reference
    (path,) = (tmp_path / "tuning").glob("*.json")
    table = json.loads(path.read_text())
    sgs = subgroup_size([KEY.M], 4, info.cpu)  # the compile's: the function has this one gemm
    entry = gemm_tuning.table_key(KEY, sgs)
    assert list(table) == [entry]
    problem = GemmProblem(KEY.M, KEY.N, KEY.K, 4, 4, sgs)
    assert GemmBlocking.from_text(table[entry]) in cpu_candidates(problem, info.cpu, 6)
    assert (stats.totals().get("tuning_hits", 0), stats.totals()["tuning_misses"]) == (0, 1)

    # A choice no candidate list holds: the second process can only have it from the file.
    stored = GemmBlocking(1, 3, 2)
    assert stored not in cpu_candidates(problem, info.cpu, 6)
    path.write_text(json.dumps({entry: stored.text()}))
    before = path.stat().st_mtime_ns, path.read_bytes()
    lowered = run(prog, cache_env)
    assert f"coopmatrix<f32x{sgs}x3,matrix_acc>" in lowered
    assert "matrix_acc>" not in lowered.replace(f"f32x{sgs}x3,matrix_acc>", "")
    assert (path.stat().st_mtime_ns, path.read_bytes()) == before
    assert (stats.totals()["tuning_hits"], stats.totals()["tuning_misses"]) == (1, 1)
    assert cache_cli.main(["stats"]) == 0
    assert "tuned GEMM shapes:       1 reused, 1 timed\n" in capsys.readouterr().out


def test_c_without_the_flag_nothing_is_tuned(compile_c, cache_env, tmp_path) -> None:
    cpu_core_info()
    prog = compile_c("autotune.c", libs=("tinytc", "tinytc_cl", "OpenCL"))
    run(prog, cache_env, "off")
    assert not (tmp_path / "tuning").exists()
    assert "tuning_misses" not in stats.totals()
