"""The `tinytc-cache` command without a device: `--dir` on every subcommand, output cut short
by a closed pipe (`tinytc-cache list | head`) ends without a message, `warm` into a folder
the cache may not use, or for a runtime that cannot be loaded, fails with the reason, and
`clear` also removes the shared folders a crash left half prepared (and nothing a link
points to)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tinytc_py.kernel_cache import folder, locks, stats, store, trust


def tinytc_cache(*args: str, stdout: int | None = subprocess.PIPE) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TINYTC_CACHE")}
    return subprocess.run(
        [sys.executable, "-m", "tinytc_py.cli.cache", *args],
        env=env,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
    )


def fill(root: Path, count: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TINYTC_CACHE_DIR", str(root))
    for i in range(count):
        store.put(f"spirv-{i:064x}", b"x" * 100)
    stats.save_all()  # as this process's exit would


def test_dir_on_every_subcommand(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fill(tmp_path, 3, monkeypatch)
    listed = tinytc_cache("list", "--dir", str(tmp_path))
    assert listed.stderr == "" and len(listed.stdout.splitlines()) == 3
    report = json.loads(tinytc_cache("stats", "--dir", str(tmp_path), "--json").stdout)
    assert report["folder"] == str(tmp_path / "kernels")
    assert (report["entries"], report["used"]) == ({"spirv": 3, "native": 0}, True)
    assert report["counters"]["bytes_written"] == sum(
        p.stat().st_size for p in (tmp_path / "kernels").glob("*" + store.SUFFIX)
    )
    cleared = tinytc_cache("clear", "--dir", str(tmp_path))
    assert cleared.stdout == f"removed 3 entries from {tmp_path / 'kernels'}\n"
    assert not list((tmp_path / "kernels").glob("*" + store.SUFFIX))


@pytest.mark.parametrize("command", ["list", "stats"])
def test_closed_pipe_ends_quietly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """The reader is gone before the command writes anything (`| head` that has seen enough)."""
    fill(tmp_path, 50, monkeypatch)
    read, write = os.pipe()
    os.close(read)
    try:
        done = tinytc_cache(command, "--dir", str(tmp_path), stdout=write)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (0, "")


def test_warm_into_a_folder_others_may_write_fails_with_the_reason(tmp_path: Path) -> None:
    program = tmp_path / "p.ir"
    program.write_text("func @f() {}\n")
    root = tmp_path / "cache"
    root.mkdir(mode=0o777)
    root.chmod(0o777)
    done = tinytc_cache("warm", str(program), "--dir", str(root))
    assert done.returncode == 1
    assert done.stderr.startswith(f"tinytc-cache warm: {program}: kernel cache: {root} is ")
    assert "writable by everyone (mode 777)" in done.stderr and "chmod go-w" in done.stderr
    assert os.listdir(root) == []


def test_warm_for_a_runtime_that_cannot_be_loaded_fails_with_the_reason(tmp_path: Path) -> None:
    """pyopencl missing (made unimportable in the child)."""
    program = tmp_path / "p.ir"
    program.write_text("func @f() {}\n")
    without_pyopencl = (
        "import sys; sys.modules['pyopencl'] = None; from tinytc_py.cli.cache import main; "
        "sys.exit(main(sys.argv[1:]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", without_pyopencl, "warm", str(program), "--dir", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert (
        done.stderr.startswith("tinytc-cache warm: runtime opencl: ") and "pyopencl" in done.stderr
    )
    assert not (tmp_path / "kernels").exists()


def test_clear_removes_a_shared_folder_left_half_prepared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process that died while preparing a shared kernels/ folder (folder._make) leaves
    `.tmp-kernels-<hex>` with its statistics file in the cache folder; `clear` removes it. A
    link of that name is not followed: what it points to stays."""
    fill(tmp_path, 2, monkeypatch)
    left = tmp_path / ".tmp-kernels-0123456789ab"
    left.mkdir()
    (left / stats.FILE).write_text('{"epoch": 1, "from_empty": 1}')
    (left / ".tmp-stats.json-a1b2c3d4e5f6").write_text("")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep").write_text("mine")
    (tmp_path / ".tmp-kernels-ba9876543210").symlink_to(elsewhere)
    other = tmp_path / ".tmp-kernels-not-ours"  # not a name _make gives
    other.mkdir()
    cleared = tinytc_cache("clear", "--dir", str(tmp_path))
    assert cleared.returncode == 0, cleared.stderr
    assert cleared.stdout == f"removed 2 entries from {tmp_path / 'kernels'}\n"
    assert not left.exists()
    assert (elsewhere / "keep").read_text() == "mine"
    assert other.is_dir()


def test_a_shared_folder_whose_preparation_a_clear_removed_is_prepared_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`clear` removes a folder being prepared right now: its maker prepares another, and the
    folder that takes the name carries the begun-empty mark."""
    root = tmp_path / "project"
    root.mkdir()
    root.chmod(0o2770)
    real = folder._start_empty
    cleared: list[int] = []

    def cleared_first(where: trust.Folder) -> None:
        if not cleared:
            cleared.append(1)
            folder.remove_unfinished(root)  # a `tinytc-cache clear` right now
        real(where)

    monkeypatch.setattr(folder, "_start_empty", cleared_first)
    kernels = trust.Folder(root / trust.SUB, os.getegid(), False)
    folder.make_folder(kernels)
    assert cleared == [1]
    assert sorted(p.name for p in root.iterdir()) == [trust.SUB]
    assert json.loads((kernels.path / stats.FILE).read_text())[stats.FROM_EMPTY] == 1
    assert (kernels.path.stat().st_mode & 0o7777) == trust.GROUP_DIR_MODE


def test_clear_removes_the_build_locks_in_the_cache_folder_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build locks live in the cache folder next to kernels/ (locks.lock_path): `clear`
    removes them and their claims (left by a crash), and no other file there, as the folder
    may be one the user keeps other things in."""
    fill(tmp_path, 1, monkeypatch)
    key = "spirv-" + "ab" * 32
    lock = tmp_path / (key + store.LOCK_SUFFIX)
    lock.write_text('{"host": "gone", "pid": 1, "token": "0"}')
    claim = tmp_path / f".tmp-{lock.name}-0-0"
    claim.write_text("")
    kept = [tmp_path / "other.lock", tmp_path / ".tmp-mine", tmp_path / f"x{lock.name}"]
    for path in kept:
        path.write_text("mine")
    cleared = tinytc_cache("clear", "--dir", str(tmp_path))
    assert cleared.returncode == 0, cleared.stderr
    assert not lock.exists() and not claim.exists()
    assert [p.read_text() for p in kept] == ["mine"] * 3


def test_clear_removes_the_build_locks_of_a_shared_folder_in_kernels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shared folder keeps its build locks in kernels/ (locks.lock_path): `clear` removes
    them and their claims there too."""
    os.chown(tmp_path, -1, os.getegid())
    tmp_path.chmod(0o2770)
    monkeypatch.setenv(trust.ENV_SHARED, "group")
    fill(tmp_path, 1, monkeypatch)
    lock = locks.lock_path("spirv-" + "cd" * 32, trust.check())
    assert lock.parent == tmp_path / trust.SUB
    lock.write_text('{"host": "gone", "pid": 1, "token": "0"}')
    claim = lock.with_name(f".tmp-{lock.name}-0-0")
    claim.write_text("")
    cleared = tinytc_cache("clear", "--dir", str(tmp_path))
    assert cleared.returncode == 0, cleared.stderr
    assert cleared.stdout == f"removed 1 entries from {tmp_path / trust.SUB}\n"
    assert not lock.exists() and not claim.exists()
