"""Compiler driver: IR program -> validated SPIR-V binary plus kernel metadata.

`compile_to_spirv(prog, core_info)` runs the default pass pipeline (passes/pipeline.py; it
changes `prog` in place), converts every function (spirv/convert.py), declares the
capabilities and extensions the module uses (spirv/capex.py), checks them against the core
info's SPIR-V features, assembles the module and always runs spirv-val on the result: a
malformed binary can hang the Intel OpenCL runtime forever, so nothing unvalidated leaves here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import CompilationError, Status, TinytcError
from .ir.region import Prog
from .passes.pipeline import run_default_pipeline
from .spirv.assembler import assemble
from .spirv.capex import capex, check_features
from .spirv.convert import ArgInfo, KernelInfo, ParamInfo, convert_prog
from .spirv.validate import SpirvValidationError, validate
from .target.core_info import CoreFeature, CoreInfo, IntelGpuArchitecture


@dataclass
class Binary:
    """A compiled program: SPIR-V bytes, per-kernel metadata and the core feature flags
    (large register file) the runtime must pass to the device compiler."""

    data: bytes
    kernels: dict[str, KernelInfo] = field(default_factory=dict)
    core_features: CoreFeature = CoreFeature(0)
    format: str = "spirv"

    def kernel(self, name: str) -> KernelInfo:
        try:
            return self.kernels[name]
        except KeyError as e:
            raise TinytcError(Status.invalid_arguments, f"no kernel named {name!r}") from e


def default_core_info() -> CoreInfo:
    """PVC, the upstream command-line compiler's default target."""
    return CoreInfo.intel_from_arch(IntelGpuArchitecture.pvc)


def compile_to_spirv(prog: Prog, core_info: CoreInfo | None = None) -> Binary:
    """Compile `prog` for `core_info` (default: PVC); raises CompilationError (rendered with
    the program's sources) or TinytcError."""
    info = core_info if core_info is not None else default_core_info()
    run_default_pipeline(prog, info)
    try:
        module, kernels = convert_prog(prog, info)
        capex(module)
        check_features(module, info, prog.loc)
    except CompilationError as err:
        raise prog.ctx.report(err) from None
    data = assemble(module)
    try:
        validate(data)
    except SpirvValidationError as e:
        raise TinytcError(
            Status.internal_compiler_error, f"generated SPIR-V is invalid (compiler bug):\n{e}"
        ) from e
    features = (
        info.core_features & CoreFeature.large_register_file if info.large_register_file else 0
    )
    return Binary(data, {k.name: k for k in kernels}, CoreFeature(features))


__all__ = ["ArgInfo", "Binary", "KernelInfo", "ParamInfo", "compile_to_spirv", "default_core_info"]
