"""The in-process validator's arena (capi/spirv_val/arena.c), driven from a C program: what
outlives a validation is counted and bounded, and the first validation takes no arena."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ARENA = Path(__file__).resolve().parents[2] / "capi" / "spirv_val" / "arena.c"

# The driver first runs validations that free everything they allocate: one of 3 MiB in 32 KiB
# pieces outgrows the first chunk, so its arena is consolidated into one chunk, and a small one
# rewinds that chunk. Then each "validation" leaves one object alive (as a static the validator
# makes on first use would). It prints the abandoned bytes after each validation, and at the
# end how many kept objects lost their byte pattern (temporaries are filled with 0xEE, so an
# abandoned chunk handed out again would show).
DRIVER = r"""
#include <stddef.h>
#include <stdio.h>
#include <string.h>
void arena_begin(void);
void arena_end(void);
size_t arena_abandoned_bytes(void);
void *_Znwm(size_t n);
void _ZdlPv(void *p);

#define PIECE (32u << 10)

static void *filled(size_t n, int byte) { return memset(_Znwm(n), byte, n); }

/* A validation that allocates `bytes` in pieces and frees all of them. */
static void churn(size_t bytes) {
    void *piece[128];
    size_t n = bytes / PIECE;
    arena_begin();
    for (size_t i = 0; i < n; i++) {
        piece[i] = filled(PIECE, 0xEE);
    }
    for (size_t i = 0; i < n; i++) {
        _ZdlPv(piece[i]);
    }
    arena_end();
    printf("%zu\n", arena_abandoned_bytes());
}

int main(void) {
    void *kept[40];
    churn(PIECE);     /* the first validation: malloc */
    churn(3u << 20);  /* chunks of 1, 2 and 4 MiB, replaced by one of 8 MiB */
    churn(4 * PIECE); /* rewinds the 8 MiB chunk */
    for (int i = 0; i < 40; i++) {
        arena_begin();
        void *temporary = filled(200, 0xEE);
        kept[i] = filled(100, i + 1);
        _ZdlPv(temporary);
        arena_end();
        printf("%zu\n", arena_abandoned_bytes());
    }
    churn(3u << 20); /* past the bound: malloc, abandons nothing */
    int corrupt = 0;
    unsigned char want[100];
    for (int i = 0; i < 40; i++) {
        corrupt += memcmp(kept[i], memset(want, i + 1, 100), 100) != 0;
        _ZdlPv(kept[i]); /* abandoned objects: nothing; malloc'd ones: freed */
    }
    printf("%d\n", corrupt);
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
    # Validations that free everything abandon nothing, on every path of arena_end.
    assert counts[:3] == [0, 0, 0]
    # The first keep-alive validation abandons its arena's one chunk, the 8 MiB that the 3 MiB
    # validation left (the first power of two of MiB holding its 1 + 2 + 4 MiB); the next take
    # a fresh 1 MiB chunk each until 16 MiB are abandoned, after which validations use malloc.
    assert counts[3:13] == [8 * mib + k * mib for k in range(9)] + [16 * mib]
    assert counts[13:44] == [16 * mib] * 31
    assert counts[44] == 0  # no kept object was overwritten
    assert len(counts) == 45
