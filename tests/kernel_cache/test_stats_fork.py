"""A fork while another thread updates the statistics file (stats._file_lock): the child must
not inherit that update's `flock` (which its copy of the descriptor would keep, so that its own
first update waits forever, and every other process's with it)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest

from tinytc_py.kernel_cache import stats

FORKS = 100
DEADLINE = 60.0
"""Seconds a child may take for one update and its exit: far more than it needs (milliseconds),
so only a child that hangs runs out of it."""


def exit_status(pid: int) -> int | None:
    """The child's wait status, or None (and the child killed) when it is still running at the
    deadline: the test fails on a hang instead of hanging."""
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.001)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return None


@pytest.mark.usefixtures("saves_at_once")
def test_children_forked_during_another_threads_updates_update_and_exit(cache: Path) -> None:
    stop = threading.Event()
    updates = 0

    def update() -> None:
        nonlocal updates
        while not stop.is_set():
            stats.count("corrupt")  # each one an update of the file (saves_at_once)
            updates += 1

    stats.count("corrupt")  # the folder and its file exist before the thread starts
    thread = threading.Thread(target=update)
    thread.start()
    hung = exited = 0
    try:
        with warnings.catch_warnings():  # Python 3.12 warns of a fork with threads running
            warnings.simplefilter("ignore", DeprecationWarning)
            for _ in range(FORKS):
                pid = os.fork()
                if pid == 0:
                    stats.count("corrupt")
                    os._exit(0)
                status = exit_status(pid)
                if status is None:
                    hung += 1
                    break
                exited += os.waitstatus_to_exitcode(status) == 0
    finally:
        stop.set()
        thread.join()
    assert (hung, exited) == (0, FORKS)
    assert stats.totals()["corrupt"] == 1 + updates + FORKS  # every update of each process


ORDER_SCRIPT = """
import os, sys, threading, time
from tinytc_py.capi.errors import LIBRARY_LOCK  # imported first, as by a C host's first call
from tinytc_py.kernel_cache import stats

inside = threading.Event()

def call():  # a C API call that updates the statistics file after the fork began
    with LIBRARY_LOCK:
        inside.set()
        time.sleep(0.2)
        stats.count("corrupt")
        stats.save()

thread = threading.Thread(target=call)
thread.start()
inside.wait()
pid = os.fork()
if pid == 0:
    stats.count("corrupt")
    os._exit(0)
thread.join()
sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""


def test_a_fork_during_a_call_that_updates_the_file_takes_the_library_lock_first(
    cache: Path,
) -> None:
    """In a process whose first import is the C API's (capi/errors.py), the fork takes the
    library's lock before the statistics file's (stats._file_lock), so a call holding the first
    and waiting for the second finishes, and the fork follows it."""
    env = {**os.environ, "PYTHONWARNINGS": "ignore::DeprecationWarning"}
    done = subprocess.run(
        [sys.executable, "-c", ORDER_SCRIPT], env=env, timeout=DEADLINE, capture_output=True
    )
    assert (done.returncode, done.stderr) == (0, b"")
    assert stats.totals()["corrupt"] == 2
