"""The printf extension (docs/extensions.md) on the CPU OpenCL device: the device's output is
compared with Python's %-formatting of the same values (C's conversions), for every type printf
accepts.

The runtime writes to the process's standard output (file descriptor 1) when the kernel
finishes, so the test reads it through pytest's capfd.
"""

from __future__ import annotations

import numpy as np

from .support import build

KERNEL = r"""
func @k(%i8: i8, %i16: i16, %i32: i32, %i64: i64, %idx: index, %h: f16, %f: f32, %d: f64,
        %b: bf16) attributes {subgroup_size=8, work_group_size=[8,1]} {
    parallel {
        %lid = subgroup_local_id : i32
        %two = constant 2 : i32
        %first = less_than %lid, %two : bool
        %c = constant 33 : i8
        if %first {
            printf "lane %d: %hhd %hd %d %ld %lx|%5.1f %f %.3e %g|%c%c%%\n", %lid, %i8, %i16, %i32, %i64, %idx, %h, %f, %d, %b, %i32, %c
        }
    }
}
"""


def test_printf_values(capfd):
    capfd.readouterr()
    args = (-5, -300, 77, -(2**40), 0xBEEF, np.float16(2.5), np.float32(-1.25), 6.0e23)
    build(KERNEL).kernel("k")(*args, 0.75, num_groups=(1, 1, 1))  # bf16 arguments are floats
    out = capfd.readouterr().out
    row = "%hhd %hd %d %ld %lx|%5.1f %f %.3e %g|%c%c%%".replace("h", "").replace("l", "")
    values = (-5, -300, 77, -(2**40), 0xBEEF, 2.5, -1.25, 6.0e23, 0.75, 77, 33)
    text = row % values
    want = "".join(f"lane {lane}: {text}\n" for lane in range(2))
    assert sorted(out.splitlines()) == sorted(want.splitlines())
