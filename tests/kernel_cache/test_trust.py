"""Who may write the kernel cache's folder (trust.py): a folder others could write, or one of
another user, turns caching off with one warning that says why and how to fix it, and nothing
is read from it or written to it; the group-shared mode takes a project folder of the user's
group, writes group-readable entries of that group and reads no others. The tests run as any
user; those that need a folder or an entry of another owner create it with os.chown, which
only root may do, and are skipped otherwise. Who is in a group comes from the account
database, which `accounts` replaces for trust.py alone with one the test describes."""

from __future__ import annotations

import grp
import os
import pwd
import shutil
import stat
import warnings
from pathlib import Path

import pytest

from tinytc_py import kernel_cache
from tinytc_py.compiler import binary_of
from tinytc_py.ir.context import CompilerContext
from tinytc_py.kernel_cache import stats, store, trust, writer
from tinytc_py.kernel_cache.keys import spirv_key
from tinytc_py.target.core_info import CoreInfo

from .test_spirv_cache import assert_same, fresh_compile, gemm

OTHER = 54321  # a user and group id nobody here has
needs_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="a folder or entry of another owner is made with chown (root only)"
)
ME = pwd.getpwuid(os.geteuid()).pw_name


class Accounts:
    """An account database with the user (primary group: the process's group, named after the
    user, no listed members) and the accounts and members a test adds; in place of `pwd` and
    `grp` for trust.py only."""

    def __init__(self) -> None:
        gid = os.getegid()
        self.users = [pwd.struct_passwd((ME, "x", os.geteuid(), gid, "", "/", "/bin/sh"))]
        self.groups = {gid: grp.struct_group((ME, "x", gid, []))}

    def add_user(self, name: str, uid: int, gid: int) -> None:
        self.users.append(pwd.struct_passwd((name, "x", uid, gid, "", "/", "/bin/sh")))

    def add_member(self, gid: int, name: str) -> None:
        self.groups[gid].gr_mem.append(name)

    def getpwall(self) -> list[pwd.struct_passwd]:
        return list(self.users)

    def getpwuid(self, uid: int) -> pwd.struct_passwd:
        for user in self.users:
            if user.pw_uid == uid:
                return user
        raise KeyError(uid)

    def getgrgid(self, gid: int) -> grp.struct_group:
        return self.groups[gid]


def forget_accounts() -> None:
    """Drop trust.py's per-process answers about accounts and groups."""
    trust._private_group.cache_clear()
    trust._in_group.cache_clear()


@pytest.fixture
def accounts(monkeypatch: pytest.MonkeyPatch) -> Accounts:
    db = Accounts()
    monkeypatch.setattr(trust, "pwd", db)
    monkeypatch.setattr(trust, "grp", db)
    forget_accounts()
    yield db
    forget_accounts()


def filled(root: Path) -> Path:
    """`root` holding the SPIR-V entry of gemm(16), written by a trusted cache; returns the
    entry's path."""
    os.environ["TINYTC_CACHE_DIR"] = str(root)
    binary_of(gemm(16), CoreInfo.default())
    kernel_cache.clear_memo()
    stats.reset_process()
    key = spirv_key(gemm(16), CoreInfo.default(), CompilerContext())
    return root / "kernels" / (key + store.SUFFIX)


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
    }


def assert_refused(root: Path, why: str) -> None:
    """Three lookups (one of them an entry the folder holds) all compile, with one warning
    matching `why`; nothing in the folder is read or changed."""
    before = snapshot(root)
    with pytest.warns(RuntimeWarning, match=why) as caught:
        binaries = [binary_of(gemm(m), CoreInfo.default()) for m in (16, 24, 16)]
    assert len(caught) == 1, [str(w.message) for w in caught]
    assert stats.process() == {"compiles": 3}
    assert_same(binaries[0], fresh_compile(gemm(16)))
    assert snapshot(root) == before


@pytest.mark.parametrize("where", ["root", "kernels"])
def test_world_writable_folder_turns_caching_off(cache: Path, where: str) -> None:
    root = cache.parent
    filled(root)
    folder = root if where == "root" else cache
    folder.chmod(0o777)
    assert_refused(
        root, f"{folder} is writable by everyone .*caching is off. Fix: chmod go-w {folder}"
    )


@needs_root
@pytest.mark.parametrize("where", ["root", "kernels"])
def test_folder_of_another_user_turns_caching_off(cache: Path, where: str) -> None:
    root = cache.parent
    filled(root)
    folder = root if where == "root" else cache
    os.chown(folder, OTHER, OTHER)
    assert_refused(root, f"{folder} belongs to uid {OTHER}, not to you .*caching is off")


@needs_root
def test_folder_writable_by_a_shared_group_turns_caching_off(cache: Path) -> None:
    root = cache.parent
    filled(root)
    os.chown(cache, -1, OTHER)
    cache.chmod(0o770)
    assert_refused(root, f"writable by the members of group {OTHER} .*chmod go-w {cache}")


def test_users_private_group_may_write(cache: Path) -> None:
    """Group write is fine when the group is the user's own private group (umask 002)."""
    if not trust._private_group(os.getegid()):
        pytest.skip("the user's primary group is not a private group")
    filled(cache.parent)
    cache.chmod(0o770)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        binary_of(gemm(16), CoreInfo.default())
    assert stats.process() == {"spirv_hits": 1}


def test_private_group_takes_no_account_whose_primary_group_it_is(
    cache: Path, accounts: Accounts
) -> None:
    """The user's group, named after the user, with no listed members may write the folder;
    once another account has it as primary group (so is in it without being listed), it
    may not."""
    filled(cache.parent)
    cache.chmod(0o770)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        binary_of(gemm(16), CoreInfo.default())
    assert stats.process() == {"spirv_hits": 1}
    accounts.add_user("bob", OTHER, os.getegid())
    forget_accounts()
    kernel_cache.clear_memo()
    stats.reset_process()
    cache.chmod(0o775)  # another mode: the folder is checked again
    assert_refused(cache.parent, f"writable by the members of group {ME} .*chmod go-w {cache}")


@needs_root
def test_entry_of_another_owner_is_not_read(cache: Path) -> None:
    entry = filled(cache.parent)
    os.chown(entry, OTHER, -1)
    binary = binary_of(gemm(16), CoreInfo.default())
    counts = stats.process()  # untrusted: the lookup's refused read (SPIR-V takes no lock)
    assert counts["untrusted"] == 1
    assert (counts["compiles"], counts.get("spirv_hits", 0)) == (1, 0)
    assert_same(binary, fresh_compile(gemm(16)))
    assert entry.stat().st_uid == os.geteuid()  # replaced by the user's own


def test_a_write_if_absent_leaves_a_readable_entry_and_replaces_an_untrusted_one(
    cache: Path,
) -> None:
    """store.put(if_absent=True), the SPIR-V miss's write: an entry of that name that may be
    read (another process's write of the same payload) stays as it is, the very file; one of
    another owner, which would never be read, is replaced by the user's own."""
    store.put("entry", b"first")
    kept = (cache / ("entry" + store.SUFFIX)).stat()
    store.put("entry", b"second", if_absent=True)
    now = (cache / ("entry" + store.SUFFIX)).stat()
    assert (now.st_ino, now.st_mtime_ns) == (kept.st_ino, kept.st_mtime_ns)
    assert store.get("entry") == b"first"
    os.chown(cache / ("entry" + store.SUFFIX), OTHER, -1)
    store.put("entry", b"third", if_absent=True)
    assert (cache / ("entry" + store.SUFFIX)).stat().st_uid == os.geteuid()
    assert store.get("entry") == b"third"


@pytest.fixture
def project(cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The cache folder, shared in group mode; not created (`shared` creates it)."""
    root = cache.parent / "project"
    monkeypatch.setenv("TINYTC_CACHE_DIR", str(root))
    monkeypatch.setenv(trust.ENV_SHARED, "group")
    return root


def shared(root: Path, mode: int = 0o2770) -> Path:
    """`root` created as a folder of the user's group with `mode`."""
    root.mkdir()
    os.chown(root, -1, os.getegid())
    root.chmod(mode)
    return root


def test_group_mode_accepts_a_folder_of_the_users_group(project: Path) -> None:
    root = shared(project)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        first = binary_of(gemm(16), CoreInfo.default())
        kernel_cache.clear_memo()
        second = binary_of(gemm(16), CoreInfo.default())
    assert stats.process()["spirv_hits"] == 1
    assert_same(second, first)
    kernels = root / "kernels"
    assert (kernels.stat().st_gid, stat.S_IMODE(kernels.stat().st_mode)) == (os.getegid(), 0o2770)
    for f in kernels.iterdir():  # the entry and the statistics: the group's, group-readable
        assert f.stat().st_gid == os.getegid(), f
        assert f.stat().st_mode & stat.S_IRGRP and not f.stat().st_mode & stat.S_IWOTH, f


def test_group_mode_refuses_a_world_writable_folder(project: Path) -> None:
    root = shared(project, 0o2777)
    assert_refused(root, f"{root} is writable by everyone .*chmod o-w {root}")
    assert not (root / "kernels").exists()


def test_group_mode_refuses_a_missing_folder(project: Path) -> None:
    with pytest.warns(RuntimeWarning, match=f"shared folder {project} does not exist.*chmod 2770"):
        binary_of(gemm(16), CoreInfo.default())
    assert not project.exists()


@needs_root
def test_group_mode_refuses_a_group_the_user_is_not_in(project: Path) -> None:
    root = shared(project)
    os.chown(root, -1, OTHER)
    assert_refused(root, f"belongs to group {OTHER}, which you are not in")


@needs_root
def test_group_mode_reads_only_entries_of_the_group(project: Path) -> None:
    root = shared(project)
    entry = filled(root)
    os.chown(entry, -1, OTHER)
    binary = binary_of(gemm(16), CoreInfo.default())
    assert stats.process()["untrusted"] >= 1
    assert (stats.process()["compiles"], stats.process().get("spirv_hits", 0)) == (1, 0)
    assert_same(binary, fresh_compile(gemm(16)))
    assert entry.stat().st_gid == os.getegid()


@needs_root
@pytest.mark.parametrize("where", ["root", "kernels"])
def test_group_mode_refuses_a_folder_an_outsider_owns(project: Path, where: str) -> None:
    """Of the right group and mode, but its owner is not in the group: the owner could make it
    writable to anyone, or write it and have the setgid bit give the entries the group."""
    root = shared(project)
    filled(root)
    folder = root if where == "root" else root / "kernels"
    os.chown(folder, OTHER, -1)
    group = grp.getgrgid(os.getegid()).gr_name
    assert_refused(
        root, f"{folder} belongs to uid {OTHER}, who is not in its group {group} .*chown it"
    )


@needs_root
def test_group_mode_reads_no_entry_an_outsider_wrote(project: Path) -> None:
    """An entry of the folder's group (as the setgid bit gives it) owned by an outsider."""
    root = shared(project)
    entry = filled(root)
    os.chown(entry, OTHER, -1)
    assert entry.stat().st_gid == os.getegid()
    binary = binary_of(gemm(16), CoreInfo.default())
    assert stats.process()["untrusted"] >= 1
    assert (stats.process()["compiles"], stats.process().get("spirv_hits", 0)) == (1, 0)
    assert_same(binary, fresh_compile(gemm(16)))
    assert entry.stat().st_uid == os.geteuid()


@needs_root
@pytest.mark.parametrize("membership", ["primary", "listed"])
def test_group_mode_takes_the_folder_and_entries_of_a_member(
    project: Path, accounts: Accounts, membership: str
) -> None:
    """Folder, kernels/ and entry owned by another member of the group, by primary group or
    listed as a member: used, and the entry is read."""
    root = shared(project)
    entry = filled(root)
    if membership == "primary":
        accounts.add_user("carol", OTHER, os.getegid())
    else:
        accounts.add_user("carol", OTHER, OTHER)
        accounts.add_member(os.getegid(), "carol")
    for path in (root, root / "kernels", entry):
        os.chown(path, OTHER, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        binary = binary_of(gemm(16), CoreInfo.default())
    assert stats.process() == {"spirv_hits": 1}
    assert_same(binary, fresh_compile(gemm(16)))


def test_unknown_shared_mode_turns_caching_off(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(trust.ENV_SHARED, "world")
    with pytest.warns(RuntimeWarning, match="TINYTC_CACHE_SHARED='world' is not one of"):
        binary_of(gemm(16), CoreInfo.default())
    assert stats.process() == {"compiles": 1}
    assert not cache.exists()


def test_new_folders_are_private(cache: Path) -> None:
    root = cache.parent / "new"
    shutil.rmtree(root, ignore_errors=True)
    os.environ["TINYTC_CACHE_DIR"] = str(root)
    binary_of(gemm(16), CoreInfo.default())
    writer.wait()  # kernels/ is made by the entry's write, behind
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert stat.S_IMODE((root / "kernels").stat().st_mode) == 0o700


def test_a_folder_changed_right_after_its_check_is_checked_again(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process makes kernels/ writable by everyone just after this process checked it
    (between its check and the record that lets later lookups skip the check): the next
    lookup sees a folder other than the one checked and refuses it. The record is of the
    folders as checked, not of a second look at them."""
    cache.mkdir(parents=True, mode=0o700)
    check_private = trust._check_private

    def checked_then_opened(folder: Path, st: os.stat_result) -> None:
        check_private(folder, st)
        if folder == cache:
            cache.chmod(0o777)

    monkeypatch.setattr(trust, "_check_private", checked_then_opened)
    assert trust.checked() is not None  # this lookup lost the race
    monkeypatch.setattr(trust, "_check_private", check_private)
    with pytest.warns(RuntimeWarning, match=f"{cache} is writable by everyone"):
        assert trust.checked() is None
