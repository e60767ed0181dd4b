"""A compile frees its SPIR-V module and converter by reference counting: neither is a reference
cycle (blocks allocate ids through the module's `Ids`, not a reference back to the module; the
conversion's helpers that would close over the converter in cycles are objects or straight-line
code), so the garbage collector's next scan does not have to visit every word of every block
first. Checked with whichever modules are in use (compiled or sources), on the compile
benchmark's programs."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import pytest

from tinytc_py.compiler import binary_of
from tinytc_py.options import core_info_for_device
from tinytc_py.spirv.convert import Converter
from tinytc_py.spirv.module import Block, Function, Module
from tinytc_py.spirv.tables import Op

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from programs import PROGRAMS  # noqa: E402  (the compile benchmark's programs)

pytestmark = pytest.mark.usefixtures("cold_compiles")

SPIRV_TYPES = (Module, Function, Block, Converter)


def spirv_objects() -> list[str]:
    """The SPIR-V builder objects waiting for the collector (youngest generation)."""
    return [type(o).__name__ for o in gc.get_objects(0) if isinstance(o, SPIRV_TYPES)]


def test_a_module_is_no_reference_cycle() -> None:
    gc.collect()
    gc.disable()
    mod = Module()
    fn = mod.add_function(mod.type_void(), mod.type_function(mod.type_void()))
    blk = fn.add_block()
    i32 = mod.type_int(32)
    blk.op(Op.IAdd, i32, mod.constant(i32, 1), fn.add_parameter(i32))
    assert sorted(spirv_objects()) == ["Block", "Function", "Module"]
    del mod, fn, blk
    assert spirv_objects() == []


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_a_compile_leaves_no_spirv_objects_for_the_collector(name: str) -> None:
    text = PROGRAMS[name].read_text(encoding="utf-8")
    info = core_info_for_device("pvc")
    binary_of(text, info)  # imports and per-process tables made outside the count
    gc.collect()
    gc.disable()
    binary = binary_of(text, info)
    assert binary.data[:4] == b"\x03\x02\x23\x07"  # SPIR-V magic number, little endian
    assert spirv_objects() == []
