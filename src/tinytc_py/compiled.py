"""The compiler modules compiled ahead of time with mypyc, and the import hook that loads them.

The Python sources stay the reference: `make setup` (tools/build_compiled.py) compiles the
modules of `MODULES` into build/mypyc/ of the checkout, together with a manifest holding the
digest of the package's sources and the Python and mypy the build used. Importing one of them
takes the compiled module only if

- ``TINYTC_PURE_PYTHON`` is unset, empty or says off (``0``, ``off``, ``false``, ``no``), as
  ``TINYTC_CACHE`` is read (``TINYTC_PURE_PYTHON=1`` runs the sources),
- the package is a checkout (build/mypyc next to src/; an installed wheel carries the sources
  only) and the manifest exists (no mypyc or no C compiler at setup: nothing was built),
- the manifest lists exactly `MODULES` and was built for this Python (its extension suffix and
  version: an extension is loaded by its path, past the interpreter's own ABI check), and
- the digest of every .py file of the package now equals the manifest's. Every file, not just
  the listed ones: mypyc bakes the annotations and classes of the uncompiled modules a compiled
  one imports (errors, target/, spirv/tables.py...) into the compiled code, and compiled modules
  call each other's native code directly, so an edit anywhere turns all of them off.

Otherwise every module is imported from its .py file, as without this hook. The check reads
the sources once per process, at the first import of a listed module (`status` says what was
decided and why; reading and hashing the package's 1.4 MB costs a few milliseconds). The
output is the same either way (tests/test_compiled.py), so the kernel cache's compiler version
(kernel_cache/version.py, a digest of the sources) holds for both.

A test that replaces a function of a listed module with monkeypatch does not reach compiled
callers (they call the native function directly): such tests observe the effect instead, or
run the code in a subprocess with ``TINYTC_PURE_PYTHON=1`` (tests/test_self_checks.py).
Even in pure mode the SPIR-V converter keeps the handler methods it looked up in a
process-wide table (spirv/convert/base.py `_HANDLERS`): a monkeypatched handler seen by one
compile outlives the patch's undo, so such a test runs in a subprocess too.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
import threading
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
    "tinytc_py.capi.handles",
    "tinytc_py.capi.parsed",
    "tinytc_py.ir.attrs",
    "tinytc_py.ir.checks",
    "tinytc_py.ir.context",
    "tinytc_py.ir.dismantle",
    "tinytc_py.ir.enums",
    "tinytc_py.ir.extensions",
    "tinytc_py.ir.global_data",
    "tinytc_py.ir.inst",
    "tinytc_py.ir.nesting",
    "tinytc_py.ir.ops",
    "tinytc_py.ir.ops.arith",
    "tinytc_py.ir.ops.blas",
    "tinytc_py.ir.ops.common",
    "tinytc_py.ir.ops.control",
    "tinytc_py.ir.ops.coopmatrix",
    "tinytc_py.ir.ops.extensions",
    "tinytc_py.ir.ops.families",
    "tinytc_py.ir.ops.folds",
    "tinytc_py.ir.ops.leaves",
    "tinytc_py.ir.ops.memory",
    "tinytc_py.ir.ops.spmd",
    "tinytc_py.ir.printf_format",
    "tinytc_py.ir.region",
    "tinytc_py.ir.types",
    "tinytc_py.ir.uniformity",
    "tinytc_py.ir.values",
    "tinytc_py.ir.verify",
    "tinytc_py.location",
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
compiler.py (the driver; tests/test_gc_pause.py),
spirv/validate.py (a call into SPIRV-Tools; tests/spirv/test_spirv_validate.py) and
spirv/convert/visa.py (the vISA text of 2D block messages; tests/emulate/test_emulate.py).

A listed module that meets user input (ir/ and text/: the parser, the builder and the C API
create the IR's types and instructions) is checked by mypy with every error code on: mypyc turns
each annotation into a run-time check, so an annotation mypy did not verify would give malformed
input a bare TypeError instead of its located error. Where a caller passes what the user gave,
the parameter says so (`object`, `Any`) and the function checks it itself
(tests/test_compiled_input.py). Not listed for that reason: the IR builder (ir/builder.py,
ir/builder_methods.py), whose parameters are annotated for the user's type checker, not
checked, and whose own time is small. Nor the SPIR-V grammar tables (spirv/tables.py): their
members are `Final` class attributes, which compiled callers read as inlined constants."""

GROUP = "tinytc_py"
"""mypyc's name for the group: its shared library is the top-level module `tinytc_py__mypyc`."""

PACKAGE = os.path.dirname(os.path.abspath(__file__))
BUILD_DIR = os.path.join(os.path.dirname(os.path.dirname(PACKAGE)), "build", "mypyc")
MANIFEST = "manifest.json"
PURE_ENV = "TINYTC_PURE_PYTHON"


def pure_python_asked() -> bool:
    """Whether `PURE_ENV` asks for the Python sources (read as TINYTC_VALIDATE is). The import
    stays here: setup.py loads this file by its path, outside the package."""
    from .environ import says_on

    return says_on(os.environ.get(PURE_ENV))


def is_checkout(package: str = PACKAGE) -> bool:
    """Whether the package is a checkout's src/tinytc_py (pyproject.toml two folders up), where
    build/mypyc belongs to it; not an installed package."""
    src = os.path.dirname(package)
    return os.path.basename(src) == "src" and os.path.isfile(
        os.path.join(os.path.dirname(src), "pyproject.toml")
    )


def source_path(module: str, package: str = PACKAGE) -> str:
    """The .py file of a listed module under the package folder `package` (a package's
    __init__.py)."""
    base = os.path.join(package, *module.split(".")[1:])
    return os.path.join(base, "__init__.py") if os.path.isdir(base) else base + ".py"


def sources_digest(package: str = PACKAGE, content: bool = False) -> str:
    """Digest of the .py files under `package` (without __pycache__): of their relative path,
    size and modification time, or of their path and `content` (what the compiled modules'
    manifest and a wheel record: a file's time changes without its content)."""
    parts: list[str] = []

    def walk(folder: str, rel: str) -> None:
        with os.scandir(folder) as it:
            found = sorted(it, key=lambda e: e.name)
        for e in found:
            if e.name.endswith(".py"):
                if content:
                    with open(e.path, "rb") as f:
                        parts.append(f"{rel}{e.name}:{hashlib.sha256(f.read()).hexdigest()};")
                else:
                    st = e.stat()
                    parts.append(f"{rel}{e.name}:{st.st_size}:{st.st_mtime_ns};")
            elif e.name != "__pycache__" and e.is_dir():
                walk(e.path, f"{rel}{e.name}/")

    walk(package, "")
    digest = hashlib.sha256("".join(parts).encode()).hexdigest()[:16]
    if content:
        _content_digests[os.path.abspath(package)] = digest
    return digest


_content_digests: dict[str, str] = {}
"""Package folder -> the content digest `sources_digest` last computed for it in this process."""


def content_digest_computed(package: str = PACKAGE) -> str | None:
    """The digest of `package`'s sources' content as this process last computed it (the
    import hook does at the first import of a listed module), or None when it did not: the
    kernel cache's compiler version in a checkout takes it instead of a second walk."""
    return _content_digests.get(os.path.abspath(package))


def build_target() -> dict[str, str]:
    """What an extension module is built for (the manifest records it): this Python's extension
    suffix (its ABI) and version."""
    return {"suffix": importlib.machinery.EXTENSION_SUFFIXES[0], "python": sys.version}


def stale(manifest: dict[str, object], package: str = PACKAGE) -> str:
    """Why the build `manifest` describes cannot be used with these sources and this Python
    ("" when it can). The mypy version is the build script's concern (it rebuilds for another)."""
    if manifest.get("modules") != list(MODULES):
        return "the manifest lists other modules than MODULES (make setup rebuilds)"
    for key, value in build_target().items():
        if manifest.get(key) != value:
            return f"built for another Python ({key} {manifest.get(key)!r}, not {value!r})"
    if manifest.get("digest") != sources_digest(package, content=True):
        return "sources changed since the build (make setup rebuilds)"
    return ""


class _Finder:
    """A meta path finder that answers for the listed modules (and the group's shared library)
    with the extension modules of build/mypyc, once their sources are found unchanged."""

    def __init__(self, build_dir: str) -> None:
        self.build_dir = build_dir
        self.decided = False
        self.lock = threading.Lock()
        self.paths: dict[str, str] = {}  # module -> extension file, when in use
        self.packages: dict[str, str] = {}  # compiled package -> its sources' folder
        self.reason = "no listed module imported yet"

    def decide(self) -> None:
        """Decides once, under the lock: a thread that imports a listed module while another
        decides waits for the decision (else it would import the sources: a mix of pure and
        compiled classes)."""
        if self.decided:
            return
        with self.lock:
            if not self.decided:
                self.paths, self.reason = self._decide()
                self.decided = True

    def _decide(self) -> tuple[dict[str, str], str]:
        try:
            with open(os.path.join(self.build_dir, MANIFEST), encoding="utf-8") as f:
                manifest = json.load(f)
            why = stale(manifest)
            if why:
                return {}, why
            paths = {m: os.path.join(self.build_dir, p) for m, p in manifest["files"].items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            return {}, f"unreadable manifest: {e!r}"
        if set(paths) != _ANSWERS:
            return {}, "the manifest's files are not those of MODULES"
        if not all(os.path.isfile(p) for p in paths.values()):
            return {}, "compiled files missing"
        return paths, "compiled modules in use"

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
        self.decide()
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
    """Put the finder first on sys.meta_path, unless pure Python is asked for, the package is
    not a checkout or nothing was built (called once, by the package's __init__)."""
    global _finder
    if _finder is not None or pure_python_asked() or not is_checkout():
        return
    if not os.path.isfile(os.path.join(BUILD_DIR, MANIFEST)):
        return
    _finder = _Finder(BUILD_DIR)
    sys.meta_path.insert(0, _finder)


def status() -> tuple[bool, str]:
    """Whether the compiled modules are in use, and why (or why not)."""
    if _finder is None:
        if pure_python_asked():
            return False, f"{PURE_ENV} is set"
        if not is_checkout():
            return False, "an installed package (only a checkout's make setup compiles)"
        return False, f"not built ({os.path.join(BUILD_DIR, MANIFEST)} missing)"
    _finder.decide()
    return bool(_finder.paths), _finder.reason
