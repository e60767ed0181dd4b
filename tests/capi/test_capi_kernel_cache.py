"""The kernel cache behind the OpenCL and Level Zero C APIs (tests/capi/c/kernel_cache.c and
kernel_cache_ze.c, Level Zero on our CPU driver): a second run of a C program finds both the
SPIR-V and the device binary of its kernel bundle in the cache, and the context flag
tinytc_optflag_kernel_cache = 0 keeps the program out of it. Text parsed and compiled again in
one process (tests/capi/c/compile_memo.c) is answered from memory. A C host never finalises the
embedded interpreter, so no Python `atexit` handler runs there: its entries are written behind
by a native thread of the library (capi/helpers.c, kernel_cache/writer.py), which the exit and
a fork wait for, and its counts are saved at its exit, by the C `atexit` hook libtinytc installs
(kernel_cache/stats.py): a program that returns from main leaves them complete, counted (each
once, also where the host forks right after its misses: the fork saves first and the child
starts without the parent's counts), unlocked and without temporary files, also where several
hosts write at once or another process clears the folder meanwhile
(tests/capi/c/cache_writers.c). The native writer itself (tests/capi/c/writer_thread.c, with
file operations slowed down or failed by tests/capi/c/file_hooks.c): a named thread with the
signals blocked, which survives the library's dlclose, makes a removed cache again, and whose
failure warns once; and a device binary is on disk before its build lock goes."""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tinytc_py.kernel_cache import stats, store

CPU_DRIVER = "libze_tinytc_cpu.so"
PROGRAMS = {
    "opencl": ("kernel_cache.c", ("tinytc", "tinytc_cl", "OpenCL")),
    "level_zero": ("kernel_cache_ze.c", ("tinytc", "tinytc_ze", "ze_loader")),
}


@pytest.fixture(params=sorted(PROGRAMS))
def runtime(request) -> str:
    return request.param


@pytest.fixture
def cache_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cl_env, capi_libs, runtime
) -> dict[str, str]:
    monkeypatch.setenv("TINYTC_CACHE_DIR", str(tmp_path))  # for stats.totals() here
    env = {**cl_env, "TINYTC_CACHE_DIR": str(tmp_path)}
    if runtime == "level_zero":
        env["ZE_ENABLE_ALT_DRIVERS"] = str(capi_libs / CPU_DRIVER)
    return env


def kinds() -> list[str]:
    return sorted(e.name.split("-")[0] for e in store.entries())


def test_second_run_hits_both_levels(compile_c, cache_env, runtime) -> None:
    source, libs = PROGRAMS[runtime]
    prog = compile_c(source, libs=libs)
    assert prog.run(env=cache_env).stdout == "ok\n"
    assert kinds() == ["native", "spirv"]
    assert all(store.get(e.name) is not None for e in store.entries())  # complete
    for folder in (store.folder(), store.folder().parent):  # the locks are in the latter
        assert not [p for p in folder.iterdir() if p.name.endswith(store.LOCK_SUFFIX)]
        assert not list(folder.glob(".tmp-*"))
    first = stats.totals()
    assert (first["spirv_misses"], first["native_misses"]) == (1, 1)
    assert prog.run(env=cache_env).stdout == "ok\n"
    second = stats.totals()
    assert (second["spirv_hits"], second["native_hits"]) == (1, 1)
    assert (second["spirv_misses"], second["native_misses"]) == (1, 1)


def test_context_flag_off_caches_nothing(compile_c, cache_env, runtime) -> None:
    source, libs = PROGRAMS[runtime]
    prog = compile_c(source, libs=libs)
    assert prog.run("off", env=cache_env).stdout == "ok\n"
    assert kinds() == []
    assert stats.totals() == {}


def test_text_compiled_again_is_the_same_binary_and_changes_miss(
    compile_c, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tests/capi/c/compile_memo.c checks which compiles give the very same binary; here the
    folder's statistics count the compiles: the first, a program printed (then keyed by its
    printed text), one with a function added, two core infos changed in place, a flag and an
    optimisation level set after parsing. The hits read nothing from the folder."""
    monkeypatch.setenv("TINYTC_CACHE_DIR", str(tmp_path))
    prog = compile_c("compile_memo.c")
    assert prog.run(env={"TINYTC_CACHE_DIR": str(tmp_path)}).stdout == "ok\n"
    totals = stats.totals()
    assert (totals["compiles"], totals["spirv_misses"]) == (7, 7)
    assert "spirv_hits" not in totals


def test_a_host_that_forks_after_misses_hangs_not_and_leaves_every_entry(
    compile_c, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A C host that forks right after its misses: the child inherits the embedded
    interpreter and compiles at once, which must not hang on anything the parent's miss
    left held, and neither process loses an entry. tests/capi/c/fork_after_miss.c: in each
    round the parent misses, forks, and the child misses another text; then every entry is
    complete and counted, no lock is left, and a second run finds them all."""
    monkeypatch.setenv("TINYTC_CACHE_DIR", str(tmp_path))
    env = {"TINYTC_CACHE_DIR": str(tmp_path)}
    rounds = 12
    prog = compile_c("fork_after_miss.c")
    assert prog.run(str(rounds), env=env).stdout == "ok\n"
    entries = store.entries()
    assert len(entries) == 2 * rounds
    assert all(store.get(e.name) is not None for e in entries)  # complete
    for folder in (store.folder(), store.folder().parent):
        assert not [p for p in folder.iterdir() if p.name.endswith(store.LOCK_SUFFIX)]
        assert not list(folder.glob(".tmp-*"))
    first = stats.totals()
    assert (first["compiles"], first["spirv_misses"]) == (2 * rounds, 2 * rounds)
    assert prog.run(str(rounds), env=env).stdout == "ok\n"
    second = stats.totals()
    assert second["spirv_hits"] == 2 * rounds
    assert second["compiles"] == 2 * rounds


@pytest.mark.parametrize("mode", ["worker-init", "fresh-thread", "busy"])
def test_a_fork_from_another_thread_leaves_a_child_that_compiles_and_saves(
    compile_c, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """tests/capi/c/fork_from_thread.c: a C host forks from a thread other than the one that
    started the embedded interpreter (worker-init: a worker made the first call; fresh-thread:
    a thread that never called the library forks), or while another thread is inside the
    library (busy: its lock must not stay held in the child). Each child compiles a new text
    and leaves through _exit(): it must neither abort (the child keeps the forking thread's
    Python thread state) nor hang (the run has a timeout), and its counts must be saved
    without an exit hook, so the totals match the entries."""
    monkeypatch.setenv("TINYTC_CACHE_DIR", str(tmp_path))
    rounds = 4
    prog = compile_c("fork_from_thread.c", libs=("tinytc", "pthread"))
    result = prog.run(mode, str(rounds), env={"TINYTC_CACHE_DIR": str(tmp_path)})
    assert result.stdout == "ok\n", result.stderr
    entries = store.entries()
    assert all(store.get(e.name) is not None for e in entries)  # complete
    totals = stats.totals()
    assert totals["compiles"] == totals["spirv_misses"] == len(entries)
    assert len(entries) >= 1 + rounds  # the first call's and each child's


def test_hosts_writing_behind_at_once_leave_every_entry_whole_and_counted(
    compile_c, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three C hosts at once (tests/capi/c/cache_writers.c) miss the same texts, and one of their
    own each, in one folder; their libraries write the entries behind. After they exit every
    entry is in place and complete, no temporary file is left, each process counted a miss or
    a hit for each of its texts and its bytes, and a later run finds every entry."""
    monkeypatch.setenv("TINYTC_CACHE_DIR", str(tmp_path))
    env = {"TINYTC_CACHE_DIR": str(tmp_path)}
    n = 6
    prog = compile_c("cache_writers.c")
    with ThreadPoolExecutor(3) as pool:
        results = list(pool.map(lambda who: prog.run(who, str(n), env=env), ["a", "b", "c"]))
    assert [(r.stdout, r.stderr) for r in results] == [("ok\n", "")] * 3
    entries = store.entries()
    assert len(entries) == n + 3
    assert all(store.get(e.name) is not None for e in entries)  # complete
    assert not list(store.folder().glob(".tmp-*"))
    totals = stats.totals()
    assert totals["compiles"] == totals["spirv_misses"] >= n + 3
    assert totals["spirv_misses"] + totals.get("spirv_hits", 0) == 3 * (n + 1)
    assert totals["bytes_written"] >= sum(e.size for e in entries)
    assert prog.run("a", str(n), env=env).stdout == "ok\n"
    again = stats.totals()
    assert again["spirv_hits"] == totals.get("spirv_hits", 0) + n + 1
    assert again["compiles"] == totals["compiles"]


def test_a_host_whose_folder_is_cleared_while_it_writes_behind_goes_on(
    compile_c, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tests/capi/c/cache_writers.c with "clear": after each compile the host empties and
    removes the kernels folder, as another process's `tinytc-cache clear` would, while the
    entry it just missed may still be queued for writing. The library makes the folder again
    and goes on writing without a warning: the last compile's entry is there, complete, and
    no temporary file is left."""
    monkeypatch.setenv("TINYTC_CACHE_DIR", str(tmp_path))
    prog = compile_c("cache_writers.c")
    result = prog.run("solo", "5", "clear", env={"TINYTC_CACHE_DIR": str(tmp_path)})
    assert (result.stdout, result.stderr) == ("ok\n", "")
    entries = store.entries()
    assert len(entries) >= 1
    assert all(store.get(e.name) is not None for e in entries)
    assert not list(store.folder().glob(".tmp-*"))


@pytest.fixture
def file_hooks(tmp_path: Path) -> Path:
    """tests/capi/c/file_hooks.c built as an LD_PRELOAD library."""
    out = tmp_path / "libfile_hooks.so"
    cmd = ["gcc", "-shared", "-fPIC", "-Wall", "-Werror", "-o", str(out)]
    cmd += [str(Path(__file__).parent / "c" / "file_hooks.c"), "-ldl"]
    result = subprocess.run(cmd, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return out


@pytest.mark.parametrize("runtime", ["opencl"])
def test_a_device_binary_is_in_place_before_its_build_lock_is_released(
    compile_c, cache_env, file_hooks
) -> None:
    """Two OpenCL hosts (tests/capi/c/kernel_cache.c) start at once on an empty folder, with
    every rename of a device binary's entry slowed down (tests/capi/c/file_hooks.c): the one
    that waits for the other's build lock must find the entry when it gets the lock, so the
    device JIT runs once. (When the entry was left to the native writer, the lock went before
    the file was there and the waiting host built it again.)"""
    source, libs = PROGRAMS["opencl"]
    prog = compile_c(source, libs=libs)
    env = {**cache_env, "LD_PRELOAD": str(file_hooks), "HOOK_SLOW_RENAME": "/kernels/native-"}
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda _: prog.run(env=env), range(2)))
    assert [(r.stdout, r.stderr) for r in results] == [("ok\n", "")] * 2
    totals = stats.totals()
    assert totals["device_builds"] == 1
    assert totals["native_misses"] == 1
    assert kinds() == ["native", "spirv"]


@pytest.fixture
def writer_thread(compile_c, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capi_libs):
    """tests/capi/c/writer_thread.c run with a cache folder of its own: run(mode, round,
    **env)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("TINYTC_CACHE_DIR", str(cache))
    prog = compile_c("writer_thread.c", libs=("dl", "pthread"))

    def run(mode: str, round: int = 0, check: bool = True, **env: str):
        return prog.run(
            str(capi_libs / "libtinytc.so"),
            mode,
            str(round),
            check=check,
            env={"TINYTC_CACHE_DIR": str(cache), **env},
        )

    return run


def test_the_native_writer_runs_named_with_signals_blocked(writer_thread) -> None:
    """After a miss a C host has the thread "tinytc-writer", which blocks the signals the host
    does not (its handlers never run on the library's thread), and its entry is written."""
    result = writer_thread("thread")
    assert (result.stdout, result.stderr) == ("ok\n", "")
    assert kinds() == ["spirv"]
    assert all(store.get(e.name) is not None for e in store.entries())


def test_a_host_that_unloads_the_library_right_after_a_miss_exits_cleanly(
    writer_thread,
) -> None:
    """dlopen, a miss (the writer thread starts), dlclose at once, fork, exit: the library is
    never unmapped (-z nodelete), so its writer thread, which goes on to wait for work after
    the unload's exit hook waited for its write, cannot crash the process. (Unmapped, it did,
    with SIGSEGV, in about 40 % of such runs here.)"""
    for round in range(12):
        result = writer_thread("dlclose", round, check=False)
        assert (result.returncode, result.stdout, result.stderr) == (0, "ok\n", "")
    assert len(store.entries()) == 12


def test_a_cache_removed_whole_while_a_write_is_pending_is_made_again(
    writer_thread, file_hooks
) -> None:
    """The whole cache folder is removed while the native writer's write of an entry waits
    (its temporary file's creation slowed down): the writer makes the folder and its parents
    again, private, and writes the entry, without a warning."""
    result = writer_thread(
        "rmroot", LD_PRELOAD=str(file_hooks), HOOK_SLOW_MKOSTEMP="/kernels/.tmp-"
    )
    assert (result.stdout, result.stderr) == ("ok\n", "")
    assert kinds() == ["spirv"]
    assert all(store.get(e.name) is not None for e in store.entries())
    assert store.folder().stat().st_mode & 0o777 == 0o700


def test_a_failed_native_write_warns_once_and_turns_writing_off(writer_thread, file_hooks) -> None:
    """Every native write fails (its temporary file: EDQUOT, tests/capi/c/file_hooks.c; only
    the native writer makes its temporary files with mkostemp): the host's next lookup
    reports it with one warning naming the folder, which is then no longer written to, and
    the compiles go on. The warning names no module of the library as its place."""
    result = writer_thread("many", LD_PRELOAD=str(file_hooks), HOOK_FAIL_MKOSTEMP="/kernels/.tmp-")
    assert result.stdout == "ok\n"
    warnings = [line for line in result.stderr.splitlines() if "cannot write to" in line]
    assert len(warnings) == 1, result.stderr
    assert str(store.folder()) in warnings[0] and "kernels are not cached" in warnings[0]
    assert "tinytc_py" not in result.stderr
    assert kinds() == []
    totals = stats.totals()
    assert totals["spirv_misses"] == 3
    assert totals["bytes_written"] > 0  # the first entry's, reserved before it was queued
