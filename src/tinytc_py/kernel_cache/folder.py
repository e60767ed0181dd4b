"""Making the kernels folder, and the layout of the statistics file it is born with.

A new shared `kernels/` folder is prepared under a temporary name (mode, group, and its
statistics file saying the folder began empty) and renamed into place, so another process never
sees it half made; a per-user one is made in place, with its final mode, and marked later,
behind, if it still holds no entry. The statistics file's name and its two non-counter keys,
and the entries' suffix, live here because the folder's creation and mark depend on them;
stats.py keeps the counters (and names these constants too), store.py the entries.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
from pathlib import Path

from . import trust, writer

FILE = "stats.json"
SUFFIX = ".entry"
"""The name ending of an entry file (store.py), the only files whose bytes the statistics
count."""
GROUP_MODE = 0o660  # in a shared folder every member of the group adds to the totals
EPOCH = "epoch"
"""Not a counter: a random id a new file (first update, cleared or damaged) starts with, so
store.py can tell its running totals began again."""
FROM_EMPTY = "from_empty"
"""Not a counter: 1 in a file whose epoch began with an empty folder (`_start_empty` wrote it
into the folder before the folder took its name, or behind after making it, while it held no
entry: `_make_private`), so every byte in the folder was counted in its bytes_written: store.py
then knows a bound on the folder's size without listing it. A file made again later (cleared
or damaged) never has it: the folder may hold entries by then."""


def make_folder(folder: trust.Folder) -> None:
    """Create the kernels folder if it is missing, so that another process never sees it
    with the wrong group or mode: private for a user (made in place), group-writable with the
    setgid bit for a shared one (prepared under a temporary name and renamed into place). The
    cache folder above is created when missing."""
    if folder.exists or (folder.group is not None and folder.path.is_dir()):
        return  # (a per-user folder's mkdir says whether it exists)
    try:
        _make(folder)
    except FileNotFoundError:
        folder.path.parent.mkdir(parents=True, exist_ok=True, mode=trust.USER_DIR_MODE)
        _make(folder)


def _make(folder: trust.Folder) -> None:
    """`make_folder` below an existing cache folder; raises OSError when it cannot be made
    and no folder of that name exists. A per-user folder is made in place (`_make_private`);
    a shared one under a temporary name: the temporary folder gets its mode and group, then,
    while it is known to be empty, the statistics file that says so (`_start_empty`: the
    size bound then needs no listing of a new folder). Several processes may make the folder
    at once, and a rename onto an existing folder succeeds when that folder is empty (Linux),
    so more than one rename may succeed; but each prepared folder holds its statistics file,
    so a rename never replaces one of them, and whichever folder ends up in place carries a
    correct mark (one found empty, say after its statistics file was removed, held nothing
    to lose)."""
    if folder.group is None:
        _make_private(folder)
        return
    tmp = folder.path.with_name(f"{_UNFINISHED}{secrets.token_hex(6)}")
    tmp.mkdir(mode=trust.USER_DIR_MODE)
    try:
        os.chown(tmp, -1, folder.group)
        os.chmod(tmp, trust.GROUP_DIR_MODE)
        _start_empty(trust.Folder(tmp, folder.group, True))
        os.rename(tmp, folder.path)
    except OSError:
        with contextlib.suppress(OSError):
            for leftover in tmp.iterdir():
                leftover.unlink()
            tmp.rmdir()
        if not folder.path.is_dir():
            raise


_UNFINISHED = f".tmp-{trust.SUB}-"
"""The name of a shared folder being prepared (`_make`), before a random suffix of 12 hex digits."""
_UNFINISHED_NAME = re.compile(re.escape(_UNFINISHED) + "[0-9a-f]{12}")


def remove_unfinished(root: Path) -> None:
    """Remove the shared folders that `_make` left half prepared in the cache folder `root`
    (their process died before the rename), with the files in them; `tinytc-cache clear`.
    One being prepared right now goes too: its maker's next step fails with FileNotFoundError,
    and `make_folder` then prepares another. Only real folders of that name, opened without
    following a link, and only the files in them are removed, so a link or anything placed
    in a folder others can write never leads the removal elsewhere."""
    try:
        root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        with os.scandir(root_fd) as it:
            names = [e.name for e in it if _UNFINISHED_NAME.fullmatch(e.name)]
        for name in names:
            with contextlib.suppress(OSError):
                fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=root_fd)
                try:
                    with os.scandir(fd) as it:
                        files = [e.name for e in it if not e.is_dir(follow_symlinks=False)]
                    for file in files:
                        with contextlib.suppress(OSError):
                            os.unlink(file, dir_fd=fd)
                finally:
                    os.close(fd)
                os.rmdir(name, dir_fd=root_fd)
    finally:
        os.close(root_fd)


def _make_private(folder: trust.Folder) -> None:
    """A per-user folder needs no preparing: `mkdir` gives it its final mode (700) as it
    appears, so it is made in place, on a first start by the entry's write behind (a SPIR-V
    lookup takes no build lock, and a device build's lock lives in the cache folder above:
    locks.lock_path), or by the first statistics update when that comes first (a first compile
    that failed). Its statistics file is then marked as begun empty: at once where the writer makes the folder (a job the writer
    submits runs at once), else queued for the writer without starting it (writer.py), so the
    mark never shares the CPU with a compile. It comes before this process's first entry or
    statistics update: both make the folder first and then wait for the mark (store.put,
    stats._add_to_totals). `_mark_empty` says why a late mark is true."""
    try:
        os.mkdir(folder.path, trust.USER_DIR_MODE)
    except FileExistsError:
        if folder.path.is_dir():
            return  # another process made it
        raise
    writer.submit(lambda: _mark_empty(folder), str(folder.path / FILE), start=False)


def _mark_empty(folder: trust.Folder) -> None:
    """The writer's job of `_make_private`: the begun-empty mark, written only when the folder
    holds no entry and no statistics file yet (`_start_empty`), which keeps it true however
    late it comes. An entry another process renames into place after the listing here is
    counted after that (store.put): in a statistics file it made first (then no mark is
    written) or in the marked one. A statistics file made before and lost since (`tinytc-cache
    clear` removes it, then the entries) can leave uncounted entries only where the listing
    sees them. (A mark queued without this check was wrong where others' entries and a loss of
    their statistics came between the folder's creation and the mark.) A mark that cannot be
    written is left out: the folder is then listed when its size matters, as one not known to
    have begun empty."""
    with contextlib.suppress(OSError):
        with os.scandir(folder.path) as it:
            if any(e.name.endswith(SUFFIX) for e in it):
                return
        _start_empty(folder)


def _start_empty(where: trust.Folder) -> None:
    """Write the statistics file of a new kernels folder, empty when it was made (make_folder):
    a new epoch, marked `FROM_EMPTY`. The file is written whole under a temporary name and then
    linked to its name, which fails when the name exists: another process's count
    (stats._add_to_totals, which creates the file under its lock) never sees the mark half
    written nor has its count overwritten by it; that process's file then stays, unmarked."""
    tmp = where.path / f".tmp-{FILE}-{secrets.token_hex(6)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        try:
            trust.share(fd, where, GROUP_MODE)
            os.write(fd, json.dumps({EPOCH: secrets.randbits(62), FROM_EMPTY: 1}).encode())
        finally:
            os.close(fd)
        with contextlib.suppress(FileExistsError):
            os.link(tmp, where.path / FILE)
    finally:
        os.unlink(tmp)
