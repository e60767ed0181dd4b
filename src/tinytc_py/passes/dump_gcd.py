"""dump-gcd: prints what analysis/gcd.py knows about every integer and memref value, in upstream
tinytc-opt's format:

    GCD in @f
      offset_gcd(%A) = 32          (the function's parameters first)
      shape_gcd(%A) = [16,4]
      stride_gcd(%A) = [1,16]
    > %0 = mul %c16, %i : index    (an instruction that defines values or holds regions)
      gcd(%0) = 16                 (each integer it defines; 1: nothing known, 0: zero)

Memref facts are in elements (see analysis/gcd.py). Run set-stack-ptr first for the allocas'
offsets; the default alignment is the core info's (tinytc-opt -d).
"""

from __future__ import annotations

from collections.abc import Iterator

from ..analysis.gcd import memref_gcd, value_gcd
from ..ir.types import MemrefType, NumberType
from ..ir.values import Value
from ..target.core_info import CoreInfo
from ..text.printer import SummaryPrinter
from .base import FunctionPass
from .dump_values import dump_values


def _ints(values: tuple[int, ...]) -> str:
    return "[" + ",".join(str(v) for v in values) + "]"


class DumpGcd(FunctionPass):
    name = "dump-gcd"
    dumps = True

    def __init__(self, core_info: CoreInfo | None = None) -> None:
        self.alignment = (core_info or CoreInfo.default()).default_alignment

    def _gcds(self, printer: SummaryPrinter, value: Value) -> Iterator[str]:
        name = printer.ref(value)
        if isinstance(value.type, NumberType) and value.type.is_integer:
            yield f"  gcd({name}) = {value_gcd(value)}"
        elif isinstance(value.type, MemrefType):
            info = memref_gcd(value, self.alignment)
            yield f"  offset_gcd({name}) = {info.offset}"
            yield f"  shape_gcd({name}) = {_ints(info.shape)}"
            yield f"  stride_gcd({name}) = {_ints(info.stride)}"

    def run(self, func, ctx, out) -> None:
        dump_values(func, out, "GCD", self._gcds, with_params=True)
