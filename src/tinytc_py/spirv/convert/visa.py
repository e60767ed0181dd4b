"""The vISA text of the 2D block messages (load, store, prefetch) that coopmatrix_dpas.py emits
as inline assembly.

Kept out of the mypyc-compiled modules (compiled.py): tests/emulate replaces `_payload` here to
check that the emulator catches a wrong payload, which a compiled caller would not see."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .coopmatrix_dpas import Block2d


def _payload(p: str, q: str, ptr: str, w: str, h: str, pitch: str, cfg: Block2d) -> list[str]:
    """Declare payload `p` (8 ud, aliased as 4 uq by `q`) and fill all but x and y."""
    return [
        f".decl {p} v_type=G type=ud num_elts=8 align=wordx32",
        f".decl {q} v_type=G type=uq num_elts=4 align=wordx32 alias=<{p},0>",
        f"mov (M1,1) {q}(0,0)<1> {ptr}(0,0)<0;1,0>",
        f"add (M1,1) {p}(0,2)<1> {w}(0,0)<0;1,0> -1:d",
        f"add (M1,1) {p}(0,3)<1> {h}(0,0)<0;1,0> -1:d",
        f"add (M1,1) {p}(0,4)<1> {pitch}(0,0)<0;1,0> -1:d",
        f"mov (M1,1) {p}(0,7)<1> 0x{cfg.shape_dword:x}:ud",
    ]


def _coords(p: str, x: str, y: str, dx: int, dy: int) -> list[str]:
    """Payload x and y of the message at (dx, dy) from the matrix origin."""
    return [
        f"add (M1,1) {p}(0,{k})<1> {src}(0,0)<0;1,0> {delta}:d"
        if delta
        else f"mov (M1,1) {p}(0,{k})<1> {src}(0,0)<0;1,0>"
        for k, src, delta in ((5, x, dx), (6, y, dy))
    ]


def block2d_asm(
    kind: str,
    cfg: Block2d,
    plan: Sequence[tuple[int, int, int, int]],
    first_arg: int,
    data: int,
    names: Iterator[str],
    desc: int,
) -> str:
    """vISA of a 2D block load ("load", data pieces are outputs $data...), store (data pieces
    are inputs $data...) or prefetch (no data). The surface arguments are $first_arg.. in the
    order pointer, width bytes, height, pitch bytes, pos0, pos1."""
    ptr, w, h, pitch, x, y = (f"${first_arg + k}" for k in range(6))
    p, q = next(names), next(names)
    lines = ["{", *_payload(p, q, ptr, w, h, pitch, cfg)]
    if cfg.shift:
        xs = next(names)
        lines += [
            f".decl {xs} v_type=G type=d num_elts=1 align=dword",
            f"shr (M1,1) {xs}(0,0)<1> {x}(0,0)<0;1,0> {cfg.shift}:d",
        ]
        x = xs
    for dx, dy, piece, off in plan:
        lines += _coords(p, x, y, dx, dy)
        reg = f"${data + piece}.{off}"
        if kind == "load":
            lines.append(
                f"raw_sends.15.1.0.{cfg.grfs} (M1, 1) 0x0:ud 0x{desc:x}:ud {p}.0 %null.0 {reg}"
            )
        elif kind == "store":
            lines.append(
                f"raw_sends.15.1.{cfg.grfs}.0 (M1, 1) 0x0:ud 0x{desc:x}:ud {p}.0 {reg} %null.0"
            )
        else:
            lines.append(f"raw_sends.15.1.0.0 (M1, 1) 0x0:ud 0x{desc:x}:ud {p}.0 %null.0 %null.0")
    lines.append("}")
    return "\n".join(lines) + "\n"
