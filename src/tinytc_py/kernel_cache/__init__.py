"""The kernel cache: compiled SPIR-V and the devices' native binaries, reused across processes.

Two levels on disk (store.py), both keyed by keys.py:
- SPIR-V by program, core info, optimisation settings and compiler version: a hit skips our
  compiler (`spirv_binary`);
- the device's native binary by SPIR-V, build options and device: a hit skips the device's JIT,
  which costs far more than our compile (`native_build`, used by the OpenCL and Level Zero
  runtimes and the C API's kernel bundles).
An in-process memo of recent SPIR-V results sits on top (memo.py), so repeated compiles of one
program in one process cost a dictionary lookup; source text is looked up there by itself
(`text_binary`), before it is parsed.

On by default; `TINYTC_CACHE=0` turns it off for the process, the compiler-context flag
`OptFlag.kernel_cache` (tinytc_optflag_kernel_cache in C) for one context, and a folder others
could write turns it off with a warning (trust.py; `TINYTC_CACHE_SHARED=group` for a project
folder). The folder is `TINYTC_CACHE_DIR` (else the user cache folder; cache_dir.py) and
`TINYTC_CACHE_MAX_MB` bounds its size. Processes that miss the same native binary at once build
it once (locks.py); a SPIR-V entry, a millisecond's compile, takes no lock: each compiles it
and each that finds it still absent writes it (the same bytes). A compile's entry is written behind, after the compile
returns, in a Python program (writer.py). Statistics: stats.py; filling the cache
ahead of a job: warm.py; command line: `tinytc-cache` (cli/cache.py).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

from ..binary import Binary
from ..gc_pause import paused_gc
from ..ir.context import CompilerContext
from ..ir.enums import OptFlag
from ..target.core_info import CoreInfo
from . import locks, memo, stats, store, trust, writer
from .codec import decode, encode
from .keys import native_key, spirv_key
from .switch import ENV_SWITCH, switched_on
from .warm import warm

T = TypeVar("T")


def enabled(ctx: CompilerContext | None = None) -> bool:
    """Whether caching is on for the process (TINYTC_CACHE), for `ctx` (its flag) and for
    the folder (trust.py: after one warning, off for a folder others could write)."""
    return _folder(ctx) is not None


def _folder(ctx: CompilerContext | None) -> trust.Folder | None:
    """The folder a lookup uses, checked once for the whole lookup; None when caching is off."""
    if not _switched_on(ctx):
        return None
    return trust.checked()


def _switched_on(ctx: CompilerContext | None) -> bool:
    """Whether TINYTC_CACHE and `ctx`'s flag leave caching on (the folder aside)."""
    return switched_on() and (ctx is None or ctx.optimization_flag(OptFlag.kernel_cache))


def spirv_binary(
    program_text: Callable[[], str],
    core_info: CoreInfo,
    ctx: CompilerContext,
    compile_: Callable[[], Binary],
) -> Binary:
    """The SPIR-V binary of a program: from the memo, the disk, or `compile_()` (then stored).
    `program_text()` is the printed program (the key's program part)."""
    where = _folder(ctx)
    if where is None:
        return _uncached(compile_)
    key = spirv_key(program_text(), core_info, ctx)
    binary = memo.get(key)
    if binary is not None:
        stats.count("memo_hits", persist=False)
        return binary
    return _stored(key, where, compile_, key)


def text_binary(
    text: str,
    core_info: CoreInfo,
    ctx: CompilerContext,
    compile_: Callable[[], Binary],
    parsing: tuple | None = None,
) -> Binary:
    """The SPIR-V binary of source `text`, keyed before it is parsed: a program compiled
    before in this process costs two dictionary lookups (memo.py), without the folder's
    check, which only guards what is read from disk. Otherwise as `spirv_binary`, with the
    text as the key's program part; `compile_()` parses and compiles. `parsing`: how the text is
    read, when it matters (keys.spirv_key)."""
    if not _switched_on(ctx):
        return _uncached(compile_)
    memo_key = memo.text_key(text, core_info, ctx, parsing)
    binary = memo.get(memo_key)
    if binary is not None:
        stats.count("memo_hits", persist=False)
        return binary
    where = trust.checked()
    if where is None:
        return _uncached(compile_)
    key = spirv_key(text, core_info, ctx, parsing)
    return _stored(key, where, compile_, memo_key)


def _stored(
    key: str, where: trust.Folder, compile_: Callable[[], Binary], memo_key: Hashable
) -> Binary:
    """The binary of entry `key`: read from `where`, or compiled, and stored there behind
    (writer.py); either way remembered under `memo_key` (memo.py). No build lock: a SPIR-V
    compile costs about a millisecond, so processes that miss the same entry at once each
    compile it, and each writes it only if it is not there yet (store.put's `if_absent`; the
    content is the same, the rename keeps it whole). The entry is looked up also where the
    folder did not exist when checked: this process's write of it may be behind (writer.py),
    and makes the folder."""
    payload = store.get(key, where)
    if payload is not None:
        stats.count("spirv_hits", where=where)
        return memo.put(memo_key, decode(payload))
    # the compile's pause of the collector (gc_pause.py) spans the bookkeeping that follows
    # it here, so that the scan the compile's allocations start comes after the call, as
    # with the cache off (`_uncached`); the lookup above is not in it
    with paused_gc():
        try:
            binary = compile_()
        except BaseException:
            stats.count("spirv_misses", where=where)
            raise
        writer.submit(lambda: _store(key, binary, where), key)
        return memo.put(memo_key, binary)


def _store(key: str, binary: Binary, where: trust.Folder) -> None:
    """Write the entry of a compile unless another process wrote it meanwhile, with its
    counts in one update of the statistics."""
    store.put(key, encode(binary), {"spirv_misses": 1, "compiles": 1}, where, if_absent=True)


def _uncached(compile_: Callable[[], Binary]) -> Binary:
    """A compile with the cache off; its count under the compile's pause of the collector,
    as a miss's bookkeeping is (`_stored`)."""
    with paused_gc():
        binary = compile_()
        stats.count("compiles", persist=False)
    binary.cache = False
    return binary


def native_build(
    binary: Binary,
    options: str,
    device: dict[str, str],
    from_spirv: Callable[[], T],
    native_of: Callable[[T], bytes],
    from_native: Callable[[bytes], T],
    ctx: CompilerContext | None = None,
) -> T:
    """A device program built from `binary` (SPIR-V): from the cached native binary when there
    is one, else by the device JIT (`from_spirv`), whose result `native_of` then stores.
    A cached binary the device rejects (e.g. an updated driver with the same version string)
    is dropped and rebuilt. `ctx` (of a C API binary) may turn the cache off by its flag."""
    where = _folder(ctx) if binary.format == "spirv" and binary.cache else None
    if where is None:
        stats.count("device_builds", persist=False)
        return from_spirv()
    key = native_key(binary.data, options, device)
    loaded = _load(key, store.get(key, where), from_native, "native_hits", where)
    if loaded:
        return loaded[0]
    with locks.build_once(key, where) as (payload, waited):
        loaded = _load(key, payload, from_native, "waits" if waited else "native_hits", where)
        if loaded:
            return loaded[0]
        try:
            built = from_spirv()
        except BaseException:
            stats.count("native_misses")
            raise
        counts = {"native_misses": 1, "device_builds": 1}
        native = native_of(built)
        if native:
            # one update of the statistics file; the entry is in place before the lock goes
            # (a process waiting for it would otherwise miss and run the device JIT too)
            store.put(key, native, counts, where, behind=False)
        else:
            stats.count_all(counts)
    return built


def _load(
    key: str,
    payload: bytes | None,
    from_native: Callable[[bytes], T],
    hit: str,
    where: trust.Folder,
) -> list[T]:
    """[the device program] of a cached native binary, counted as `hit`; [] when there is
    none or the device refuses it (then the entry is removed)."""
    if payload is None:
        return []
    try:
        built = from_native(payload)
    except Exception:  # noqa: BLE001 - any failure to load means: rebuild from SPIR-V
        stats.count("native_rejected")
        store.remove(key)
        return []
    stats.count(hit, where=where)
    return [built]


def clear_memo() -> None:
    """Forget the in-process results (the disk entries stay)."""
    memo.clear()


__all__ = [
    "ENV_SWITCH",
    "clear_memo",
    "enabled",
    "native_build",
    "spirv_binary",
    "stats",
    "store",
    "switched_on",
    "text_binary",
    "warm",
]
