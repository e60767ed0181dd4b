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
    import tinytc_py.location
    import tinytc_py.passes.fold
    import tinytc_py.passes.pipeline
    import tinytc_py.spirv.module

    # location.py too, which the package's __init__ imports (through errors.py) right after
    # installing the finder
    compiled_modules = (
        tinytc_py.passes.pipeline,
        tinytc_py.passes.fold,
        tinytc_py.spirv.module,
        tinytc_py.location,
    )
    for module in compiled_modules:
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


# Input for which an annotation of the text front end that mypy did not check would fail
# mypyc's run-time type check (a bare TypeError instead of the located error or the program):
# the legacy `load`'s result type is None for a non-memref operand, and a legacy immediate of a
# complex type becomes a (re, im) pair.
FRONT_END_CASES = [
    (
        "%x = load %s[] : i32",
        "k.ir:2.10-24: Expected memref or group type (operand must be a memref or group)",
    ),
    (
        "%n = size %s[0] : i32",
        "k.ir:2.10-25: Expected memref or group type (operand must be a memref or group)",
    ),
    ("%v = subview %s[1:?] : i32", "k.ir:2.10-19: Expected memref type (expected a memref)"),
    (
        "%v = expand %s[0 -> 2x?] : i32",
        "k.ir:2.10-34: Argument is out of bounds (invalid expanded mode)",
    ),
    ("%x = arith.add %c, 1 : c32", "%0 = constant [0x1p+0,0x0p+0] : c32"),
]


@needs_build
@pytest.mark.parametrize(("line", "expected"), FRONT_END_CASES)
def test_the_compiled_front_end_reports_malformed_text_at_its_location(
    line: str, expected: str
) -> None:
    import tinytc_py.text.legacy_insts
    import tinytc_py.text.legacy_parser
    import tinytc_py.text.parser
    from tinytc_py.errors import CompilationError
    from tinytc_py.ir.context import CompilerContext
    from tinytc_py.text.dialect import parse
    from tinytc_py.text.printer import print_prog

    for module in (
        tinytc_py.text.parser,
        tinytc_py.text.legacy_parser,
        tinytc_py.text.legacy_insts,
    ):
        assert module.__file__ is not None and module.__file__.endswith(".so"), module.__file__
    text = f"func @k(%A: memref<f32x4x4>, %s: i32, %c: c32) {{\n    {line}\n}}\n"
    try:
        result = print_prog(parse(text, CompilerContext(), "k.ir", dialect="legacy"))
    except CompilationError as err:
        result = str(err)
    assert expected in result


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


@pytest.mark.parametrize("value", ["0", "off", " False ", "no", ""])
def test_pure_python_env_var_set_to_off_keeps_the_compiled_modules(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(compiled.PURE_ENV, value)
    assert not compiled.pure_python_asked()
    monkeypatch.setenv(compiled.PURE_ENV, "1")
    assert compiled.pure_python_asked()


def _manifest(folder: Path, files: dict[str, str], **changes: object) -> None:
    manifest: dict[str, object] = {
        "digest": compiled.sources_digest(content=True),
        "modules": list(compiled.MODULES),
        **compiled.build_target(),
        "files": files,
    }
    manifest.update(changes)
    (folder / compiled.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")


def _all_files(folder: Path) -> dict[str, str]:
    """An empty file for every module the finder answers for."""
    files = {}
    for name in sorted(compiled._ANSWERS):
        (folder / f"{name}.so").write_bytes(b"")
        files[name] = f"{name}.so"
    return files


def _decided(folder: Path) -> tuple[dict[str, str], str]:
    finder = compiled._Finder(str(folder))
    finder.decide()
    return finder.paths, finder.reason


def test_a_changed_source_turns_the_compiled_modules_off(tmp_path: Path) -> None:
    files = _all_files(tmp_path)
    _manifest(tmp_path, files)
    paths, reason = _decided(tmp_path)
    assert reason == "compiled modules in use"
    assert paths["tinytc_py.passes.fold"] == str(tmp_path / "tinytc_py.passes.fold.so")
    # the same build, recorded for sources one byte different
    digest = compiled.sources_digest(content=True)
    _manifest(tmp_path, files, digest=digest[:-1] + ("0" if digest[-1] != "0" else "1"))
    stale = compiled._Finder(str(tmp_path))
    assert stale.find_spec("tinytc_py.passes.fold") is None
    assert (stale.paths, stale.reason) == (
        {},
        "sources changed since the build (make setup rebuilds)",
    )


def test_missing_compiled_files_turn_them_off(tmp_path: Path) -> None:
    files = _all_files(tmp_path)
    _manifest(tmp_path, files)
    (tmp_path / files["tinytc_py.passes.fold"]).unlink()
    assert _decided(tmp_path) == ({}, "compiled files missing")


def test_a_manifest_of_other_modules_turns_them_off(tmp_path: Path) -> None:
    files = _all_files(tmp_path)
    _manifest(tmp_path, files, modules=list(compiled.MODULES[:-1]))
    paths, reason = _decided(tmp_path)
    assert paths == {} and "other modules than MODULES" in reason
    del files[compiled.MODULES[-1]]
    _manifest(tmp_path, files)
    assert _decided(tmp_path) == ({}, "the manifest's files are not those of MODULES")


@pytest.mark.parametrize("key", ["suffix", "python"])
def test_a_build_for_another_python_is_not_loaded(tmp_path: Path, key: str) -> None:
    """An extension loaded by its path skips the interpreter's ABI check: a build of another
    Python (a venv made again with another version) is declined."""
    other = {"suffix": ".cpython-399-x86_64-linux-gnu.so", "python": "3.99.0 (main)"}[key]
    _manifest(tmp_path, _all_files(tmp_path), **{key: other})
    paths, reason = _decided(tmp_path)
    assert paths == {}
    assert reason.startswith(f"built for another Python ({key} {other!r}"), reason


def test_the_decision_waits_for_a_thread_deciding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A thread importing a listed module while another decides gets the decision, not the
    sources (which would mix pure and compiled classes)."""
    import threading
    import time

    _manifest(tmp_path, _all_files(tmp_path))
    digest = compiled.sources_digest

    def slow_digest(*args: object, **kwargs: object) -> str:
        time.sleep(0.2)
        return digest(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(compiled, "sources_digest", slow_digest)
    finder = compiled._Finder(str(tmp_path))
    found: dict[str, object] = {}

    def find(name: str) -> None:
        found[name] = finder.find_spec(name)

    threads = [
        threading.Thread(target=find, args=(name,))
        for name in ("tinytc_py.passes.fold", "tinytc_py.spirv.dump")
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(spec is not None for spec in found.values()), found


def test_the_digest_follows_every_source_of_the_package(tmp_path: Path) -> None:
    """Also the modules not compiled: mypyc bakes what a compiled module imports from them
    (classes, annotations) into its code."""
    names = ("passes/fold.py", "target/core_info.py", "errors.py")
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x = 1\n")
    before = compiled.sources_digest(str(tmp_path), content=True)
    (tmp_path / "target" / "core_info.py").write_text("x = 2\n")
    assert compiled.sources_digest(str(tmp_path), content=True) != before


def test_an_edited_uncompiled_module_turns_them_off(tmp_path: Path) -> None:
    files = _all_files(tmp_path)
    package = tmp_path / "pkg"
    (package / "target").mkdir(parents=True)
    (package / "target" / "core_info.py").write_text("x = 1\n")
    _manifest(tmp_path, files, digest=compiled.sources_digest(str(package), content=True))
    manifest = json.loads((tmp_path / compiled.MANIFEST).read_text(encoding="utf-8"))
    assert compiled.stale(manifest, str(package)) == ""
    (package / "target" / "core_info.py").write_text("x = 2\n")
    assert compiled.stale(manifest, str(package)).startswith("sources changed")


def test_an_installed_package_is_not_a_checkout(tmp_path: Path) -> None:
    """The hook is installed for a checkout only: build/mypyc next to a wheel's package is not
    its build."""
    site = tmp_path / "lib" / "site-packages" / "tinytc_py"
    site.mkdir(parents=True)
    assert not compiled.is_checkout(str(site))
    assert compiled.is_checkout(str(ROOT / "src" / "tinytc_py"))


def _load_build_script():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "build_compiled", ROOT / "tools" / "build_compiled.py"
    )
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@pytest.mark.parametrize("ci", [None, "true"])
def test_missing_tools_fail_the_build_on_ci(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ci: str | None
) -> None:
    script = _load_build_script()
    build_compiled = script.load_list()
    monkeypatch.setattr(build_compiled, "BUILD_DIR", str(tmp_path))
    monkeypatch.setattr(script, "load_list", lambda: build_compiled)
    monkeypatch.setattr(script, "missing_tools", lambda: "no C compiler (cc)")
    monkeypatch.setattr(sys, "argv", ["build_compiled.py"])
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    assert script.main() == (0 if ci is None else 1)
    assert not (tmp_path / compiled.MANIFEST).exists()
