"""The compiler modules compiled ahead of time with mypyc, and the import hook that loads them.

The Python sources stay the reference: `make setup` (tools/build_compiled.py) compiles the
modules of `MODULES` into build/mypyc/ of the checkout, together with a manifest holding the
digest of their sources. Importing one of them takes the compiled module only if

- ``TINYTC_PURE_PYTHON`` is unset or empty (``TINYTC_PURE_PYTHON=1`` runs the sources),
- the manifest exists (no mypyc or no C compiler at setup: nothing was built), and
- the digest of the sources now equals the manifest's (an edited source turns all of them off,
  as compiled modules call each other's native code directly: all or none).

Otherwise every module is imported from its .py file, as without this hook. The check reads
the sources once per process, at the first import of a listed module (`status` says what was
decided and why). The output is the same either way (tests/test_compiled.py), so the kernel
cache's compiler version (kernel_cache/version.py, a digest of the sources) holds for both.
An installed wheel carries the sources only.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from types import ModuleType

MODULES: tuple[str, ...] = (
    "tinytc_py.analysis",
    "tinytc_py.analysis.coopmatrix_layout",
    "tinytc_py.analysis.gcd",
    "tinytc_py.analysis.gemm_model",
    "tinytc_py.analysis.kernel_interface",
    "tinytc_py.analysis.memory",
    "tinytc_py.analysis.stack",
    "tinytc_py.analysis.tiling",
    "tinytc_py.ir",
    "tinytc_py.ir.attrs",
    "tinytc_py.ir.checks",
    "tinytc_py.ir.context",
    "tinytc_py.ir.enums",
    "tinytc_py.ir.extensions",
    "tinytc_py.ir.global_data",
    "tinytc_py.ir.inst",
    "tinytc_py.ir.nesting",
    "tinytc_py.ir.printf_format",
    "tinytc_py.ir.region",
    "tinytc_py.ir.types",
    "tinytc_py.ir.uniformity",
    "tinytc_py.ir.values",
    "tinytc_py.ir.verify",
    "tinytc_py.ir.ops",
    "tinytc_py.ir.ops.arith",
    "tinytc_py.ir.ops.blas",
    "tinytc_py.ir.ops.common",
    "tinytc_py.ir.ops.control",
    "tinytc_py.ir.ops.coopmatrix",
    "tinytc_py.ir.ops.extensions",
    "tinytc_py.ir.ops.folds",
    "tinytc_py.ir.ops.leaves",
    "tinytc_py.ir.ops.memory",
    "tinytc_py.ir.ops.spmd",
    "tinytc_py.passes.base",
    "tinytc_py.passes.check_ir",
    "tinytc_py.passes.clone",
    "tinytc_py.passes.constant_propagation",
    "tinytc_py.passes.dead_code_elimination",
    "tinytc_py.passes.dump_def_use",
    "tinytc_py.passes.dump_gcd",
    "tinytc_py.passes.dump_ir",
    "tinytc_py.passes.dump_values",
    "tinytc_py.passes.fold",
    "tinytc_py.passes.insert_barrier",
    "tinytc_py.passes.insert_bounds_checks",
    "tinytc_py.passes.insert_lifetime_stop",
    "tinytc_py.passes.lower_coopmatrix",
    "tinytc_py.passes.lower_foreach",
    "tinytc_py.passes.lower_linalg",
    "tinytc_py.passes.lower_linalg_collective",
    "tinytc_py.passes.lower_linalg_common",
    "tinytc_py.passes.lower_linalg_elementwise",
    "tinytc_py.passes.lower_linalg_gemm",
    "tinytc_py.passes.pass_builder",
    "tinytc_py.passes.pipeline",
    "tinytc_py.passes.registry",
    "tinytc_py.passes.set_stack_ptr",
    "tinytc_py.passes.work_group_size",
    "tinytc_py.spirv.assembler",
    "tinytc_py.spirv.capex",
    "tinytc_py.spirv.convert",
    "tinytc_py.spirv.convert.atomics",
    "tinytc_py.spirv.convert.base",
    "tinytc_py.spirv.convert.control",
    "tinytc_py.spirv.convert.coopmatrix",
    "tinytc_py.spirv.convert.coopmatrix_dpas",
    "tinytc_py.spirv.convert.coopmatrix_memory",
    "tinytc_py.spirv.convert.extensions",
    "tinytc_py.spirv.convert.memory",
    "tinytc_py.spirv.convert.metadata",
    "tinytc_py.spirv.convert.scalar",
    "tinytc_py.spirv.convert.spmd",
    "tinytc_py.spirv.dump",
    "tinytc_py.spirv.module",
    "tinytc_py.text.dialect",
    "tinytc_py.text.extension_syntax",
    "tinytc_py.text.legacy_insts",
    "tinytc_py.text.legacy_parser",
    "tinytc_py.text.lexer",
    "tinytc_py.text.parser",
    "tinytc_py.text.preprocessor",
    "tinytc_py.text.printer",
    "tinytc_py.text.syntax",
    "tinytc_py.text.upgrade",
)
"""The compiled modules: the one list to extend (tools/build_compiled.py builds these).

Not listed: modules whose functions tests replace with monkeypatch (a compiled caller calls a
compiled callee directly, past the module attribute) and whose own time is small anyway:
compiler.py (the driver; tests/test_gc_pause.py, tests/test_self_checks.py),
spirv/validate.py (a call into SPIRV-Tools; tests/spirv/test_spirv_validate.py) and
spirv/convert/visa.py (the vISA text of 2D block messages; tests/emulate/test_emulate.py). Nor,
as mypyc cannot compile it as it is: the SPIR-V grammar tables (spirv/tables.py: plain class
attributes read as constants)."""

GROUP = "tinytc_py"
"""mypyc's name for the group: its shared library is the top-level module `tinytc_py__mypyc`."""

PACKAGE = os.path.dirname(os.path.abspath(__file__))
BUILD_DIR = os.path.join(os.path.dirname(os.path.dirname(PACKAGE)), "build", "mypyc")
MANIFEST = "manifest.json"
PURE_ENV = "TINYTC_PURE_PYTHON"


def source_path(module: str, package: str = PACKAGE) -> str:
    """The .py file of a listed module under the package folder `package` (a package's
    __init__.py)."""
    base = os.path.join(package, *module.split(".")[1:])
    return os.path.join(base, "__init__.py") if os.path.isdir(base) else base + ".py"


def sources_digest(modules: Sequence[str], package: str = PACKAGE) -> str:
    """Digest of the names and contents of the modules' sources (what the manifest records)."""
    h = hashlib.sha256()
    for name in modules:
        with open(source_path(name, package), "rb") as f:
            data = f.read()
        h.update(f"{name}:{len(data)}:".encode())
        h.update(data)
    return h.hexdigest()


class _Finder:
    """A meta path finder that answers for the listed modules (and the group's shared library)
    with the extension modules of build/mypyc, once their sources are found unchanged."""

    def __init__(self, build_dir: str) -> None:
        self.build_dir = build_dir
        self.decided = False
        self.paths: dict[str, str] = {}  # module -> extension file, when in use
        self.packages: dict[str, str] = {}  # compiled package -> its sources' folder
        self.reason = "no listed module imported yet"

    def _decide(self) -> None:
        self.decided = True
        try:
            with open(os.path.join(self.build_dir, MANIFEST), encoding="utf-8") as f:
                manifest = json.load(f)
            if manifest["digest"] != sources_digest(manifest["modules"]):
                self.reason = "sources changed since the build (make setup rebuilds)"
                return
            paths = {m: os.path.join(self.build_dir, p) for m, p in manifest["files"].items()}
        except (OSError, ValueError, KeyError, TypeError) as e:
            self.reason = f"unreadable manifest: {e}"
            return
        if not all(os.path.isfile(p) for p in paths.values()):
            self.reason = "compiled files missing"
            return
        self.paths = paths
        self.reason = "compiled modules in use"

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in _ANSWERS:
            # a module not compiled in a compiled package (also while the package's own body
            # runs, before its __path__ is set right): from the sources
            folder = self.packages.get(fullname.rpartition(".")[0])
            return (
                None
                if folder is None
                else importlib.machinery.PathFinder.find_spec(fullname, [folder])
            )
        if not self.decided:
            self._decide()
        so = self.paths.get(fullname)
        if so is None:
            return None
        source = source_path(fullname) if fullname in MODULES else ""
        if not source.endswith("__init__.py"):
            loader = importlib.machinery.ExtensionFileLoader(fullname, so)
            return importlib.util.spec_from_file_location(fullname, so, loader=loader)
        folder = os.path.dirname(source)
        self.packages[fullname] = folder
        return importlib.util.spec_from_file_location(
            fullname, so, loader=_PackageLoader(fullname, so), submodule_search_locations=[folder]
        )


class _PackageLoader(importlib.machinery.ExtensionFileLoader):
    """A compiled package whose __path__ is its sources' folder (mypyc sets the extension's)."""

    def exec_module(self, module: ModuleType) -> None:
        super().exec_module(module)
        module.__path__ = [os.path.dirname(source_path(module.__name__))]


_ANSWERS = frozenset((*MODULES, f"{GROUP}__mypyc"))
_finder: _Finder | None = None


def install() -> None:
    """Put the finder first on sys.meta_path, unless pure Python is asked for or nothing was
    built (called once, by the package's __init__)."""
    global _finder
    if os.environ.get(PURE_ENV) or _finder is not None:
        return
    if not os.path.isfile(os.path.join(BUILD_DIR, MANIFEST)):
        return
    _finder = _Finder(BUILD_DIR)
    sys.meta_path.insert(0, _finder)


def status() -> tuple[bool, str]:
    """Whether the compiled modules are in use, and why (or why not)."""
    if os.environ.get(PURE_ENV) and _finder is None:
        return False, f"{PURE_ENV} is set"
    if _finder is None:
        return False, f"not built ({os.path.join(BUILD_DIR, MANIFEST)} missing)"
    if not _finder.decided:
        _finder._decide()
    return bool(_finder.paths), _finder.reason
