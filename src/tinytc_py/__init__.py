"""tinytc-py: the Tiny Tensor Compiler in Python (tensor language → SPIR-V for OpenCL/Level Zero)."""

from .errors import CompilationError, Location, Position, Status, TinytcError

__all__ = ["CompilationError", "Location", "Position", "Status", "TinytcError"]
