"""The documentation: Sphinx builds it without a warning, and the Python code in it runs: the
README's and every docs page's ``python`` blocks (the blocks of one page share a namespace, as
a reader would paste them one after the other), and the ``>>>`` examples in docstrings."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import tinytc_py

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

# A python block, also indented inside a directive (group 1: the directive's indentation).
RST_BLOCK = re.compile(r"^( *)\.\. code-block:: python\n\n((?:(?:\1   .*)?\n)+)", re.MULTILINE)
MD_BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def python_blocks(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".rst":
        return [textwrap.dedent(b) for _, b in RST_BLOCK.findall(text)]
    return MD_BLOCK.findall(text)


SH_BLOCK = re.compile(r"^\.\. code-block:: sh\n\n((?:(?:   .*)?\n)+)", re.MULTILINE)


def sh_blocks(path: Path) -> list[str]:
    """The shell commands of an .rst page, one string per ``code-block:: sh``, for the tests
    that run the documented commands verbatim (tests/capi/test_docs_commands.py, test_wheel)."""
    return [textwrap.dedent(b) for b in SH_BLOCK.findall(path.read_text(encoding="utf-8"))]


PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.rst")), *sorted(DOCS.glob("*.md"))]
REFERENCE_PAGES = sorted(DOCS.glob("reference/*.rst"))  # the language reference
PAGES_WITH_CODE = [p for p in [*PAGES, *REFERENCE_PAGES] if python_blocks(p)]


def test_sphinx_builds_without_warnings(tmp_path: Path):
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_parser")
    out = tmp_path / "html"
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-E", "-b", "html",
         str(DOCS), str(out)],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    index = (out / "index.html").read_text(encoding="utf-8")
    for page in ("getting-started", "python-api", "c-api", "level-zero-cpu", "kernel-cache",
                 "performance", "differences", "language", "sycl"):  # fmt: skip
        assert f'href="{page}.html"' in index, page
    assert 'href="reference/index.html"' in index
    api = (out / "python-api.html").read_text(encoding="utf-8")
    for name in ("compile", "small_gemm_batched", "CompilationError", "devices"):
        assert f'id="tinytc_py.{name}"' in api, name
    assert 'id="tinytc_py.DYNAMIC"' in api
    # the builder's methods are documented with their real signatures, not (*args, **props)
    builder = (out / "reference" / "builder.html").read_text(encoding="utf-8")
    assert 'id="tinytc_py.ir.builder.IRBuilder.size"' in builder
    size = builder.split('id="tinytc_py.ir.builder.IRBuilder.size"', 1)[1].split("</dt>", 1)[0]
    assert "operand" in size and "mode" in size and "args" not in size
    from tinytc_py.ir.builder import IRBuilder
    from tinytc_py.ir.ops import INSTRUCTIONS

    documented = set(re.findall(r'id="tinytc_py\.ir\.builder\.IRBuilder\.(\w+)"', builder))
    methods = {n for n in dir(IRBuilder) if not n.startswith("_")} - {"attr", "insert"}
    assert documented == methods
    assert len(documented) > len(INSTRUCTIONS)  # one method per instruction, and function, ...


def test_pages_with_python_code_are_found():
    names = {p.name for p in PAGES_WITH_CODE}
    assert {"README.md", "getting-started.rst", "python-api.rst", "builder.rst"} <= names


@pytest.mark.parametrize("page", PAGES_WITH_CODE, ids=lambda p: p.name)
def test_python_blocks_run(page: Path, tmp_path: Path):
    pytest.importorskip("pyopencl")
    script = tmp_path / "page.py"
    script.write_text("\n\n".join(python_blocks(page)), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT, timeout=240
    )
    assert result.returncode == 0, result.stdout + result.stderr
    if page.name == "README.md":
        assert result.stdout.splitlines()[-1] == "[0.  0.5 1.  1.5 2.  2.5 3.  3.5]"
    if page.name == "getting-started.rst":
        assert "Number type mismatch (operand types differ (i32 vs f32))" in result.stdout


def _modules_with_examples() -> list[str]:
    found = []
    for info in pkgutil.walk_packages(tinytc_py.__path__, "tinytc_py."):
        spec = importlib.util.find_spec(info.name)
        origin = Path(spec.origin) if spec and spec.origin else None
        if origin and origin.suffix == ".py" and ">>> " in origin.read_text(encoding="utf-8"):
            found.append(info.name)
    return found


def test_docstring_examples_are_found():
    assert {"tinytc_py.api", "tinytc_py.recipes.arrays"} <= set(_modules_with_examples())


@pytest.mark.parametrize("module", _modules_with_examples())
def test_docstring_examples_run(module: str):
    pytest.importorskip("pyopencl")
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


def test_repository_cites_only_its_own_files():
    """The design notes the code relies on are docs/design.md: no file cites a document outside
    the repository, and every `docs/design.md §...` names a section that exists."""
    outside = re.compile(
        r"\b(backend|capi|platform-facts)\.md\b|shared/spec|\.\./shared|(?<!docs/)design\.md"
    )
    section = re.compile(r"docs/design\.md §([A-C]?\d+(?:\.\d+)*)((?:, §[A-C]?\d+(?:\.\d+)*)*)")
    design = (DOCS / "design.md").read_text(encoding="utf-8")
    headings = set(re.findall(r"^#+ ([A-C]?\d+(?:\.\d+)*)\.? ", design, re.MULTILINE))
    files = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "README.md", "docs",
         "src", "capi", "tests", "examples"],
        capture_output=True, text=True, cwd=ROOT, check=True,
    ).stdout.split()  # fmt: skip
    assert "docs/design.md" in files
    bad, missing = [], []
    for name in files:
        path = ROOT / name
        if name == "tests/test_docs.py" or path.suffix in (".so", ".png") or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        bad += [f"{name}: {m.group(0)}" for m in outside.finditer(text)]
        for m in section.finditer(text):
            for number in [m.group(1), *re.findall(r"§([A-C]?\d+(?:\.\d+)*)", m.group(2))]:
                if number not in headings:
                    missing.append(f"{name}: §{number}")
    assert bad == [] and missing == [], (bad, missing)
