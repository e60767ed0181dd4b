"""The build lock of a device binary's entry (locks.py; SPIR-V entries take none), in this
process, around a device build the test stands in for: a lock left
by a killed process is removed at once and the build goes on; a lock of a crashed process on
another machine is removed when it is older than the timeout; a live holder whose start time
cannot be read is waited for, not taken as dead; a lock whose holder never finishes makes the
waiter build itself after the timeout, with a correct result. The counters show which path was
taken, so no assertion depends on timing. Races between processes that remove locks are played
out in one process in a fixed order: a step of one process is run from inside a step of
another, through locks.py's own functions replaced for the test (never those of `time` or
`os`, which the rest of the process shares)."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tinytc_py import kernel_cache
from tinytc_py.binary import Binary
from tinytc_py.kernel_cache import locks, stats, store, trust
from tinytc_py.kernel_cache.folder import make_folder
from tinytc_py.kernel_cache.keys import native_key

from .test_spirv_cache import fresh_compile, gemm

DEVICE = {"name": "a device the test stands in for", "driver": "1", "platform": "test"}
NATIVE = b"the device binary of gemm(16)"

HOLDER = """
import signal, sys, time
from tinytc_py.kernel_cache import locks
signal.signal(signal.SIGTERM, lambda *args: sys.exit(3))  # leave the lock as a failed build
with locks.build_once(sys.argv[1]) as (payload, waited):
    print("locked", flush=True)
    time.sleep(600)
"""


def _spirv() -> Binary:
    """gemm(16)'s SPIR-V, as a compile with the cache on returns it (compiled once, at import:
    no test's counters show it)."""
    binary = fresh_compile(gemm(16))
    binary.cache = True
    return binary


SPIRV = _spirv()


def key() -> str:
    return native_key(SPIRV.data, "", DEVICE)


def lock_file() -> Path:
    return locks.lock_path(key(), trust.check())


def claims() -> list[Path]:
    """The claims on build locks left where the lock of gemm(16) lives (locks._claim_path)."""
    return list(lock_file().parent.glob(".tmp-*"))


@pytest.fixture(params=["user", "group"])
def kind(request: pytest.FixtureRequest, cache: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The cache folder per user, or shared by the user's group (the build lock then lives in
    kernels/, not next to it: locks.lock_path)."""
    if request.param == "group":
        os.chown(cache.parent, -1, os.getegid())
        cache.parent.chmod(0o2770)
        monkeypatch.setenv(trust.ENV_SHARED, "group")
    return request.param


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
    """The counters of a device build of gemm(16) through the cache, after checking its
    result (the build stands in for the device's JIT: it returns NATIVE)."""
    built = kernel_cache.native_build(SPIRV, "", DEVICE, lambda: NATIVE, bytes, bytes)
    counts = stats.process()
    assert built == NATIVE
    assert store.get(key()) == NATIVE
    return counts


def test_lock_of_a_killed_process_is_removed_at_once(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(locks.ENV_TIMEOUT, "600")  # recovery must not wait for the timeout
    kill(holder())
    assert lock_file().exists()
    counts = build_and_check()
    assert (counts["stale_locks"], counts["device_builds"]) == (1, 1)
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
    assert (counts["stale_locks"], counts["device_builds"]) == (1, 1)
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
    assert (counts["lock_timeouts"], counts["device_builds"]) == (1, 1)
    assert "stale_locks" not in counts


def test_live_holder_whose_start_time_cannot_be_read_is_waited_for(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The holder runs on this host, but the waiter cannot read its start time (as when
    /proc/PID/stat is unreadable): the waiter keeps waiting; the holder's lock stays until
    the holder itself gives up."""
    monkeypatch.setenv(locks.ENV_TIMEOUT, "600")
    proc = holder()
    held = lock_file().read_bytes()
    monkeypatch.setattr(locks, "_start_time", lambda pid: None)
    polls = []

    def end_the_holder_after_some_polls(seconds: float) -> None:
        polls.append(seconds)
        if len(polls) == 5:
            assert lock_file().read_bytes() == held  # still the holder's own
            proc.send_signal(signal.SIGTERM)
            proc.wait()

    monkeypatch.setattr(locks, "_sleep", end_the_holder_after_some_polls)
    try:
        counts = build_and_check()
    finally:
        kill(proc)
    assert proc.returncode == 3  # it released its lock itself
    assert counts["device_builds"] == 1 and len(polls) >= 5
    assert "stale_locks" not in counts and "lock_timeouts" not in counts


HOST = socket.gethostname()


@pytest.mark.parametrize(
    "content, age, stale",
    [
        ({"host": HOST, "pid": os.getpid(), "start": None}, 1.0, False),  # unknown, young
        ({"host": HOST, "pid": os.getpid(), "start": None}, 11.0, True),  # unknown, old
        ({"host": HOST, "pid": os.getpid(), "start": "own"}, 11.0, False),  # known alive
        ({"host": HOST, "pid": os.getpid(), "start": "1"}, 1.0, True),  # id of another process
        ({"host": "another-node", "pid": os.getpid(), "start": "own"}, 1.0, False),
        ({"host": "another-node", "pid": os.getpid(), "start": "own"}, 11.0, True),
        ({}, 1.0, False),  # holder not written yet
        ({}, 11.0, True),
    ],
    ids=[
        "unknown-young",
        "unknown-old",
        "alive-old",
        "pid-reused",
        "elsewhere-young",
        "elsewhere-old",
        "empty-young",
        "empty-old",
    ],
)
def test_stale_means_known_dead_or_unknown_and_older_than_the_timeout(
    monkeypatch: pytest.MonkeyPatch, content: dict, age: float, stale: bool
) -> None:
    """With a timeout of 10 s; `start` "own" is this process's real start time, None one
    that cannot be read."""
    monkeypatch.setenv(locks.ENV_TIMEOUT, "10")
    own = locks._start_time(os.getpid())
    assert own is not None  # Linux: /proc/PID/stat
    if content.get("start") == "own":
        content = {**content, "start": own}
    elif "start" in content and content["start"] is None:
        monkeypatch.setattr(locks, "_start_time", lambda pid: None)
        content = {**content, "start": own}
    assert locks._stale(content, age) is stale


def stale_lock(content: bytes) -> Path:
    """The lock file of gemm(16)'s entry with `content`, older than the timeout (5 s)."""
    make_folder(trust.check())
    path = lock_file()
    path.write_bytes(content)
    old = time.time() - 6
    os.utime(path, (old, old))
    return path


@pytest.mark.usefixtures("kind")
@pytest.mark.parametrize("written", [False, True])
def test_two_waiters_break_one_stale_lock_and_a_new_one_stays(
    cache: Path, monkeypatch: pytest.MonkeyPatch, written: bool
) -> None:
    """Waiters A and B both judge a stale lock so; A removes it and C takes a new lock; then
    B goes on to remove what it judged stale, and must leave C's lock alone: whether the
    stale lock had content (a crashed rank elsewhere) or none, and whether C has written its
    content yet or not."""
    monkeypatch.setenv(locks.ENV_TIMEOUT, "5")
    elsewhere = {"host": "another-node", "pid": 1, "token": "0"}
    path = stale_lock(json.dumps(elsewhere).encode() if written else b"")
    judge = locks._stale
    taken = {}

    def b_judges(content: dict, age: float) -> bool:
        stale = judge(content, age)
        monkeypatch.setattr(locks, "_stale", judge)  # A and C decide for themselves
        assert locks._inspect(path, None) is locks._STALE  # A removes it
        if written:  # C takes a new lock ...
            assert locks._create(path, trust.checked()) is not None
        else:  # ... and is still to write its content
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        taken["C"] = path.read_bytes()
        return stale

    monkeypatch.setattr(locks, "_stale", b_judges)
    assert stats.process() == {}
    assert locks._inspect(path, None) is not locks._STALE  # B
    assert path.read_bytes() == taken["C"]
    assert stats.process() == {"stale_locks": 1}  # A's
    assert not claims()


@pytest.mark.usefixtures("kind")
def test_release_leaves_a_lock_that_replaced_it_alone(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The holder's build outlived the timeout: while it releases its lock (between reading
    the lock and removing it), waiter B removes it as stale and C would take a new lock.
    Whichever of them removes the holder's lock, a lock C took stays."""
    path = lock_file()
    read = locks._read
    others: dict[str, object] = {}

    def read_then_let_b_and_c_in(file: Path) -> tuple[os.stat_result, dict]:
        st_content = read(file)
        if not others:
            others["B"] = None  # B's and C's own reads of the lock go straight through
            others["B"] = locks._inspect(file, None)
            others["C"] = locks._create(file, trust.checked())
            others["C's lock"] = file.read_bytes() if others["C"] is not None else None
        return st_content

    with locks.build_once(key()) as (payload, waited):
        assert (payload, waited) == (None, False) and path.exists()
        monkeypatch.setattr(locks, "_stale", lambda content, age: True)  # B: too old
        monkeypatch.setattr(locks, "_read", read_then_let_b_and_c_in)
    assert others  # the release read the lock
    if others["C"] is None:  # the holder's lock was still there: C did not get one
        assert not path.exists()
    else:
        assert path.read_bytes() == others["C's lock"]
    assert not claims()


@pytest.mark.usefixtures("kind")
def test_claim_of_a_remover_that_died_is_passed_over(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process died while it removed a stale lock, leaving its claim: while the claim is
    younger than the timeout the lock is left alone (its remover may be at work), after that
    the lock is removed and the old claim with it."""
    monkeypatch.setenv(locks.ENV_TIMEOUT, "5")
    path = stale_lock(json.dumps({"host": "another-node", "pid": 1, "token": "0"}).encode())
    claim = locks._claim_path(path, "0", 0)  # by the lock's token
    claim.touch()
    assert locks._inspect(path, None) is not locks._STALE
    assert path.exists()
    old = time.time() - 6
    os.utime(claim, (old, old))
    counts = build_and_check()
    assert (counts["stale_locks"], counts["device_builds"]) == (1, 1)
    assert not path.exists() and not claims()


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

    monkeypatch.setattr(locks, "_sleep", fail_the_holder_while_waiting)
    try:
        counts = build_and_check()
    finally:
        kill(proc)
    assert proc.returncode == 3  # it left through build_once, which removed its lock
    assert counts["device_builds"] == 1
    assert "lock_timeouts" not in counts and "stale_locks" not in counts


@pytest.mark.usefixtures("kind")
def test_a_claim_on_a_removed_lock_does_not_block_the_lock_that_took_its_inode(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Waiter W removed a stale lock A and still holds its claim on it when this process's lock
    B is made and gets A's inode (file systems reuse a freed inode at once). B's holder
    releases meanwhile: W's claim is on A, not on B, so B goes away."""
    cm = locks.build_once(key())
    assert cm.__enter__() == (None, False)
    path = lock_file()
    st = path.stat()
    a = locks._Seen(
        (st.st_ino, st.st_mtime_ns - 1), {"host": "another-node", "pid": 1, "token": "A0"}
    )
    read = locks._read
    released = []

    def w_reads(file: Path) -> tuple[os.stat_result, dict]:
        if not released:  # W holds its claim on A: B's holder releases now
            released.append(True)
            cm.__exit__(None, None, None)
        return read(file)

    monkeypatch.setattr(locks, "_read", w_reads)
    assert not locks._break(path, a)  # B (or nothing) is not the lock W judged stale
    assert released and not path.exists()
    assert not claims()


def test_a_shared_folders_lock_lives_in_kernels_a_users_next_to_it(tmp_path: Path) -> None:
    """A per-user cache keeps its build locks in the cache folder (a first start need not make
    kernels/ before its compile); a shared one in kernels/, whose mode the cache sets itself
    (2770, no sticky bit), whatever the project folder's mode."""
    kernels = tmp_path / trust.SUB
    assert locks.lock_path(key(), trust.Folder(kernels, None, False)).parent == tmp_path
    assert locks.lock_path(key(), trust.Folder(kernels, os.getegid(), True)).parent == kernels


@pytest.mark.parametrize("mode", [0o3770, 0o2750], ids=["sticky", "owner-writable"])
def test_a_shared_folder_takes_its_lock_in_kernels_it_makes(
    cache: Path, monkeypatch: pytest.MonkeyPatch, mode: int
) -> None:
    """A project folder with the sticky bit (another member could not remove a crashed
    member's lock in it) or not writable by the group (no member but its owner could create
    one; kernels/ made 2770 by the owner): the lock is taken in kernels/, made first when
    missing, and goes with its release."""
    root = cache.parent
    os.chown(root, -1, os.getegid())
    root.chmod(mode)
    if not mode & 0o020:
        make_folder(trust.Folder(cache, os.getegid(), False))
    monkeypatch.setenv(trust.ENV_SHARED, "group")
    with locks.build_once(key()) as (payload, waited):
        assert (payload, waited) == (None, False)
        [lock] = [f for d in (root, cache) for f in d.glob("*" + store.LOCK_SUFFIX)]
        assert lock == cache / (key() + store.LOCK_SUFFIX)
        assert (cache.stat().st_mode & 0o7777) == trust.GROUP_DIR_MODE
    assert not lock.exists() and not list(cache.glob(".tmp-*"))


def _members() -> tuple[int, int, int] | None:
    """Two accounts other than root with the same primary group (say sync and nobody in
    nogroup), and that group: the members of a shared folder the test runs as."""
    by_group: dict[int, list[int]] = {}
    for user in pwd.getpwall():
        if user.pw_uid != 0 and user.pw_gid != 0:
            by_group.setdefault(user.pw_gid, []).append(user.pw_uid)
    for gid, uids in sorted(by_group.items()):
        if len(uids) >= 2:
            return uids[0], uids[1], gid
    return None


def _interpreter_of(uid: int, gid: int, env: dict[str, str], cwd: Path) -> str | None:
    """A Python of this version that account `uid` may run and that imports the cache from
    this checkout: this process's own, else the system's (a virtual environment may link to an
    interpreter in a home folder closed to others)."""
    for python in (sys.executable, shutil.which("python3"), "/usr/bin/python3"):
        if python is None:
            continue
        probe = "import sys, tinytc_py.kernel_cache.locks; print(sys.version_info[:2])"
        try:
            done = subprocess.run(
                [python, "-c", probe],
                env=env,
                cwd=cwd,
                user=uid,
                group=gid,
                extra_groups=[gid],
                capture_output=True,
                text=True,
                timeout=60,
            )
        except OSError:
            continue
        if done.returncode == 0 and done.stdout == f"{sys.version_info[:2]}\n":
            return python
    return None


MEMBER = """
import os, sys
from tinytc_py.kernel_cache import locks, stats, trust
turn = locks.take(sys.argv[1])
path = locks.lock_path(sys.argv[1], trust.check())
if sys.argv[2] == "crash":  # leave the lock, as a rank that crashed in its build
    print(turn._held is not None and path.exists(), flush=True)
    os._exit(0)
print(turn._held is not None and path.exists(), sorted(stats.process().items()), flush=True)
turn.release()
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="runs as two other accounts (root only)")
@pytest.mark.parametrize("mode", [0o3770, 0o2750], ids=["sticky", "owner-writable"])
def test_a_member_removes_the_lock_another_member_left_in_a_shared_folder(
    tmp_path: Path, mode: int
) -> None:
    """Member A takes the build lock in a project folder with the sticky bit, or not writable
    by the group (its kernels/ made 2770 by its owner), and dies holding it; member B, another
    account of the group, removes the stale lock at once and takes its own (where the lock
    lived in the project folder, B could not remove it under the sticky bit and waited for
    the timeout, and A could not create it without the group's write)."""
    members = _members()
    if members is None:
        pytest.skip("no two accounts share a primary group")
    a, b, gid = members
    base = Path(tempfile.mkdtemp())  # tmp_path's parents are closed to other accounts
    try:
        base.chmod(0o755)
        root = base / "project"
        root.mkdir()
        os.chown(root, -1, gid)
        root.chmod(mode)
        if not mode & 0o020:
            kernels = root / trust.SUB
            kernels.mkdir()
            os.chown(kernels, -1, gid)
            kernels.chmod(trust.GROUP_DIR_MODE)
        env = {
            **os.environ,
            "TINYTC_CACHE_DIR": str(root),
            trust.ENV_SHARED: "group",
            locks.ENV_TIMEOUT: "5",
            "PYTHONPATH": str(Path(locks.__file__).parents[2]),  # this checkout's sources
        }
        python = _interpreter_of(a, gid, env, base)
        if python is None:
            pytest.skip("no Python interpreter here that the other accounts may run")

        def member(uid: int, role: str) -> str:
            done = subprocess.run(
                [python, "-c", MEMBER, key(), role],
                env=env,
                cwd=base,
                user=uid,
                group=gid,
                extra_groups=[gid],
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert done.returncode == 0, done.stderr
            return done.stdout

        assert member(a, "crash") == "True\n"  # A made its lock and left it
        assert member(b, "build") == "True [('stale_locks', 1)]\n"  # no lock_timeouts
        assert not [p for p in root.rglob("*") if p.name.endswith(store.LOCK_SUFFIX)]
        assert not [p for p in root.rglob(".tmp-*")]
    finally:
        shutil.rmtree(base)
