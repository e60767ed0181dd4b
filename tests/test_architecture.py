"""The package's layers hold and its modules import each other without cycles
(docs/design.md §1 names the layers and says why they are in this order).

The import graph is read from the source with `ast`: every import that runs counts, module
level or inside a function (a lazy import is still a dependency); imports under
`if TYPE_CHECKING:` do not. An import names the module it loads (`from . import x` loads the
submodule x if there is one, else the package); the parent packages that Python runs first are
not counted, since what they import is their own edge. A module loaded by name at run time,
`importlib.import_module(NAME)` or `import_module(NAME, package)`, counts when NAME is a string
or an f-string: as the module NAME gives, or for an f-string the module its text before the
first replacement field names (`f"tinytc_py.runtime.{name}"` is an edge to runtime, and one
that names no module inside the package is an edge to the package itself); a NAME computed
otherwise is not seen.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

PKG = "tinytc_py"
SRC = Path(__file__).resolve().parents[1] / "src" / PKG

# Lowest first. A module may import its own layer and the layers below it, never one above.
# A module belongs to the layer whose prefix names it or a package above it ("" is the
# package's own __init__ only); the prefixes do not overlap.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "base",
        (
            "compiled",
            "errors",
            "location",
            "environ",
            "gc_pause",
            "self_checks",
            "cache_dir",
            "native_libs",
            "numpy_types",
            "bounds_record",
        ),
    ),
    ("target", ("target",)),
    ("binary", ("binary",)),
    ("ir", ("ir",)),
    ("text", ("text",)),
    ("analysis", ("analysis",)),
    ("passes", ("passes",)),
    ("spirv", ("spirv",)),
    ("emulate", ("emulate",)),
    ("kernel_cache", ("kernel_cache",)),
    ("compiler", ("compiler", "corpus", "gemm_tuning")),
    ("runtime", ("runtime",)),
    ("options", ("options",)),
    ("api", ("", "api", "recipes")),
    ("capi", ("capi",)),
    ("cli", ("cli",)),
]


def modules(root: Path = SRC) -> dict[str, Path]:
    """Dotted name (without the package prefix; "" for the package) -> file."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


Importing = ast.Import | ast.ImportFrom | ast.Call


def _imports(node: ast.AST) -> Iterator[Importing]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for other in child.orelse:
                yield from _imports_of(other)
            continue
        yield from _imports_of(child)


def _imports_of(node: ast.AST) -> Iterator[Importing]:
    if isinstance(node, (ast.Import, ast.ImportFrom)) or _loaded_by_name(node) is not None:
        yield node
    yield from _imports(node)


def _loaded_by_name(node: ast.AST) -> str | None:
    """NAME of an `import_module(NAME, ...)` call: a string, or of an f-string the text before
    its first replacement field, cut back to the last whole part (leading dots, which make it
    relative to the calling module's package, kept)."""
    if not (isinstance(node, ast.Call) and node.args):
        return None
    func = node.func
    called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    if called != "import_module":
        return None
    arg = node.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if not isinstance(arg, ast.JoinedStr):
        return None
    text = ""
    for part in arg.values:
        if not (isinstance(part, ast.Constant) and isinstance(part.value, str)):
            dots = len(text) - len(text.lstrip("."))
            return text[:dots] + text[dots:].rpartition(".")[0]
        text += part.value
    return text


def _join(*parts: str) -> str:
    return ".".join(p for p in parts if p)


def import_graph(root: Path = SRC) -> dict[str, list[tuple[str, int]]]:
    """Module -> [(imported module, line)] for the package's own modules."""
    mods = modules(root)

    def known(name: str) -> str | None:
        while name not in mods:
            if not name:
                return None
            name = name.rpartition(".")[0]
        return name

    graph: dict[str, list[tuple[str, int]]] = {}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges = []
        for node in _imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call):
                loaded = _loaded_by_name(node) or ""
                level = len(loaded) - len(loaded.lstrip("."))
                if level:
                    base = package.split(".") if package else []
                    base = base[: len(base) - (level - 1)]
                    loaded = _join(PKG, *base, loaded[level:])
                targets = [loaded]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif node.level:
                base = package.split(".") if package else []
                base = base[: len(base) - (node.level - 1)]
                targets = [_join(PKG, *base, node.module or "", a.name) for a in node.names]
            else:
                targets = [_join(node.module or "", a.name) for a in node.names]
            for target in targets:
                if target != PKG and not target.startswith(PKG + "."):
                    continue
                found = known(target.removeprefix(PKG).removeprefix("."))
                if found is not None and found != name:
                    edges.append((found, node.lineno))
        graph[name] = edges
    return graph


@functools.cache
def package_graph() -> dict[str, list[tuple[str, int]]]:
    """The graph of src/tinytc_py, read once per test session."""
    return import_graph()


def layer_of(name: str) -> int:
    """The index in LAYERS of the module's layer, -1 when no prefix names it."""
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if name == prefix or (prefix and name.startswith(prefix + ".")):
                return i
    return -1


def _where(name: str, line: int, root: Path = SRC) -> str:
    return f"{modules(root)[name].relative_to(root.parents[1])}:{line}"


def _cycles(graph: dict[str, list[tuple[str, int]]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w, _ in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def _cycle_path(
    graph: dict[str, list[tuple[str, int]]], comp: list[str], root: Path = SRC
) -> list[str]:
    """One cycle through the component's first module, each step as `file:line a -> b`."""
    members = set(comp)
    start = comp[0]
    came: dict[str, tuple[str, int]] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w, line in graph[v]:
                if w in members and w not in came:
                    came[w] = (v, line)
                    nxt.append(w)
        if start in came:
            break
        frontier = nxt
    steps = []
    w = start
    while True:
        v, line = came[w]
        steps.append(f"{_where(v, line, root)}: {v} -> {w}")
        w = v
        if w == start:
            break
    return steps[::-1]


def test_every_module_has_a_layer():
    unplaced = [name for name in modules() if layer_of(name) < 0]
    assert not unplaced, f"modules without a layer (add them to LAYERS): {unplaced}"


def test_no_import_goes_up_a_layer():
    graph = package_graph()
    violations = [
        f"{_where(name, line)}: {name or PKG} ({LAYERS[layer_of(name)][0]}) imports "
        f"{target} ({LAYERS[layer_of(target)][0]})"
        for name, edges in graph.items()
        for target, line in edges
        if layer_of(target) > layer_of(name)
    ]
    assert not violations, "imports against the layers:\n" + "\n".join(violations)


def test_no_import_cycles():
    graph = package_graph()
    cycles = list(_cycles(graph))
    report = [
        "cycle " + ", ".join(comp) + ":\n  " + "\n  ".join(_cycle_path(graph, comp))
        for comp in cycles
    ]
    assert not cycles, "import cycles:\n" + "\n".join(report)


def test_the_check_sees_lazy_imports_and_cycles_and_skips_type_checking(tmp_path):
    """On a small package: a function-level import is an edge, a TYPE_CHECKING one is not, and
    a cycle through a lazy import is reported with the file and line of each step."""
    root = tmp_path / "src" / PKG
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "sub" / "__init__.py").write_text("from . import a\n")
    (root / "sub" / "a.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from ..c import C\n"
        "def f():\n"
        "    from .b import g\n"
        "    return g\n"
    )
    (root / "sub" / "b.py").write_text("from tinytc_py.sub.a import f\nimport os\n")
    (root / "c.py").write_text("from .sub import b\n")
    graph = import_graph(root)
    assert graph == {
        "": [],
        "c": [("sub.b", 1)],
        "sub": [("sub.a", 1)],
        "sub.a": [("sub.b", 5)],
        "sub.b": [("sub.a", 1)],
    }
    assert _cycles(graph) == [["sub.a", "sub.b"]]
    assert _cycle_path(graph, ["sub.a", "sub.b"], root) == [
        f"src/{PKG}/sub/a.py:5: sub.a -> sub.b",
        f"src/{PKG}/sub/b.py:1: sub.b -> sub.a",
    ]


def test_the_check_sees_modules_loaded_by_name(tmp_path):
    """`import_module` with a string or an f-string names its module (an f-string up to the
    last whole part before its first replacement field; relative to the caller's package with
    leading dots); a name computed otherwise, or of another package, is no edge."""
    root = tmp_path / "src" / PKG
    for package in ("", "low", "high"):
        (root / package).mkdir(parents=True, exist_ok=True)
        (root / package / "__init__.py").write_text("")
    (root / "high" / "a.py").write_text("")
    (root / "low" / "m.py").write_text(
        "import importlib\n"
        "from importlib import import_module\n"
        "def load(name):\n"
        "    importlib.import_module(f'tinytc_py.high.{name}')\n"
        "    import_module('tinytc_py.high.a')\n"
        "    import_module(f'..high.a{name}', __package__)\n"
        "    import_module(f'..hi{name}', __package__)\n"
        "    import_module(name)\n"
        "    importlib.import_module('os.path')\n"
    )
    # line 7 may load any module: it counts as the package itself (the top layer)
    assert import_graph(root)["low.m"] == [("high", 4), ("high.a", 5), ("high", 6), ("", 7)]
