"""A SPIR-V miss's entry is written behind (kernel_cache/writer.py): the compile returns first
(without a build lock: a process that misses meanwhile compiles too), this process's reads see
its own writes, and a Python process that exits right after a miss, a forked child and a C host
all leave the complete entry, its statistics and no lock behind."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tinytc_py.compiler import binary_of
from tinytc_py.ir.context import CompilerContext
from tinytc_py.kernel_cache import stats, store, writer
from tinytc_py.kernel_cache.codec import decode
from tinytc_py.kernel_cache.keys import spirv_key
from tinytc_py.target.core_info import CoreInfo

from .test_spirv_cache import assert_same, fresh_compile, gemm


def key() -> str:
    return spirv_key(gemm(16), CoreInfo.default(), CompilerContext())


def locks_left(cache: Path) -> list[str]:
    """Build locks and their claims, where either kind of folder keeps them (locks.lock_path)."""
    return [
        p.name
        for d in (cache, cache.parent)
        if d.is_dir()
        for p in d.iterdir()
        if p.name.endswith(store.LOCK_SUFFIX) or p.name.startswith(".tmp-")
    ]


@pytest.fixture
def held_writes(monkeypatch: pytest.MonkeyPatch):
    """Writes behind that wait for the returned event (the test's stand-in for a slow disk)."""
    if not writer._behind:
        pytest.skip("writes go behind only in a process Python's executable started")
    go = threading.Event()
    real = store.put

    def slow_put(*args, **kwargs):
        assert go.wait(60)
        return real(*args, **kwargs)

    monkeypatch.setattr(store, "put", slow_put)
    yield go
    go.set()
    writer.wait()


def test_miss_returns_before_its_entry_is_written_and_takes_no_lock(
    cache: Path, held_writes: threading.Event
) -> None:
    binary = binary_of(gemm(16), CoreInfo.default())
    assert_same(binary, fresh_compile(gemm(16)))
    # returned while the write waits: no entry yet, and no build lock (SPIR-V takes none)
    assert not (cache / (key() + store.SUFFIX)).exists()
    assert locks_left(cache) == []
    held_writes.set()
    writer.wait()
    assert locks_left(cache) == []
    assert_same(decode(store.get(key())), binary)
    assert stats.totals()["compiles"] == 1


def test_own_reads_wait_for_the_writes_behind(cache: Path, held_writes: threading.Event) -> None:
    binary_of(gemm(16), CoreInfo.default())
    threading.Timer(0.2, held_writes.set).start()
    counts = stats.process()  # reads the process counters at once
    assert counts["compiles"] == 1 and counts["bytes_written"] > 0
    assert_same(decode(store.get(key())), fresh_compile(gemm(16)))


CHILD = """
import os, sys
from tinytc_py.compiler import binary_of
from tinytc_py.kernel_cache import writer
from tinytc_py.target.core_info import CoreInfo
print(writer._behind, flush=True)
binary_of(sys.argv[1], CoreInfo.default())
if sys.argv[2] == "fork":
    pid = os.fork()
    if pid == 0:  # as multiprocessing's children: no atexit
        binary_of(sys.argv[1].replace("gemm_16", "gemm_forked"), CoreInfo.default())
        os._exit(0)
    os.waitpid(pid, 0)
"""


@pytest.mark.parametrize("how", ["exit", "fork"])
def test_a_process_that_exits_right_after_a_miss_leaves_the_entry(cache: Path, how: str) -> None:
    env = {**os.environ, "TINYTC_CACHE_DIR": str(cache.parent)}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, gemm(16), how],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out == "True\n"  # this child's writes went behind
    names = sorted(p.name for p in cache.iterdir())
    misses = 2 if how == "fork" else 1
    assert [n for n in names if n.endswith(store.SUFFIX)] == sorted(
        n for n in names if n.startswith("spirv-")
    )
    assert len([n for n in names if n.endswith(store.SUFFIX)]) == misses
    assert not [n for n in names if n.endswith(store.LOCK_SUFFIX) or n.startswith(".tmp-")]
    assert locks_left(cache) == []
    assert_same(decode(store.get(key())), fresh_compile(gemm(16)))
    totals = stats.totals()
    assert (totals["compiles"], totals["spirv_misses"]) == (misses, misses)
    assert totals["bytes_written"] == sum(
        (cache / n).stat().st_size for n in names if n.endswith(store.SUFFIX)
    )


def test_a_fork_waits_for_the_writes_behind(cache: Path, held_writes: threading.Event) -> None:
    """A fork comes after the pending writes (stats.save_all, the before-fork hook, waits),
    so the child inherits no writer caught holding the statistics file's flock, and
    the parent finds its entry written as soon as the fork returns."""
    binary_of(gemm(16), CoreInfo.default())
    assert not (cache / (key() + store.SUFFIX)).exists()  # the write is held
    threading.Timer(0.2, held_writes.set).start()
    pid = os.fork()
    if pid == 0:
        os._exit(0 if (cache / (key() + store.SUFFIX)).exists() else 1)
    assert (cache / (key() + store.SUFFIX)).exists()
    assert locks_left(cache) == []
    assert os.waitpid(pid, 0)[1] == 0


def test_a_miss_does_not_wait_for_the_write_of_another_entry(
    cache: Path, held_writes: threading.Event
) -> None:
    """The write of gemm(16) is held; a miss of another program compiles and returns (its
    lookup waits only for a write of its own key), and both entries follow once writes go on."""
    binary_of(gemm(16), CoreInfo.default())
    second: list = []
    compile_ = threading.Thread(
        target=lambda: second.append(binary_of(gemm(24), CoreInfo.default()))
    )
    compile_.start()
    compile_.join(30)
    assert second and not compile_.is_alive()
    assert_same(second[0], fresh_compile(gemm(24)))
    assert not list(cache.glob("*" + store.SUFFIX))  # both writes still held
    held_writes.set()
    writer.wait()
    assert len(list(cache.glob("*" + store.SUFFIX))) == 2


FAILING_WRITES = """
import _thread, atexit, sys, time, warnings
ran = []
atexit.register(lambda: print(ran, flush=True))  # runs after the writer's wait (LIFO)
from tinytc_py.kernel_cache import writer
assert writer._behind
warnings.simplefilter("error")  # a failed write's warning raises in the writer

def bad():
    raise OSError("disk full")

writer.submit(bad, "a")
writer.wait()
writer.submit(lambda: ran.append(1), "b")  # after the failure: still written
writer.wait()
print(ran, writer._pending, flush=True)
deadline = time.monotonic() + 60
while writer._writer is not None or _thread._count():  # the idle writer ends
    assert time.monotonic() < deadline, "the writer thread stays"
    time.sleep(0.01)
writer.submit(bad, "c")  # started again on demand
writer.submit(lambda: ran.append(2), "d")
print("exit", flush=True)  # with writes pending: the exit waits for them
"""


def test_writer_survives_a_failed_write_under_warnings_as_errors() -> None:
    """A job that fails while warnings are errors does not end the writer: later jobs run,
    `wait` returns, the idle writer thread ends (no thread left for a fork), a later submit
    starts it again, and the exit waits for the pending writes. Each failure is reported."""
    result = subprocess.run(
        [sys.executable, "-c", FAILING_WRITES],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "[1] 0\nexit\n[1, 2]\n"
    failed = "tinytc kernel cache: a write failed (OSError('disk full'))"
    assert result.stderr.count(failed) == 2, result.stderr


def test_a_miss_interrupted_before_its_write_is_submitted_leaves_no_entry_and_no_lock(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The interrupt comes after the compile, as the entry's write is handed to the writer:
    nothing is left that would keep the next process from compiling it."""
    real = writer.submit

    def interrupted(job, name: str = "", start: bool = True) -> None:
        if name == key():  # the entry's write (not the folder's mark)
            raise KeyboardInterrupt
        real(job, name, start)

    monkeypatch.setattr(writer, "submit", interrupted)
    with pytest.raises(KeyboardInterrupt):
        binary_of(gemm(16), CoreInfo.default())
    assert locks_left(cache) == []
    assert not (cache / (key() + store.SUFFIX)).exists()


def test_synchronous_writes_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The C API's start in a Python that embeds it (capi/build.py) turns writes behind off:
    a job runs in `submit`."""
    monkeypatch.setattr(writer, "_behind", True)
    writer.synchronous()
    assert not writer._behind
    ran: list[int] = []
    writer.submit(lambda: ran.append(threading.get_ident()))
    assert ran == [threading.get_ident()]


EMBEDDING_HOST = r"""
#include <Python.h>
int main(int argc, char **argv) {
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.parse_argv = 0;
    PyConfig_SetBytesArgv(&config, argc, argv);  /* as pybind11's scoped_interpreter(argc, argv) */
    Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    return PyRun_SimpleString(
        "import sys\n"
        "sys.path[:0] = sys.argv[1].split(':')\n"
        "from tinytc_py.kernel_cache import writer\n"
        "print(bool(sys.orig_argv), writer._behind, flush=True)\n");
}
"""


def test_an_embedding_host_that_passes_its_argv_writes_at_once(tmp_path: Path) -> None:
    """A C host that starts Python with its argv never finalises it, so no `atexit` would
    finish writes behind: they must go at once although `sys.orig_argv` is set."""
    import sysconfig

    include = sysconfig.get_paths()["include"]
    if not Path(include, "Python.h").exists():
        pytest.skip("no Python.h to build an embedding host with")
    source = tmp_path / "host.c"
    source.write_text(EMBEDDING_HOST)
    host = tmp_path / "host"
    libdir = sysconfig.get_config_var("LIBDIR")
    version = sysconfig.get_config_var("LDVERSION")
    subprocess.run(
        [
            "gcc",
            str(source),
            f"-I{include}",
            f"-L{libdir}",
            f"-Wl,-rpath,{libdir}",
            f"-lpython{version}",
            *(sysconfig.get_config_var("LIBS") or "").split(),  # those of a static libpython
            *(sysconfig.get_config_var("SYSLIBS") or "").split(),
            # a static libpython's symbols exported, for the extension modules the host imports
            *(sysconfig.get_config_var("LINKFORSHARED") or "").split(),
            "-o",
            str(host),
        ],
        check=True,
    )
    paths = ":".join(p for p in sys.path if p)
    out = subprocess.run(
        [str(host), paths], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    assert out == "True False\n"
