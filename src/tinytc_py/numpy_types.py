"""The NumPy type of each scalar type of the tensor language, for everything that moves
scalars between Python and kernels (runtimes, recipes). bf16 has no NumPy type: its values
travel as their uint16 bit patterns."""

from __future__ import annotations

import numpy as np

DTYPES: dict[str, type[np.generic]] = {
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "index": np.int64,
    "bf16": np.uint16,
    "f16": np.float16,
    "f32": np.float32,
    "f64": np.float64,
    "c32": np.complex64,
    "c64": np.complex128,
}
