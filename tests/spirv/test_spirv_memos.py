"""The converter's shared-record memos (spirv/convert/metadata.py) and the SPIR-V string memo
(spirv/module.py): a record or string handed out again must be the one this compile asks for,
and every memo stays within its cap."""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest

from tinytc_py.binary import ParamInfo
from tinytc_py.compiler import binary_of
from tinytc_py.options import core_info_for_device
from tinytc_py.spirv import module as spirv_module
from tinytc_py.spirv.convert import metadata

pytestmark = pytest.mark.usefixtures("cold_compiles")

COPY = """func @k(%A: memref<f32x8>, %B: memref<f32x8>) {
  %g = group_id.x : index
  %v = load %A[%g] : f32
  store %v, %B[%g]
}
"""


def params(text: str, info) -> list[ParamInfo]:
    return binary_of(text, info).kernel("k").params


@pytest.mark.parametrize("alignment", [128.0, np.int64(128)])
def test_a_non_int_default_alignment_is_recorded_as_an_int(alignment) -> None:
    info = core_info_for_device("pvc")
    info.default_alignment = alignment
    first = params(COPY, info)
    assert [p.alignment for p in first] == [128, 128]
    assert all(type(p.alignment) is int for p in first)
    plain = core_info_for_device("pvc")
    plain.default_alignment = 128
    later = params(COPY.replace("@k", "@k ").replace("%v", "%w"), plain)
    assert all(type(p.alignment) is int for p in later)


def test_records_differ_by_written_and_alignment() -> None:
    info = core_info_for_device("pvc")
    info.default_alignment = 64
    a, b = params(COPY, info)
    assert (a.name, a.written, a.alignment) == ("A", False, 64)
    assert (b.name, b.written, b.alignment) == ("B", True, 64)
    swapped = COPY.replace("%v, %B", "%v, %A").replace("load %A", "load %B")
    a, b = params(swapped, info)
    assert (a.written, b.written) == (True, False)
    info.default_alignment = 16
    a, b = params(COPY, info)
    assert (a.alignment, b.alignment) == (16, 16)


def test_param_info_defaults_are_the_records_defaults() -> None:
    sig = inspect.signature(metadata.param_info)
    fields = dataclasses.fields(ParamInfo)
    assert list(sig.parameters) == [f.name for f in fields]
    for f in fields:
        default = sig.parameters[f.name].default
        want = inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default
        assert default == want, f.name


def test_the_param_memo_stays_within_its_cap() -> None:
    for i in range(metadata.PARAM_MEMO_SIZE + 10):
        rec = metadata.param_info("scalar", "i32", 0, 1, name=f"p{i}")
        assert rec.name == f"p{i}"
        assert len(metadata._PARAM_INFOS) <= metadata.PARAM_MEMO_SIZE
    assert metadata.param_info("scalar", "i32", 0, 1, name="p0").name == "p0"


def test_the_string_memo_stays_within_its_cap_and_keeps_short_strings_only() -> None:
    memo = spirv_module._STRING_WORDS
    for i in range(spirv_module.STRING_MEMO_SIZE + 10):
        words = spirv_module._string_words_memo(f"s{i}")
        assert words == spirv_module.string_words(f"s{i}")
        assert len(memo) <= spirv_module.STRING_MEMO_SIZE
    long = "x" * (spirv_module.STRING_MEMO_LENGTH + 1)
    assert spirv_module._string_words_memo(long) == spirv_module.string_words(long)
    assert long not in memo
    short = "y" * spirv_module.STRING_MEMO_LENGTH
    spirv_module._string_words_memo(short)
    assert short in memo
