"""A compile of source text leaves nothing for the cyclic garbage collector to scan (the
compiler dismantles the program it parsed, the passes what they remove, and the SPIR-V
conversion frees its maps: ir/dismantle.py), also through a C API prog handle parsed from
text, while a program the caller holds keeps working after its compile."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tinytc_py.capi import parsed
from tinytc_py.capi.handles import table
from tinytc_py.compiler import binary_of, compile_to_spirv
from tinytc_py.ir.context import CompilerContext
from tinytc_py.ir.inst import Inst
from tinytc_py.ir.region import Region
from tinytc_py.ir.values import Value
from tinytc_py.spirv.module import Block, Function
from tinytc_py.target.core_info import CoreInfo
from tinytc_py.text.dialect import parse
from tinytc_py.text.printer import print_prog

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from compile_time import arith_chain as chain  # noqa: E402  (the benchmark's chain program)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "ir"

# A foreach (lowered, its body cloned twice, the original removed) with a constant to fold and
# dead code to remove, and a gemm (lowered by lower-linalg).
FOREACH = """\
func @k(%x: memref<f32x?>, %y: memref<f32x?>, %A: memref<f32x16x16>, %C: memref<f32x16x16>) {
    %c0 = constant 0 : index
    %n = size %x[0] : index
    %h = constant 0.5 : f32
    %two = constant 2.0 : f32
    %one = constant 1.0 : f32
    %zero = constant 0.0 : f32
    foreach (%i) = (%c0), (%n) {
        %v = load %x[%i] : f32
        %w = mul %v, %h : f32
        %dead = add %w, %two : f32
        %u = mul %w, %one : f32
        store %u, %y[%i]
    }
    gemm.n.n %one, %A, %A, %zero, %C
}
"""


pytestmark = pytest.mark.usefixtures("cold_compiles")


def ir_objects() -> int:
    """IR instructions, regions and values and SPIR-V functions and blocks waiting for the
    collector (youngest generation)."""
    return sum(isinstance(o, (Inst, Region, Value, Function, Block)) for o in gc.get_objects(0))


SOURCES = {
    "foreach": FOREACH,
    "chain": chain(300),
    "gemm.ir": (EXAMPLES / "gemm.ir").read_text(encoding="utf-8"),
    "matvec_batched.ir": (EXAMPLES / "matvec_batched.ir").read_text(encoding="utf-8"),
}


def ir_left_by_compile(text: str) -> int:
    info = CoreInfo.default()
    binary_of(text, info)  # imports and per-process tables made outside the count
    gc.collect()
    gc.disable()
    assert ir_objects() == 0
    binary = binary_of(text, info)
    assert binary.data[:4] == b"\x03\x02\x23\x07"  # SPIR-V magic number, little endian
    return ir_objects()


def test_what_a_compile_leaves_for_the_collector_does_not_grow_with_the_program() -> None:
    """A chain of 400 instructions leaves no more IR for the collector than a chain of 50
    (before: about 5 objects per instruction). With the compiled modules in use, a compiled
    function's closures are cycles of their own that may hold a few values or emptied
    regions; run from the sources nothing is left at all (the next test)."""
    small, large = ir_left_by_compile(chain(50)), ir_left_by_compile(chain(400))
    assert large - small < 10, (small, large)


def test_the_sources_leave_no_ir_at_all() -> None:
    """Run from the pure-Python sources (no closure cycles of compiled code), a compile of text
    leaves not one IR object for the collector."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import test_dismantle as t\n"
        "for name, text in t.SOURCES.items():\n"
        "    left = t.ir_left_by_compile(text)\n"
        "    assert left == 0, (name, left)\n"
        "print('ok', len(t.SOURCES))\n"
    )
    env = {**os.environ, "TINYTC_PURE_PYTHON": "1", "TINYTC_CACHE": "0"}
    here = str(Path(__file__).resolve().parent)
    done = subprocess.run(
        [sys.executable, "-c", code, here], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"ok {len(SOURCES)}"


def test_a_held_program_keeps_working_after_its_compile() -> None:
    """The caller's program (compiled in place) is not dismantled: it prints, has its use
    lists and parents, and compiles again to the same binary."""
    prog = parse(FOREACH, CompilerContext())
    info = CoreInfo.default()
    first = compile_to_spirv(prog, info).data
    printed = print_prog(prog)
    assert "parallel" in printed and "foreach" not in printed
    for func in prog.funcs:
        for inst in func.body.walk():
            assert inst.parent is not None
            for use in inst.uses:
                assert use in use.value.uses
            for v in inst.results:
                assert v.defining_inst is inst
    assert compile_to_spirv(prog, info).data == first
    assert print_prog(prog) == printed


def test_a_c_api_handle_parsed_from_text_leaves_no_ir_and_keeps_its_text() -> None:
    """tinytc_parse_string + tinytc_prog_compile_to_spirv_and_assemble (capi/parsed.py): the
    compile takes the handle's parse for itself and dismantles it, whether the handle parsed
    the text or put its parse off (a text parsed before), and the program the handle gives
    afterwards is the lowered one, as after a compile in place (the handle parses its text
    again and runs the recorded compile's pipeline). A program a call took from its handle
    is dismantled when the handle is released (capi/handles.py).
    Run from the sources, as the test above."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import test_dismantle as t\n"
        "print(*t.c_api_compiles(t.FOREACH))\n"
    )
    env = {**os.environ, "TINYTC_PURE_PYTHON": "1", "TINYTC_CACHE": "0"}
    here = str(Path(__file__).resolve().parent)
    done = subprocess.run(
        [sys.executable, "-c", code, here], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "0", "True", "0", "lowered", "lowered", "0"]
    assert c_api_compiles(FOREACH)[-2] == "lowered"  # the compiled modules give the same program


def c_api_compiles(text: str) -> tuple:
    """Per handle of `text` (the first parses it unless the process parsed it before, the
    second puts its parse off): whether its parse was put off and the IR objects the compile
    left; then, per handle, whether its program after the compile still holds the foreach of
    FOREACH ("foreach") or is lowered; last, the IR objects left once the first program,
    taken from its handle, is compiled in place and both handles are released."""
    info = CoreInfo.default()
    ctx = CompilerContext()
    ctx_addr = table.new_shared("compiler_context", ctx)
    binary_of(text, info)  # imports and per-process tables made outside the count
    gc.collect()
    gc.disable()
    result: list = []
    entries = []
    try:
        for _ in range(2):
            entry = table.by_addr[parsed.parse_to_handle(text, "<memory>", ctx, ctx_addr)]
            entries.append(entry)
            result.append(entry.source.put_off)
            binary = parsed.binary_of_handle(entry, info)
            assert binary.data[:4] == b"\x03\x02\x23\x07"
            result.append(ir_objects())
        for entry in entries:
            entry.source.settle(entry)  # what table.get does when a call takes the program
            printed = print_prog(entry.obj)
            result.append("foreach" if "foreach" in printed else "lowered")
        parsed.binary_of_handle(entries[0], info)  # by the program now: compiled in place
        for entry in entries:
            table.release_addr(table.by_obj[("prog", id(entry.obj))])
        entries.clear()
        del entry, binary
        result.append(ir_objects())  # the released programs were dismantled
    finally:
        for entry in entries:
            table.release_addr(table.by_obj[("prog", id(entry.obj))])
        table.release_addr(ctx_addr)
    return tuple(result)
