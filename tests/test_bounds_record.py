"""Bounds-checked mode without a device: the report record's message, the check templates
carried in the binary's metadata through the kernel cache's codec, and where the pipeline runs
the pass."""

from __future__ import annotations

from tinytc_py.bounds_record import RECORD_LENGTH, report_message
from tinytc_py.compiler import compile_to_spirv
from tinytc_py.ir.context import CompilerContext
from tinytc_py.ir.enums import OptFlag
from tinytc_py.kernel_cache.codec import decode, encode
from tinytc_py.passes.pipeline import default_pipeline
from tinytc_py.target.core_info import CoreInfo
from tinytc_py.text.dialect import parse

SOURCE = """\
func @copy(%A: memref<f32x?>, %B: memref<f32x8>) {
  %g = group_id.x : index
  %x = load %A[%g] : f32
  store %x, %B[%g]
}
"""


def checked_binary():
    ctx = CompilerContext()
    ctx.set_optimization_flag(OptFlag.bounds_checks, 1)
    ctx.set_optimization_flag(OptFlag.kernel_cache, 0)
    return compile_to_spirv(parse(SOURCE, ctx, "copy.ir"), CoreInfo.default())


def test_metadata_names_each_check_and_survives_the_cache_codec():
    binary = checked_binary()
    info = binary.kernel("copy")
    assert [p.kind for p in info.params] == ["memref", "memref", "memref"]  # record last
    assert info.params[-1].shape == (RECORD_LENGTH,) and info.params[-1].dtype == "index"
    assert [c.splitlines()[0] for c in info.bounds_checks] == [
        "copy.ir:3.8-24: load: index {index} in mode 0 of %A is out of bounds [0, {bound}) "
        "in work-group {group}",
        "copy.ir:4.3-18: store: index {index} in mode 0 of %B is out of bounds [0, {bound}) "
        "in work-group {group}",
    ]
    assert decode(encode(binary)).kernel("copy").bounds_checks == info.bounds_checks
    unchecked = compile_to_spirv(parse(SOURCE), CoreInfo.default())
    assert unchecked.kernel("copy").bounds_checks is None
    assert len(unchecked.kernel("copy").params) == 2


def test_report_message():
    checks = ["f.ir:1.1: load: index {index} out of [0, {bound}) in work-group {group}"]
    assert report_message(checks, [0] * RECORD_LENGTH) is None
    assert (
        report_message(checks, [3, 1, 9, 8, 2, 1, 0])
        == "f.ir:1.1: load: index 9 out of [0, 8) in work-group (2, 1, 0)"
    )
    assert report_message(checks, [1, 5, 0, 0, 0, 0, 0]) == (
        "out-of-bounds access with unknown check id 5"
    )


def test_pipeline_checks_after_insert_barrier_and_before_the_lowerings():
    names = [p.name for p in default_pipeline(CoreInfo.default(), 2, bounds_checks=True)]
    at = names.index("insert-bounds-checks")
    assert names[at - 1] == "insert-barrier"
    assert at < names.index("lower-linalg") and at < names.index("lower-foreach")
    assert "insert-bounds-checks" not in [p.name for p in default_pipeline(CoreInfo.default())]
