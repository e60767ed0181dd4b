"""The compiler pauses Python's cyclic garbage collector while it runs (gc_pause.py) and
must hand the host's setting back unchanged: on stays on, off stays off, also after a failed
compile, nested pauses and four threads compiling at once."""

from __future__ import annotations

import gc
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from tinytc_py.compiler import binary_of
from tinytc_py.errors import CompilationError
from tinytc_py.gc_pause import paused_gc
from tinytc_py.target.core_info import CoreInfo

GEMM = """\
func @gemm16(%A: memref<f32x16x16x?>, %B: memref<f32x16x16x?>, %C: memref<f32x16x16x?>) {
    %gid = group_id.x : index
    %a = subview %A[0:16,0:16,%gid] : memref<f32x16x16>
    %b = subview %B[0:16,0:16,%gid] : memref<f32x16x16>
    %c = subview %C[0:16,0:16,%gid] : memref<f32x16x16>
    %one = constant 1.0 : f32
    %zero = constant 0.0 : f32
    gemm.n.n %one, %a, %b, %zero, %c
}
"""

BROKEN = "func @k(%a: f32) {\n    %b = add %a, %nope : f32\n}\n"


pytestmark = pytest.mark.usefixtures("cold_compiles")


def compile_gemm() -> bytes:
    return binary_of(GEMM, CoreInfo.default()).data


@pytest.mark.parametrize("enabled", [True, False])
def test_compile_keeps_host_setting(enabled: bool) -> None:
    gc.enable() if enabled else gc.disable()
    data = compile_gemm()
    assert data[:4] == b"\x03\x02\x23\x07"  # SPIR-V magic number, little endian
    assert gc.isenabled() is enabled


def test_collector_off_while_passes_and_validator_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pause covers the work it is for: seen from inside the pipeline and the validator."""
    import tinytc_py.compiler as compiler

    seen: list[bool] = []

    def spy(fn):
        def wrapped(*args, **kwargs):
            seen.append(gc.isenabled())
            return fn(*args, **kwargs)

        return wrapped

    monkeypatch.setattr(compiler, "run_default_pipeline", spy(compiler.run_default_pipeline))
    monkeypatch.setattr(compiler, "validate", spy(compiler.validate))
    gc.enable()
    compile_gemm()
    assert seen == [False, False]
    assert gc.isenabled()


@pytest.mark.parametrize("enabled", [True, False])
def test_failed_compile_keeps_host_setting(enabled: bool) -> None:
    gc.enable() if enabled else gc.disable()
    with pytest.raises(CompilationError, match="nope") as info:
        binary_of(BROKEN, CoreInfo.default())
    assert info.value.loc.begin.line == 2
    assert gc.isenabled() is enabled


def test_collector_off_inside_nested_pauses_and_back_after_an_exception() -> None:
    gc.enable()
    with pytest.raises(RuntimeError, match="inner"), paused_gc():
        assert not gc.isenabled()
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner pause ended, the outer one still runs
        raise RuntimeError("inner")
    assert gc.isenabled()


@pytest.mark.parametrize("enabled", [True, False])
def test_four_threads_compiling_keep_host_setting(enabled: bool) -> None:
    expected = compile_gemm()
    gc.enable() if enabled else gc.disable()
    start = threading.Barrier(4)

    def work(_: int) -> list[bytes]:
        start.wait()
        return [compile_gemm() for _ in range(5)]

    with ThreadPoolExecutor(4) as pool:
        results = [b for batch in pool.map(work, range(4)) for b in batch]
    assert results == [expected] * 20
    assert gc.isenabled() is enabled


def test_a_miss_pauses_its_compile_and_write_not_its_lookup(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the cache on, the pause covers a miss's compile and the hand-over of its write
    (so the scan the compile's allocations start comes after the call, as with the cache
    off), but not the lookup, where other threads may run long."""
    from tinytc_py import kernel_cache
    from tinytc_py.kernel_cache import store, writer

    monkeypatch.delenv("TINYTC_CACHE")
    monkeypatch.setenv("TINYTC_CACHE_DIR", str(tmp_path))
    (tmp_path / "kernels").mkdir(mode=0o700)  # made: the lookup reads the folder
    kernel_cache.clear_memo()
    seen: list[tuple[str, bool]] = []

    def spy(name, fn):
        def wrapped(*args, **kwargs):
            seen.append((name, gc.isenabled()))
            return fn(*args, **kwargs)

        return wrapped

    monkeypatch.setattr(store, "get", spy("lookup", store.get))
    monkeypatch.setattr(writer, "submit", spy("submit", writer.submit))
    gc.enable()
    try:
        data = compile_gemm()
    finally:
        writer.wait()
        kernel_cache.clear_memo()
    assert data[:4] == b"\x03\x02\x23\x07"
    assert seen[0] == ("lookup", True)
    assert [s for s in seen if s[0] == "submit"] == [("submit", False)]
    assert gc.isenabled()
