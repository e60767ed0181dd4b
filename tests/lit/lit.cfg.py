"""lit configuration for the textual tests under tests/lit (IR and SPIR-V dumps, FileCheck).

RUN lines may use `tinytc-opt`, `tinytc` and `FileCheck`; they resolve to the executables of the
Python environment that runs lit (the venv's bin folder, next to sys.executable), and that folder
is also put first on PATH. `FileCheck` is the PyPI `filecheck` port.
"""

# ruff: noqa: F821  (lit injects `config` and `lit_config` into this file's globals)

import os
import sys

import lit.formats

config.name = "tinytc"
# lit's internal shell (execute_external=True is deprecated as of lit 23).
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".ir"]
config.excludes = ["Inputs", "Output"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
config.test_exec_root = config.test_source_root

# Not resolved through symlinks: a venv's python is a symlink to the base interpreter.
_bindir = os.path.dirname(os.path.abspath(sys.executable))


def _tool(name: str) -> str:
    """Regex matching `name` as a whole command word, not inside a path or a longer name."""
    return r"(?<![\w./-])" + name.replace("-", r"\-") + r"(?![\w.-])"


# Longest names first, so `tinytc` never eats the start of `tinytc-opt`.
config.substitutions.append((_tool("tinytc-opt"), os.path.join(_bindir, "tinytc-opt")))
config.substitutions.append((_tool("tinytc"), os.path.join(_bindir, "tinytc")))
config.substitutions.append((_tool("FileCheck"), os.path.join(_bindir, "filecheck")))
config.substitutions.append(("%python", sys.executable))

config.environment["PATH"] = os.pathsep.join([_bindir, config.environment.get("PATH", "")])
