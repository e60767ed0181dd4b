"""The kernel cache's source-text memo (kernel_cache/memo.py) and the C API's remembered
parses (capi/parsed.py): text compiled again in the process is answered without the parser
and gives the same binary; a core info changed in place, other settings, another dialect or
source name miss; both memories stay within their bounds."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import tinytc_py
from tinytc_py import environ, kernel_cache
from tinytc_py.capi import parsed
from tinytc_py.capi.handles import table
from tinytc_py.compiler import binary_of
from tinytc_py.ir.context import CompilerContext
from tinytc_py.kernel_cache import memo, stats
from tinytc_py.target.core_info import CoreInfo, SpirvFeature
from tinytc_py.text import dialect

from .test_spirv_cache import assert_same, gemm

CHECKED = """func @k(%A: memref<f32x16>) {
    %i = group_id.x : index
    %x = load %A[%i] : f32
    store %x, %A[%i]
}
"""


def cold(text: str, info: CoreInfo, **options):
    """The binary of `text` compiled with the cache off."""
    flags = ["no-kernel-cache", *options.pop("flags", ())]
    return tinytc_py.compile(text, target=info, flags=flags, **options).binary


def test_text_compiled_again_skips_the_parser(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    info = CoreInfo.default()
    first = binary_of(gemm(16), info)

    def no_parsing(*args, **kwargs):
        raise AssertionError("parsed again")

    # the parser's entry point, which the (uncompiled) callers binary_of and tinytc_py.compile
    # look up at each parse: replacing a compiled function reaches Python callers only
    monkeypatch.setattr(dialect, "parse", no_parsing)
    assert binary_of(gemm(16), info) is first
    assert tinytc_py.compile(gemm(16), target=info).binary is first  # the same key
    counts = stats.process()
    assert (counts["compiles"], counts["memo_hits"]) == (1, 2)
    with pytest.raises(AssertionError, match="parsed again"):  # a new text reaches the stand-in
        binary_of(gemm(8), info)
    monkeypatch.undo()
    assert_same(first, cold(gemm(16), info))


def test_core_info_changed_in_place_misses(cache: Path) -> None:
    """The same core info object, changed through a method, in a table it holds, and changed
    back: two misses, then the first binary again."""
    info = CoreInfo.default()
    first = binary_of(gemm(16), info)
    info.set_spirv_feature(SpirvFeature.float16, False)
    no_fp16 = binary_of(gemm(16), info)
    assert no_fp16 is not first
    info.set_spirv_feature(SpirvFeature.float16, True)
    info.max_wgs[16] //= 2
    smaller = binary_of(gemm(16), info)
    assert stats.process()["compiles"] == 3
    assert_same(smaller, cold(gemm(16), info))
    info.max_wgs[16] *= 2
    assert binary_of(gemm(16), info) is first


def test_settings_dialect_and_name_are_part_of_the_key(cache: Path, tmp_path: Path) -> None:
    """Flags, the optimisation level and the dialect each miss. A bounds-checked kernel's
    messages name its source file, so two files of one text get their own binaries."""
    info = CoreInfo.default()
    base = tinytc_py.compile(gemm(16), target=info).binary
    variants = [
        tinytc_py.compile(gemm(16), target=info, flags=["unsafe-fp-math"]).binary,
        tinytc_py.compile(gemm(16), target=info, opt_level=0).binary,
        tinytc_py.compile(gemm(16), target=info, dialect="current").binary,
    ]
    assert all(v is not base for v in variants)
    assert stats.process()["compiles"] == 4
    assert_same(variants[1], cold(gemm(16), info, opt_level=0))
    messages = []
    for name in ("a.ir", "b.ir"):
        path = tmp_path / name
        path.write_text(CHECKED)
        binary = tinytc_py.compile(path, target=info, flags=["bounds-checks"]).binary
        (kernel,) = binary.kernels.values()
        messages.append(kernel.bounds_checks[0])
    assert messages[0].startswith(f"{tmp_path / 'a.ir'}:")
    assert messages[1].startswith(f"{tmp_path / 'b.ir'}:")


def test_memo_keeps_at_most_its_bound(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the bound the binary used longest ago goes; it is read from disk again."""
    monkeypatch.setattr(memo, "ENTRIES", 3)
    info = CoreInfo.default()
    for m in (16, 24, 32, 40, 48):
        binary_of(gemm(m), info)
    assert memo.size() == 3
    binary_of(gemm(48), info)
    binary_of(gemm(16), info)
    counts = stats.process()
    assert (counts["memo_hits"], counts["spirv_hits"], counts["compiles"]) == (1, 1, 5)


def test_switched_off_context_is_not_answered_by_the_memo(cache: Path) -> None:
    info = CoreInfo.default()
    binary_of(gemm(16), info)
    off = tinytc_py.compile(gemm(16), target=info, flags=["no-kernel-cache"]).binary
    assert off.cache is False
    assert stats.process()["compiles"] == 2


def test_c_api_remembers_a_bounded_number_of_parsed_texts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A text parsed before makes its handle without parsing (the parse is put off: the
    source is registered); past the bound the text parsed longest ago is parsed again."""
    monkeypatch.setattr(parsed, "KNOWN_TEXTS", 2)
    monkeypatch.setattr(parsed, "_known", type(parsed._known)())
    ctx = CompilerContext()
    ctx_addr = table.new_shared("compiler_context", ctx)
    handles = []

    def parse(m: int) -> int:
        handle = parsed.parse_to_handle(gemm(m), "<memory>", ctx, ctx_addr)
        handles.append(handle)
        source = table.by_addr[handle].source
        return source.source_id if source.put_off else 0

    try:
        assert [parse(m) for m in (16, 24, 16)] == [0, 0, 3]  # put off: registered as 3rd
        assert [parse(m) for m in (32, 24, 16)] == [0, 0, 0]  # 24 and 16 were forgotten
        assert len(parsed._known) == 2
        entry = table.by_addr[handles[2]]
        assert not entry.obj.funcs  # not parsed yet
        entry.source.settle(entry)  # what table.get does: parse, forget the text
        prog = entry.obj
        assert [f.name for f in prog.funcs] == ["gemm_16"] and entry.source is None
        assert prog.loc.begin.source_id == 3
    finally:
        for handle in handles:
            table.release_addr(handle)
        table.release_addr(ctx_addr)
    kernel_cache.clear_memo()


def test_switches_follow_the_environment_between_compiles(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TINYTC_CACHE and TINYTC_VALIDATE, changed through os.environ between two compiles of
    one text, decide the second (tinytc_py/environ.py reads what os.environ holds)."""
    monkeypatch.setenv("TINYTC_VALIDATE", "1")
    info = CoreInfo.default()
    first = binary_of(gemm(16), info)
    monkeypatch.setenv("TINYTC_CACHE", "off")
    assert binary_of(gemm(16), info).cache is False
    monkeypatch.delenv("TINYTC_CACHE")
    assert binary_of(gemm(16), info) is first
    monkeypatch.setenv("TINYTC_VALIDATE", "0")
    unchecked = binary_of(gemm(16), info)
    monkeypatch.setenv("TINYTC_VALIDATE", "1")
    assert binary_of(gemm(16), info) is first
    assert unchecked is not first
    assert stats.process()["compiles"] == 3
    assert_same(unchecked, first)


def test_environment_values_read_as_os_environ_reads_them(monkeypatch: pytest.MonkeyPatch) -> None:
    name = "TINYTC_TEST_ENVIRON_VALUE"
    monkeypatch.delenv(name, raising=False)
    assert environ.get(name) is None
    for value in ("", "1", " Off ", "déjà vu"):
        monkeypatch.setenv(name, value)
        assert environ.get(name) == os.environ.get(name) == value
    monkeypatch.delenv(name)
    assert environ.get(name) is None
