"""TINYTC_VALIDATE: whether the compiler checks its own output.

Two checks look only for compiler bugs, never for a user's mistake: check-ir after the lowerings
(the first check-ir, on the program as written, always runs) and SPIRV-Tools' validator on the
emitted module. Together they cost about 15-25 % of a cold compile, so, as LLVM and clang run
their verifier only in debug builds, the compiler runs them when TINYTC_VALIDATE=1 is set (the
test suite sets it for itself and every program it starts) and always in bounds-checked mode,
the debugging mode (docs/performance.rst).
"""

from __future__ import annotations

from . import environ

ENV_VALIDATE = "TINYTC_VALIDATE"


def requested() -> bool:
    """Whether TINYTC_VALIDATE asks for the self-checks (read on each compile, so a host may
    switch it at any time)."""
    return environ.says_on(environ.get(ENV_VALIDATE))
