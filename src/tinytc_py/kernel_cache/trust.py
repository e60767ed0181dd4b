"""Whether the kernel cache may use its folder: the cache loads native device code from it, so
whoever can write the folder can run code in every process that reads it.

Two modes, chosen by `TINYTC_CACHE_SHARED`:
- per user (unset, or `user`): the cache folder and its `kernels/` sub-folder must belong to
  the user and not be writable by anyone else. Group write is allowed only for the user's
  private group (named after the user, no other account in it: none listed as a member and
  none with it as primary group), which many distributions give each user with a umask of
  002. Entries must belong to the user.
- `group` (a project folder): the folder must exist, belong to a group the user is in and to
  an owner in that group (or root), and not be writable by everyone; `kernels/` must have the
  same group and an owner in it too. Entries are written readable and owned by that group, and
  a reader only takes entries of that group whose owner is in the group: an outsider who owned
  the folder could change its mode, and one who can write it gets entries of the group from
  the setgid bit.
A folder that fails the check turns caching off for it (reading, writing, statistics, locks),
with one warning per folder and reason that says why and how to fix it. The checks look at the
owner and mode bits, not at access(2): root may write anything, yet its folder must be as
private as anyone's. Every lookup checks again whether the folders' owner, group or mode
changed (two stat calls), so a folder fixed or broken while a process runs is seen at its
next lookup.
"""

from __future__ import annotations

import functools
import grp
import os
import pwd
import stat
import warnings
from dataclasses import dataclass
from pathlib import Path

from ..cache_dir import ENV_DIR, cache_root

ENV_SHARED = "TINYTC_CACHE_SHARED"
SHARED_MODES = ("user", "group")
SUB = "kernels"
USER_DIR_MODE = 0o700
GROUP_DIR_MODE = 0o2770  # setgid: files created inside take the folder's group
GROUP_FILE_MODE = 0o640


@dataclass(frozen=True)
class Folder:
    """The kernels folder the cache may use; `group` is the group id of a shared folder
    (None for a per-user folder); `exists`: whether it existed when checked."""

    path: Path
    group: int | None
    exists: bool


class Untrusted(Exception):
    """Why a folder may not be used (the message says why and how to fix it)."""


_Ident = tuple[tuple[int, int, int, int, int], ...]
_passed: dict[tuple[str | None, ...], tuple[str, str, _Ident, Folder]] = {}
"""The last folder that passed, per setting of the variables that choose the folder and the
mode, with the identity, owner and mode of the root and kernels/ it had (a repeated check
compares them in two stat calls, a fifth of the full check's cost)."""


def checked() -> Folder | None:
    """The kernels folder when the cache may use it, else None (after one warning)."""
    env = os.environ
    setting = (env.get(ENV_DIR), env.get(ENV_SHARED), env.get("XDG_CACHE_HOME"), env.get("HOME"))
    last = _passed.get(setting)
    if last is not None and _ident(last[0], last[1]) == last[2]:
        return last[3]
    try:
        folder, seen = _check()
    except Untrusted as why:
        _warn_once(str(why))
        return None
    if len(seen) == 2:  # both folders exist (else checked again, once they do)
        _passed[setting] = (str(folder.path.parent), str(folder.path), _ident_of(seen), folder)
    return folder


def _ident(*folders: str) -> _Ident | None:
    found = []
    for folder in folders:
        try:
            found.append(os.stat(folder))
        except OSError:
            return None
    return _ident_of(found)


def _ident_of(stats: list[os.stat_result]) -> _Ident:
    return tuple((st.st_dev, st.st_ino, st.st_uid, st.st_gid, st.st_mode) for st in stats)


def check() -> Folder:
    """The kernels folder, or raises Untrusted. A per-user folder that does not exist yet is
    fine: `folder.make_folder` creates it private."""
    return _check()[0]


def _check() -> tuple[Folder, list[os.stat_result]]:
    """`check`, and the stats of the folders it checked that exist (the cache folder, then
    `kernels/`): what `checked` compares later lookups with, as checked, not stat again."""
    root = cache_root()
    mode = os.environ.get(ENV_SHARED, "").strip().lower() or "user"
    if mode not in SHARED_MODES:
        raise Untrusted(
            f"{ENV_SHARED}={mode!r} is not one of {', '.join(SHARED_MODES)}; "
            f"caching is off. Fix: unset {ENV_SHARED}, or set it to 'group' for a project folder"
        )
    kernels = root / SUB
    seen: list[os.stat_result] = []
    if mode == "user":
        for folder in (root, kernels):
            sub = _stat(folder)
            if sub is None:
                break  # nothing inside a missing folder
            _check_private(folder, sub)
            seen.append(sub)
        return Folder(kernels, None, len(seen) == 2), seen
    st = _stat(root)
    if st is None:
        raise Untrusted(
            f"the shared folder {root} does not exist; caching is off. Fix: create it for the "
            f"project's group: mkdir {root} && chgrp GROUP {root} && chmod 2770 {root}"
        )
    _check_group(root, st, st.st_gid)
    seen.append(st)
    sub = _stat(kernels)
    if sub is not None:
        _check_group(kernels, sub, st.st_gid)
        seen.append(sub)
    return Folder(kernels, st.st_gid, sub is not None), seen


def _stat(folder: Path) -> os.stat_result | None:
    try:
        st = os.stat(folder)
    except FileNotFoundError:
        return None
    except OSError as err:
        raise Untrusted(f"cannot inspect {folder} ({err.strerror or err}); caching is off") from err
    if not stat.S_ISDIR(st.st_mode):
        raise Untrusted(
            f"{folder} is not a folder; caching is off. Fix: point TINYTC_CACHE_DIR at a folder"
        )
    return st


def _check_private(folder: Path, st: os.stat_result) -> None:
    uid = os.geteuid()
    if st.st_uid != uid:
        raise Untrusted(
            f"{folder} belongs to {_user(st.st_uid)}, not to you ({_user(uid)}), and device "
            "code read from it would run as you; caching is off. Fix: point TINYTC_CACHE_DIR "
            f"at a folder of your own, or for a project folder set {ENV_SHARED}=group"
        )
    if st.st_mode & stat.S_IWOTH or (st.st_mode & stat.S_IWGRP and not _private_group(st.st_gid)):
        raise Untrusted(
            f"{folder} is writable by {_writers(st)} (mode {stat.S_IMODE(st.st_mode):o}), who "
            f"could place device code there that runs as you; caching is off. Fix: chmod go-w "
            f"{folder}, or for a project folder set {ENV_SHARED}=group"
        )


def _check_group(folder: Path, st: os.stat_result, gid: int) -> None:
    if st.st_gid != gid:
        raise Untrusted(
            f"{folder} belongs to group {_group(st.st_gid)}, not to the shared folder's group "
            f"{_group(gid)}; caching is off. Fix: chgrp -R {_group(gid)} {folder}"
        )
    if gid != os.getegid() and gid not in os.getgroups():
        raise Untrusted(
            f"{folder} belongs to group {_group(gid)}, which you are not in, so its entries "
            f"cannot be trusted; caching is off. Fix: chgrp it to the project's group, or "
            f"unset {ENV_SHARED} and use a folder of your own"
        )
    if not _in_group(st.st_uid, gid):
        raise Untrusted(
            f"{folder} belongs to {_user(st.st_uid)}, who is not in its group {_group(gid)} "
            f"and could place device code there that runs as you; caching is off. Fix: chown "
            f"it to a member of {_group(gid)}"
        )
    if st.st_mode & stat.S_IWOTH:
        raise Untrusted(
            f"{folder} is writable by everyone (mode {stat.S_IMODE(st.st_mode):o}), who could "
            f"place device code there that runs as you; caching is off. Fix: chmod o-w {folder}"
        )


def entry_trusted(st: os.stat_result, folder: Folder) -> bool:
    """Whether an entry file may be read: the user's own (per-user folder), or of the folder's
    group and written by one of its members (shared folder), and not writable by those the
    folder keeps out."""
    if folder.group is None:
        return st.st_uid == os.geteuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    return (
        st.st_gid == folder.group
        and not st.st_mode & stat.S_IWOTH
        and _in_group(st.st_uid, folder.group)
    )


def share(fd: int, folder: Folder, mode: int = GROUP_FILE_MODE) -> None:
    """Give a file this process created in a shared folder the folder's group and `mode`
    (readers take only entries of that group); nothing for a per-user folder."""
    if folder.group is not None:
        os.fchown(fd, -1, folder.group)
        os.fchmod(fd, mode)


def _writers(st: os.stat_result) -> str:
    if st.st_mode & stat.S_IWOTH:
        return "everyone"
    return f"the members of group {_group(st.st_gid)}"


@functools.cache
def _private_group(gid: int) -> bool:
    """A user private group: the user's primary group, named after the user, with no other
    account in it, neither listed as a member nor having it as primary group (looked up once
    per process: on a cluster the lookup may ask a directory, and the list of accounts holds
    only those the directory lets the machine enumerate)."""
    try:
        group = grp.getgrgid(gid)
        user = pwd.getpwuid(os.geteuid())
    except KeyError:
        return False
    if user.pw_gid != gid or group.gr_name != user.pw_name or set(group.gr_mem) - {user.pw_name}:
        return False
    return all(other.pw_uid == user.pw_uid for other in pwd.getpwall() if other.pw_gid == gid)


@functools.cache
def _in_group(uid: int, gid: int) -> bool:
    """Whether account `uid` may write a folder of group `gid` as a member: the user (who is
    in the group when this is asked), root (who may write anything anyway), an account whose
    primary group it is, or one listed as its member (looked up once per owner and process)."""
    if uid in (os.geteuid(), 0):
        return True
    try:
        account = pwd.getpwuid(uid)
        members = grp.getgrgid(gid).gr_mem
    except KeyError:
        return False
    return account.pw_gid == gid or account.pw_name in members


def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _group(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


_warned: set[str] = set()


def _warn_once(message: str) -> None:
    if message in _warned:
        return
    _warned.add(message)
    warnings.warn(f"tinytc kernel cache: {message}", RuntimeWarning, stacklevel=4)
