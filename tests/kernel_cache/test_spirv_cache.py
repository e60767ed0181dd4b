"""The SPIR-V level of the kernel cache and its memo, in this process: hits skip the compiler
and give the same binary, keys tell apart everything that changes the output, the switches
turn caching off, damaged entries are rebuilt, an unwritable folder warns once, and eviction
keeps the folder under its bound (least recently used first)."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

import pytest

from tinytc_py import cache_dir, kernel_cache
from tinytc_py.compiler import binary_of, compile_to_spirv
from tinytc_py.ir.context import CompilerContext
from tinytc_py.ir.enums import OptFlag
from tinytc_py.kernel_cache import stats, store, writer
from tinytc_py.kernel_cache.codec import decode, encode
from tinytc_py.kernel_cache.keys import spirv_key
from tinytc_py.spirv.validate import validate
from tinytc_py.target.core_info import CoreInfo, IntelGpuArchitecture
from tinytc_py.text.dialect import parse


def gemm(m: int, n: int = 8, k: int = 4) -> str:
    return f"""func @gemm_{m}(%A: memref<f32x{m}x{k}>, %B: memref<f32x{k}x{n}>,
                  %C: memref<f32x{m}x{n}>) {{
    %one = constant 1.0 : f32
    gemm.n.n %one, %A, %B, %one, %C
}}
"""


def fresh_compile(text: str):
    """The binary of `text` compiled with the cache off (what every hit must equal)."""
    ctx = CompilerContext()
    ctx.set_optimization_flag(OptFlag.kernel_cache, 0)
    return compile_to_spirv(parse(text, ctx), CoreInfo.default())


def assert_same(a, b) -> None:
    assert a.data == b.data and a.kernels == b.kernels and a.core_features == b.core_features


def entry_files(folder: Path) -> list[Path]:
    writer.wait()  # the entries of this process's misses are written behind
    return sorted(folder.glob("*" + store.SUFFIX))


def test_second_lookup_hits_disk_then_memo(cache: Path) -> None:
    text = gemm(16)
    first = binary_of(text, CoreInfo.default())
    assert stats.process() == {
        "spirv_misses": 1,
        "compiles": 1,
        "bytes_written": entry_files(cache)[0].stat().st_size,
    }
    kernel_cache.clear_memo()
    from_disk = binary_of(text, CoreInfo.default())
    from_memo = binary_of(text, CoreInfo.default())
    counts = stats.process()
    assert (counts["spirv_hits"], counts["memo_hits"], counts["compiles"]) == (1, 1, 1)
    assert_same(from_disk, first)
    assert from_memo is from_disk
    assert_same(first, fresh_compile(text))
    validate(from_disk.data)


def test_binary_stored_without_self_checks_is_not_read_with_them(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process that asks for the self-checks (TINYTC_VALIDATE=1) compiles and checks the
    program itself rather than reading what a process without them stored unchecked."""
    text = gemm(16)
    monkeypatch.delenv("TINYTC_VALIDATE", raising=False)
    binary_of(text, CoreInfo.default())
    kernel_cache.clear_memo()
    monkeypatch.setenv("TINYTC_VALIDATE", "1")
    binary_of(text, CoreInfo.default())
    assert stats.process()["compiles"] == 2
    assert len(entry_files(cache)) == 2
    binary_of(text, CoreInfo.default())  # the memo keeps the two apart as well
    assert stats.process()["compiles"] == 2


def test_program_objects_are_keyed_by_their_printed_text(cache: Path) -> None:
    """A program built in memory (here: parsed, then passed as a program) hits the entry of a
    second, equal program; a different program misses."""
    compile_to_spirv(parse(gemm(16)), CoreInfo.default())
    kernel_cache.clear_memo()
    hit = compile_to_spirv(parse(gemm(16)), CoreInfo.default())
    compile_to_spirv(parse(gemm(24)), CoreInfo.default())
    counts = stats.process()
    assert (counts["spirv_hits"], counts["spirv_misses"], counts["compiles"]) == (1, 2, 2)
    assert_same(hit, fresh_compile(gemm(16)))


def test_codec_round_trip() -> None:
    binary = fresh_compile(gemm(16))
    assert_same(decode(encode(binary)), binary)


def test_key_covers_every_flag_level_core_info_and_program() -> None:
    info = CoreInfo.default()
    base = spirv_key(gemm(16), info, CompilerContext())
    keys = {base, spirv_key(gemm(24), info, CompilerContext())}
    for flag in OptFlag:
        ctx = CompilerContext()
        ctx.set_optimization_flag(flag, not ctx.optimization_flag(flag))
        keys.add(spirv_key(gemm(16), info, ctx))
    ctx = CompilerContext()
    ctx.opt_level = 0
    keys.add(spirv_key(gemm(16), info, ctx))
    keys.add(
        spirv_key(gemm(16), CoreInfo.intel_from_arch(IntelGpuArchitecture.tgl), CompilerContext())
    )
    changed = CoreInfo.default()
    changed.default_alignment *= 2
    keys.add(spirv_key(gemm(16), changed, CompilerContext()))
    assert len(keys) == 2 + len(OptFlag) + 3
    assert spirv_key(gemm(16), CoreInfo.default(), CompilerContext()) == base


@pytest.mark.parametrize("switch", ["environment", "context flag"])
def test_switched_off_compiles_and_stores_nothing(
    cache: Path, switch: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = CompilerContext()
    if switch == "environment":
        monkeypatch.setenv("TINYTC_CACHE", "0")
    else:
        ctx.set_optimization_flag(OptFlag.kernel_cache, 0)
    for _ in range(2):
        binary = compile_to_spirv(parse(gemm(16), ctx), CoreInfo.default())
    assert not cache.exists()
    assert stats.process() == {"compiles": 2}
    assert binary.cache is False
    assert_same(binary, fresh_compile(gemm(16)))


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty", "header only"])
def test_damaged_entry_is_removed_and_rebuilt(cache: Path, damage: str) -> None:
    binary_of(gemm(16), CoreInfo.default())
    (path,) = entry_files(cache)
    raw = path.read_bytes()
    damaged = {
        "truncated": raw[: len(raw) // 2],
        "garbage": os.urandom(len(raw)),
        "empty": b"",
        "header only": raw[: len(store.MAGIC) + 32],
    }[damage]
    path.write_bytes(damaged)
    kernel_cache.clear_memo()
    rebuilt = binary_of(gemm(16), CoreInfo.default())
    counts = stats.process()
    assert (counts["corrupt"], counts["compiles"], counts["spirv_misses"]) == (1, 2, 2)
    assert_same(rebuilt, fresh_compile(gemm(16)))
    assert path.read_bytes() == raw  # the entry is whole again


def _unwritable(how: str, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = cache.parent
    if how == "read-only folder":
        cache.mkdir()
        cache.chmod(0o555)
        if os.geteuid() == 0:  # root ignores the mode: fail as the mode fails everyone else

            def denied(*args, **kwargs):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))

            monkeypatch.setattr(cache_dir, "temporary_file", denied)
    elif how == "folder is a file":
        root.mkdir(exist_ok=True)
        blocker = root / "file"
        blocker.write_text("not a folder")
        monkeypatch.setenv("TINYTC_CACHE_DIR", str(blocker))
    elif how == "disk full":  # creating the temporary file fails with ENOSPC

        def full(*args, **kwargs):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        monkeypatch.setattr(cache_dir, "temporary_file", full)
    else:  # disk full after a partial write: the temporary file exists, half written

        class FillingOs:
            def __getattr__(self, name: str):
                return getattr(os, name)

            @staticmethod
            def write(fd: int, data) -> int:
                if len(data) > 1:
                    return os.write(fd, data[: len(data) // 2])
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        monkeypatch.setattr(cache_dir, "os", FillingOs())


@pytest.mark.parametrize(
    "how", ["read-only folder", "folder is a file", "disk full", "disk full mid-write"]
)
def test_unwritable_folder_works_and_warns_once(
    cache: Path, how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _unwritable(how, cache, monkeypatch)
    why = "is not a folder; caching is off" if how == "folder is a file" else "cannot write"
    with pytest.warns(RuntimeWarning, match=why) as record:
        binaries = [binary_of(gemm(m), CoreInfo.default()) for m in (16, 24, 32)]
        writer.wait()  # the failing writes are behind: their warning comes from the writer
    assert len(record) == 1
    assert stats.process()["compiles"] == 3
    assert not entry_files(cache)
    assert not list(cache.parent.rglob(".tmp-*"))  # no temporary file left behind
    for m, binary in zip((16, 24, 32), binaries):
        assert_same(binary, fresh_compile(gemm(m)))


def test_eviction_keeps_the_folder_under_the_bound(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Entries of 5-10 kB under a 40 kB bound. m=16 is looked up again after every write, so
    it is never the least recently used entry and survives; m=24 is the first to go."""
    bound_mb = 0.04
    monkeypatch.setenv("TINYTC_CACHE_MAX_MB", str(bound_mb))
    sizes = (16, 24, 32, 40, 48, 56, 64)
    for m in sizes:
        binary_of(gemm(m), CoreInfo.default())
        kernel_cache.clear_memo()
        binary_of(gemm(16), CoreInfo.default())
        assert sum(f.stat().st_size for f in entry_files(cache)) <= bound_mb * 1024 * 1024
    keys = {spirv_key(gemm(m), CoreInfo.default(), CompilerContext()): m for m in sizes}
    kept = {keys[f.name.removesuffix(store.SUFFIX)] for f in entry_files(cache)}
    assert {16, 64} <= kept and 24 not in kept
    assert stats.process()["evicted"] == len(sizes) - len(kept)


def test_a_kernels_folder_removed_before_a_write_comes_back_private(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process clears the cache between the folder's making and the write: the folder
    is made again by the cache's folder maker (mode 700), not with mkdir's default mode."""
    real_write = store.atomic_write
    lost = []

    def lose_then_write(path: Path, *args, **kwargs) -> None:
        if not lost:
            lost.append(sorted(p.name for p in path.parent.iterdir()))
            shutil.rmtree(path.parent)
        real_write(path, *args, **kwargs)

    monkeypatch.setattr(store, "atomic_write", lose_then_write)
    umask = os.umask(0o022)
    try:
        binary = binary_of(gemm(16), CoreInfo.default())
        writer.wait()  # the write behind, under this umask
    finally:
        os.umask(umask)
    assert lost  # the write found the folder gone
    assert cache.stat().st_mode & 0o777 == 0o700
    assert len(entry_files(cache)) == 1
    assert_same(binary, fresh_compile(gemm(16)))
