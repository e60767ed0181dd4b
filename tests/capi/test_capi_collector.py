"""The garbage collector in a C host (capi/build.py): when the library starts the interpreter
itself, its start-up freezes the objects of the modules it imported (gc.freeze), so that the
collector's full scans skip them; a host that started Python first (an application embedding
Python, a Python process loading the library) keeps its collector as it is."""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

import pytest

HOST = r"""
#include <Python.h>
#include <tinytc/tinytc.h>
#include <string.h>

/* argv[1]: "library" (the first tinytc call starts Python) or "host" (Python started here,
 * where PYTHONHOME and PYTHONPATH say). */
int main(int argc, char **argv) {
    tinytc_compiler_context_t ctx;
    PyGILState_STATE gil;
    int rc;
    if (argc > 1 && strcmp(argv[1], "host") == 0) {
        Py_InitializeEx(0);
    }
    if (tinytc_compiler_context_create(&ctx) != tinytc_status_success ||
        tinytc_compiler_context_release(ctx) != tinytc_status_success) {
        return 2;
    }
    gil = PyGILState_Ensure();
    rc = PyRun_SimpleString("import gc; print(gc.get_freeze_count(), flush=True)");
    PyGILState_Release(gil);
    return rc;
}
"""


def test_the_library_freezes_the_modules_of_the_interpreter_it_started(compile_c) -> None:
    include = sysconfig.get_paths()["include"]
    if not Path(include, "Python.h").exists():
        pytest.skip("no Python.h to build an embedding host with")
    libdir = sysconfig.get_config_var("LIBDIR")
    version = sysconfig.get_config_var("LDVERSION")
    static_libs = [
        flag[2:]
        for var in ("LIBS", "SYSLIBS")
        for flag in (sysconfig.get_config_var(var) or "").split()
        if flag.startswith("-l")
    ]
    prog = compile_c(
        HOST,
        libs=("tinytc", f"python{version}", *static_libs),
        # a static libpython's symbols exported, for the extension modules the host imports
        flags=(
            f"-I{include}",
            f"-L{libdir}",
            f"-Wl,-rpath,{libdir}",
            *(sysconfig.get_config_var("LINKFORSHARED") or "").split(),
        ),
    )
    frozen = int(prog.run("library").stdout)
    assert frozen > 10_000  # the compiler's modules: some 36 000 objects
    # the host's Python is this one, with this process's path (where cffi's backend is)
    env = {"PYTHONHOME": sys.base_prefix, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    assert prog.run("host", env=env).stdout == "0\n"
