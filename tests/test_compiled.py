"""The mypyc-compiled compiler modules (src/tinytc_py/compiled.py, tools/build_compiled.py):
when built they are the ones imported, they emit the same SPIR-V bytes as the Python sources
(TINYTC_PURE_PYTHON=1), and a source edited after the build turns all of them off."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tinytc_py import compiled

ROOT = Path(__file__).resolve().parent.parent
BUILT = os.path.isfile(os.path.join(compiled.BUILD_DIR, compiled.MANIFEST))
needs_build = pytest.mark.skipif(
    not BUILT or bool(os.environ.get(compiled.PURE_ENV)),
    reason="no compiled modules (make setup builds them) or TINYTC_PURE_PYTHON set",
)

# Every program of these folders, for the GPUs and both CPU ISAs: the compiler's paths
# (lowerings, coopmatrix and DPAS conversion, extensions, bounds checks) and its error
# messages for the programs the lit tests expect to fail.
PROGRAMS = sorted(
    [
        *ROOT.glob("examples/ir/*.ir"),
        *ROOT.glob("benchmarks/programs/*.ir"),
        *ROOT.glob("tests/lit/spv/*.ir"),
        *ROOT.glob("tests/lit/opt/*.ir"),
    ]
)
DEVICES = ("tgl", "pvc", "bmg", "cpu-avx2", "cpu-avx512")

CHILD = """
import hashlib, json, sys
from tinytc_py import compiled
from tinytc_py.compiler import compile_to_spirv
from tinytc_py.errors import TinytcError
from tinytc_py.ir.context import CompilerContext
from tinytc_py.options import core_info_for_device
from tinytc_py.text.dialect import parse

out = {"status": compiled.status()[0]}
for path in sys.argv[2:]:
    text = open(path, encoding="utf-8").read()
    for dev in sys.argv[1].split(","):
        try:
            data = compile_to_spirv(parse(text, CompilerContext()), core_info_for_device(dev)).data
            out[f"{path} {dev}"] = hashlib.sha256(data).hexdigest()
        except TinytcError as e:
            out[f"{path} {dev}"] = f"error: {e}"
print(json.dumps(out))
"""


def _compile_all(pure: bool) -> dict[str, object]:
    env = {**os.environ, "TINYTC_CACHE": "0"}
    env.pop(compiled.PURE_ENV, None)
    if pure:
        env[compiled.PURE_ENV] = "1"
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, ",".join(DEVICES), *map(str, PROGRAMS)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout)


@needs_build
def test_compiled_modules_are_in_use_when_built() -> None:
    in_use, reason = compiled.status()
    assert in_use, reason
    import tinytc_py.passes.fold
    import tinytc_py.passes.pipeline
    import tinytc_py.spirv.module

    for module in (tinytc_py.passes.pipeline, tinytc_py.passes.fold, tinytc_py.spirv.module):
        assert module.__file__ is not None
        assert module.__file__.startswith(compiled.BUILD_DIR), module.__file__
        assert module.__file__.endswith(".so"), module.__file__
    # a compiled package finds its modules by the sources' folder
    import tinytc_py.analysis

    assert tinytc_py.analysis.__file__.startswith(compiled.BUILD_DIR)
    assert list(tinytc_py.analysis.__path__) == [str(ROOT / "src" / "tinytc_py" / "analysis")]


@needs_build
def test_compiled_and_pure_python_emit_the_same_spirv() -> None:
    assert len(PROGRAMS) >= 30
    built, pure = _compile_all(pure=False), _compile_all(pure=True)
    assert built.pop("status") is True
    assert pure.pop("status") is False
    assert built == pure
    # most programs compile (the rest are the lit tests' expected errors, compared too)
    assert sum(not str(v).startswith("error") for v in built.values()) > len(built) // 2


def test_pure_python_env_var_imports_the_sources() -> None:
    code = (
        "import tinytc_py.compiled as c, tinytc_py.passes.fold as f;"
        "print(c.status()[0], f.__file__)"
    )
    env = {**os.environ, compiled.PURE_ENV: "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["False", str(ROOT / "src" / "tinytc_py" / "passes" / "fold.py")]


def _manifest(folder: Path, digest: str, files: dict[str, str]) -> None:
    modules = list(compiled.MODULES)
    (folder / compiled.MANIFEST).write_text(
        json.dumps({"digest": digest, "modules": modules, "files": files}), encoding="utf-8"
    )


def test_a_changed_source_turns_the_compiled_modules_off(tmp_path: Path) -> None:
    (tmp_path / "fold.so").write_bytes(b"")
    digest = compiled.sources_digest(compiled.MODULES)
    _manifest(tmp_path, digest, {"tinytc_py.passes.fold": "fold.so"})
    finder = compiled._Finder(str(tmp_path))
    finder._decide()
    assert finder.paths == {"tinytc_py.passes.fold": str(tmp_path / "fold.so")}
    # the same build, recorded for sources one byte different
    stale = compiled._Finder(str(tmp_path))
    _manifest(tmp_path, digest[:-1] + ("0" if digest[-1] != "0" else "1"), {})
    stale._decide()
    assert stale.paths == {}
    assert stale.reason == "sources changed since the build (make setup rebuilds)"
    assert stale.find_spec("tinytc_py.passes.fold") is None


def test_missing_compiled_files_turn_them_off(tmp_path: Path) -> None:
    _manifest(
        tmp_path, compiled.sources_digest(compiled.MODULES), {"tinytc_py.passes.fold": "x.so"}
    )
    finder = compiled._Finder(str(tmp_path))
    finder._decide()
    assert (finder.paths, finder.reason) == ({}, "compiled files missing")


def test_the_digest_follows_each_listed_source(tmp_path: Path) -> None:
    names = ("tinytc_py.passes.fold", "tinytc_py.spirv.module")
    for name in names:
        path = Path(compiled.source_path(name, str(tmp_path)))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")
    before = compiled.sources_digest(names, str(tmp_path))
    Path(compiled.source_path(names[1], str(tmp_path))).write_text("x = 2\n")
    assert compiled.sources_digest(names, str(tmp_path)) != before


def test_no_final_constants_outside_the_compiled_modules() -> None:
    """mypyc copies the value of a `Final` constant into the compiled code that reads it, also
    from a module it does not compile, whose edits the import guard does not see (its digest
    covers the compiled modules only). Every other use of such a module goes through Python."""
    import re

    final = re.compile(r":\s*(typing\.)?Final\b")
    found = []
    for path in sorted((ROOT / "src" / "tinytc_py").rglob("*.py")):
        rel = path.relative_to(ROOT / "src").with_suffix("")
        name = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        if name in compiled.MODULES:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if final.search(line):
                found.append(f"{rel}.py:{number}: {line.strip()}")
    assert not found, "Final outside compiled.MODULES:\n" + "\n".join(found)
