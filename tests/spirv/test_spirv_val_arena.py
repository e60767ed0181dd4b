"""The in-process validator's arena (capi/spirv_val/arena.c), driven from a C program: what
outlives a validation is counted and bounded, and the first validation takes no arena."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ARENA = Path(__file__).resolve().parents[2] / "capi" / "spirv_val" / "arena.c"

# Each "validation" leaves one object alive (as a static the validator makes on first use
# would); the program prints the abandoned bytes after each and whether the object came from
# an arena chunk (the counter grew).
DRIVER = r"""
#include <stddef.h>
#include <stdio.h>
void arena_begin(void);
void arena_end(void);
size_t arena_abandoned_bytes(void);
void *_Znwm(size_t n);
void _ZdlPv(void *p);

int main(void) {
    void *kept[40];
    for (int i = 0; i < 40; i++) {
        arena_begin();
        void *temporary = _Znwm(200);
        kept[i] = _Znwm(100);
        _ZdlPv(temporary);
        arena_end();
        printf("%zu\n", arena_abandoned_bytes());
    }
    for (int i = 0; i < 40; i++) {
        _ZdlPv(kept[i]); /* abandoned objects: nothing; malloc'd ones: freed */
    }
    arena_begin(); /* a validation that leaves nothing alive abandons nothing */
    _ZdlPv(_Znwm(100));
    arena_end();
    printf("%zu\n", arena_abandoned_bytes());
    return 0;
}
"""


def test_abandoned_chunks_are_counted_and_bounded(tmp_path):
    cc = shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    (tmp_path / "driver.c").write_text(DRIVER)
    exe = tmp_path / "driver"
    subprocess.run(
        [cc, "-O1", "-o", str(exe), str(tmp_path / "driver.c"), str(ARENA), "-pthread"],
        check=True,
    )
    counts = [int(line) for line in subprocess.run(
        [str(exe)], check=True, capture_output=True, text=True
    ).stdout.split()]  # fmt: skip
    mib = 1 << 20
    # The first validation uses malloc; then each abandons its arena's 1 MiB chunk until
    # 16 MiB are abandoned, after which validations use malloc and abandon nothing.
    assert counts[:18] == [0] + [k * mib for k in range(1, 17)] + [16 * mib]
    assert counts[18:] == [16 * mib] * 23
