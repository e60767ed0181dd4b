"""Helpers (imported by the tests) for executing tensor-language kernels on the CPU OpenCL device.

Built programs are cached per source text (the CPU runtime's SPIR-V JIT takes 0.1-1 s per
program). Every program goes through compile_to_spirv, which runs spirv-val on the module.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

pytest.importorskip("pyopencl")

from tinytc_py.runtime import device as _device  # noqa: E402  (sets OCL_ICD_VENDORS first)
from tinytc_py.runtime.opencl import Program, program  # noqa: E402


@functools.cache
def _device_or_none():
    try:
        return _device.default_device()
    except RuntimeError:
        return None


@functools.cache
def build(text: str) -> Program:
    """The program of `text`, compiled (and spirv-val validated) and built once."""
    if _device_or_none() is None:
        pytest.skip("no SPIR-V capable OpenCL device")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return program(text)


def bf16_bits(x) -> np.ndarray:
    """float32 -> bf16 bits (round to nearest even)."""
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_value(bits) -> np.ndarray:
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)
