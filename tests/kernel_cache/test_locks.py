"""The build lock of a cache entry (locks.py), in this process on the SPIR-V level: a lock left
by a killed process is removed at once and the build goes on; a lock of a crashed process on
another machine is removed when it is older than the timeout; a lock whose holder never
finishes makes the waiter build itself after the timeout, with a correct result. The counters
show which path was taken, so no assertion depends on timing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tinytc_py.compiler import binary_of
from tinytc_py.ir.context import CompilerContext
from tinytc_py.kernel_cache import locks, stats, store
from tinytc_py.kernel_cache.keys import spirv_key
from tinytc_py.target.core_info import CoreInfo

from .test_spirv_cache import assert_same, fresh_compile, gemm

HOLDER = """
import signal, sys, time
from tinytc_py.kernel_cache import locks
signal.signal(signal.SIGTERM, lambda *args: sys.exit(3))  # leave the lock as a failed build
with locks.build_once(sys.argv[1]) as (payload, waited):
    print("locked", flush=True)
    time.sleep(600)
"""


def key() -> str:
    return spirv_key(gemm(16), CoreInfo.default(), CompilerContext())


def lock_file() -> Path:
    return store.folder() / (key() + store.LOCK_SUFFIX)


def holder() -> subprocess.Popen:
    """A process that holds the lock of gemm(16)'s entry until it is killed."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, key()], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline() == "locked\n"
    return proc


def kill(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.stdout is not None
    proc.stdout.close()


def build_and_check() -> dict[str, int]:
    """The counters of a build of gemm(16) through the cache, after checking its result."""
    binary = binary_of(gemm(16), CoreInfo.default())
    counts = stats.process()
    assert_same(binary, fresh_compile(gemm(16)))
    assert store.get(key()) is not None
    return counts


def test_lock_of_a_killed_process_is_removed_at_once(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(locks.ENV_TIMEOUT, "600")  # recovery must not wait for the timeout
    kill(holder())
    assert lock_file().exists()
    counts = build_and_check()
    assert (counts["stale_locks"], counts["compiles"]) == (1, 1)
    assert "lock_timeouts" not in counts and "waits" not in counts
    assert not lock_file().exists()


def test_lock_of_a_crashed_process_elsewhere_is_stale_after_the_timeout(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(locks.ENV_TIMEOUT, "5")
    cache.mkdir()
    lock_file().write_text(json.dumps({"host": "another-node", "pid": 1, "token": "0"}))
    old = time.time() - 6
    os.utime(lock_file(), (old, old))
    counts = build_and_check()
    assert (counts["stale_locks"], counts["compiles"]) == (1, 1)
    assert "lock_timeouts" not in counts
    assert not lock_file().exists()


def test_holder_that_never_finishes_makes_the_waiter_build_itself(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(locks.ENV_TIMEOUT, "0.5")
    proc = holder()
    try:
        counts = build_and_check()
    finally:
        kill(proc)
    assert (counts["lock_timeouts"], counts["compiles"]) == (1, 1)
    assert "stale_locks" not in counts


def test_lock_released_without_an_entry_makes_the_waiter_build_itself(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The holder failed (its lock goes away, no entry): the waiter builds, it does not wait
    for the timeout."""
    monkeypatch.setenv(locks.ENV_TIMEOUT, "600")
    proc = holder()
    sleep = time.sleep

    def fail_the_holder_while_waiting(seconds: float) -> None:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait()
        sleep(seconds)

    monkeypatch.setattr(locks.time, "sleep", fail_the_holder_while_waiting)
    try:
        counts = build_and_check()
    finally:
        kill(proc)
    assert proc.returncode == 3  # it left through build_once, which removed its lock
    assert counts["compiles"] == 1
    assert "lock_timeouts" not in counts and "stale_locks" not in counts
