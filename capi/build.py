#!/usr/bin/env python3
"""Build libtinytc.so, libtinytc_cl.so and libtinytc_ze.so with cffi's embedding mode.

Each library is one cffi embedding module: `ffi.embedding_api()` declares the functions that
are implemented in Python (src/tinytc_py/capi/), `ffi.set_source()` adds the C-only ones
(capi/native*.c, capi/_generated_native.c) and includes the public headers, so the compiler
checks the cffi declarations against them. The first call into a library starts an embedded
interpreter (one per process, shared by the three libraries) and runs the init code, which
attaches the implementations.

How the library finds Python without PYTHONPATH / PYTHONHOME: it links libpython with an RPATH
to its directory, and it starts the interpreter itself (capi/helpers.c, wired into cffi's
start-up below) as the interpreter that ran this build: program_name is that executable, so a
virtual environment is recognised by its pyvenv.cfg exactly as when the venv's python runs
(its site-packages, .pth files included, are on sys.path before cffi imports _cffi_backend),
and this checkout's src/ is put in front of sys.path. The host's PYTHON* variables are ignored,
so a host that sets them for another Python cannot break the library. When the library is
loaded into a running Python instead, the init code adds the same directories.

Why libtinytc_cl / libtinytc_ze are embedding modules of their own rather than C shims over
libtinytc: their functions need the Python objects behind the handles (programs, binaries with
their kernel metadata, recipe handlers), which the public C API does not expose, and upstream's
libtinytc exports exactly the 234 core/builder functions, so a private entry point in it would
change its symbol list. The three modules share the interpreter and hence the one handle table.
They link against libtinytc (DT_NEEDED), so `-ltinytc -ltinytc_cl` works as upstream.

Exports are limited to the API description by a version script; SONAMEs follow upstream:
libtinytc.so.0.4.0 (file), libtinytc.so.0 (SONAME symlink), libtinytc.so (link-time symlink).

Next to the libraries it writes pkg-config files (pkgconfig/tinytc.pc, tinytc_cl.pc,
tinytc_ze.pc) and a CMake package configuration (cmake/tinytc/tinytcConfig.cmake) that point at
this build tree, so `PKG_CONFIG_PATH=build/lib/pkgconfig pkg-config --cflags --libs tinytc` and
`find_package(tinytc)` with `tinytc_DIR=build/lib/cmake/tinytc` work; tinytc.pc's variable
`fortran_module` names the Fortran module's source (capi/fortran/tinytc.f90).

libtinytc_cl registers the Intel CPU OpenCL runtime of this environment with the ICD loader when
it is loaded and no OpenCL platform is configured (capi/native_cl.c), through the vendors folder
that capi/ze_cpu/build.py writes next to the libraries.

Usage: capi/build.py [--out DIR] [--cc CC] [--keep-c]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import os
import re
import site
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CAPI = ROOT / "capi"
INCLUDE = ROOT / "include"
DEFAULT_OUT = ROOT / "build" / "lib"

HELPER_CDEF = (
    "char *_tinytc_py_strndup(const char *s, size_t n);\nint _tinytc_py_started_python(void);\n"
    "int _tinytc_py_save_at_exit(void);\nint _tinytc_py_write_behind_start(void);\n"
    "int _tinytc_py_write_behind(const char *dir, const char *file, const char *data,"
    " size_t size);\nint _tinytc_py_write_wait(const char *file);\n"
    "void _tinytc_py_write_failed_in(char *dir, size_t size);\n"
)

# Every library that embeds capi/helpers.c may start the native writer's thread, which stays
# (idle) in the library's code: dlclose must never unmap it (nor the embedded interpreter).
NODELETE = "-Wl,-z,nodelete"

PRELUDE = {
    "tinytc": '#include "tinytc/tinytc.h"\n',
    "tinytc_cl": "#define CL_TARGET_OPENCL_VERSION 300\n"
    '#include "tinytc/tinytc.h"\n#include "tinytc/tinytc_cl.h"\n',
    "tinytc_ze": '#include "tinytc/tinytc.h"\n#include "tinytc/tinytc_ze.h"\n',
}
NATIVE_SOURCES = {
    "tinytc": ["native.c", "_generated_native.c"],
    "tinytc_cl": ["native_cl.c"],
    "tinytc_ze": [],
}

INIT_CODE = """\
import sys
_FUNCTIONS = {functions!r}
try:
    import site
    _before = list(sys.path)
    for _dir in {site_dirs!r}:
        site.addsitedir(_dir)
    _added = [p for p in sys.path if p not in _before]
    sys.path[:] = [{src!r}] + _added + [p for p in _before if p != {src!r}]
    from {module} import ffi, lib
    from tinytc_py.kernel_cache import writer
    writer.synchronous()  # a C host never finalises Python: no atexit, so no writes behind
    if lib._tinytc_py_started_python() and lib._tinytc_py_save_at_exit() == 0:
        from tinytc_py.kernel_cache import stats
        stats.save_at_exit()  # the host's exit saves the cache's counts (capi/helpers.c)
        if lib._tinytc_py_write_behind_start() == 0:  # entries written by a native thread
            writer.native_in_host(ffi, lib)
    from tinytc_py.capi import attach
    attach(ffi, lib, _FUNCTIONS)
    if lib._tinytc_py_started_python():
        # the interpreter is the library's own (a C host): the modules just imported (some
        # 36 000 objects) live as long as the process, and a full collection would traverse
        # them all (10-15 ms every few hundred compiles); frozen, the collector skips them
        import gc
        gc.freeze()
except BaseException as _exc:
    import os
    os.write(2, ("lib{library}: cannot load its Python implementation (%s: %s); every call "
                 "fails with tinytc_status_runtime_error\\n" % (type(_exc).__name__, _exc)).encode())
    from {module} import ffi as _ffi
    for _name, _kind in _FUNCTIONS.items():
        try:
            if _kind == "status":
                _ffi.def_extern(name=_name, error=4)(lambda *args: 4)
            else:
                _ffi.def_extern(name=_name)(lambda *args: None)
        except BaseException:
            pass
"""


class BuildError(Exception):
    pass


def _load_script(path: Path, name: str):
    """A script of the repository as a module, loaded once (they are not a package)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def load_generator():
    """tools/gen_capi.py: the API description and the header generator."""
    return _load_script(ROOT / "tools" / "gen_capi.py", "gen_capi")


def load_ze_cpu_build():
    """capi/ze_cpu/build.py: our Level Zero driver for the CPU (libze_tinytc_cpu.so)."""
    return _load_script(CAPI / "ze_cpu" / "build.py", "ze_cpu_build")


def _check_current(gen, api) -> None:
    stale = [
        str(path.relative_to(ROOT))
        for path, text in gen.outputs(api).items()
        if not path.exists() or path.read_text() != text
    ]
    if stale:
        raise BuildError(f"stale generated files {stale}: run tools/gen_capi.py first")


def _python_link_args() -> list[str]:
    if not sysconfig.get_config_var("Py_ENABLE_SHARED"):
        raise BuildError("this Python has no shared libpython; cffi embedding needs one")
    libdir = sysconfig.get_config_var("LIBDIR")
    version = sysconfig.get_config_var("LDVERSION") or sysconfig.get_python_version()
    return [f"-L{libdir}", f"-lpython{version}", f"-Wl,-rpath,{libdir}"]


def _site_dirs() -> list[str]:
    dirs = [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    return list(dict.fromkeys(d for d in dirs if os.path.isdir(d))) or site.getsitepackages()


def _version_script(names: list[str]) -> str:
    return "{\n  global:\n" + "".join(f"    {n};\n" for n in names) + "  local: *;\n};\n"


def emit_c(gen, api, library: str, path: Path, out_dir: Path = DEFAULT_OUT) -> None:
    """Writes the C source of one embedding module, to be built into `out_dir`."""
    sections = gen.split_cdef(gen.render_cdef(api))
    functions = {
        f.name: "void" if f.returns.strip() == "void" else "status"
        for f in api.python_functions(library)
    }
    native = "".join((CAPI / name).read_text() for name in NATIVE_SOURCES[library])
    _emit_embedding(
        path,
        library,
        api.libraries[library]["module"],
        types=sections["types"] + sections[f"{library}_types"],
        declarations=sections[library],
        functions=functions,
        source=_prelude(PRELUDE[library], _cl_vendors(out_dir) if library == "tinytc_cl" else {})
        + (CAPI / "helpers.c").read_text()
        + native,
    )


def _emit_embedding(
    path: Path,
    library: str,
    module: str,
    types: str,
    declarations: str,
    functions: dict[str, str],
    source: str,
) -> None:
    """Writes the C source of a cffi embedding module whose `declarations` are implemented in
    Python (`functions`: each name's return kind, "status" or "void")."""
    import cffi

    ffi = cffi.FFI()
    ffi.cdef(types + HELPER_CDEF)
    ffi.embedding_api(declarations)
    ffi.set_source(module, source)
    ffi.embedding_init_code(
        INIT_CODE.format(
            functions=functions,
            site_dirs=_site_dirs(),
            src=str(ROOT / "src"),
            module=module,
            library=library,
        )
    )
    with contextlib.redirect_stdout(io.StringIO()):
        ffi.emit_c_code(str(path))
    path.write_text(_patch_startup(path.read_text()))


# cffi starts Python with a bare Py_InitializeEx(0), which finds whatever Python the host's PATH
# suggests and lacks the virtual environment (where _cffi_backend lives); and when Python cannot
# start, it makes every function return 0, i.e. success. Both spots are replaced by the helpers of
# capi/helpers.c. The exact text is checked so that a cffi that changed them fails the build.
_STARTUP_PATCHES = (
    (
        "static void _cffi_py_initialize(void)\n{",
        "static void _tinytc_py_initialize(void);\n"
        "static void _tinytc_py_unavailable(const char *, char *, int);\n"
        "static void _cffi_py_initialize(void)\n{",
    ),
    ("    Py_InitializeEx(0);\n}", "    _tinytc_py_initialize();\n}"),
    (
        'fprintf(stderr, "function %s() called, but initialization code "\n'
        '                        "failed.  Returning 0.\\n", externpy->name);\n'
        "        memset(args, 0, externpy->size_of_result);",
        "_tinytc_py_unavailable(externpy->name, args, externpy->size_of_result);",
    ),
)


def _patch_startup(code: str) -> str:
    for old, new in _STARTUP_PATCHES:
        if code.count(old) != 1:
            raise BuildError(f"cffi's embedding code changed; cannot find {old!r}")
        code = code.replace(old, new)
    return code


def _c_literal(text: str) -> str:
    out = []
    for byte in text.encode():
        ch = chr(byte)
        out.append(ch if 0x20 <= byte < 0x7F and ch not in '"\\?' else f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def _prelude(includes: str, defines: dict[str, str] | None = None) -> str:
    defines = {
        "TINYTC_PY_EXE": sys.executable,
        "TINYTC_PY_PATH": str(ROOT / "src"),
        **(defines or {}),
    }
    return "".join(f"#define {k} {_c_literal(v)}\n" for k, v in defines.items()) + includes


def _cl_vendors(out_dir: Path) -> dict[str, str]:
    """TINYTC_CL_VENDORS for libtinytc_cl: the ICD folder that capi/ze_cpu/build.py writes next to
    the libraries (capi/native_cl.c says why); nothing when the CPU runtime is not installed."""
    ze_cpu = load_ze_cpu_build()
    if ze_cpu.find_libintelocl() is None:
        return {}
    return {"TINYTC_CL_VENDORS": str(Path(out_dir).absolute() / ze_cpu.VENDORS_DIR)}


def _link(path: Path, target: Path) -> None:
    if target.is_symlink() or target.exists():
        target.unlink()
    target.symlink_to(path.name)


# System headers each library's sources include, with the Debian package that has them.
SYSTEM_HEADERS = {
    "tinytc_cl": ("CL/cl.h", "opencl-headers"),
    "tinytc_ze": ("level_zero/ze_api.h", "libze-dev"),
}


def _check_system_headers(cc: str) -> None:
    ze_cpu = load_ze_cpu_build()
    for library, (header, package) in SYSTEM_HEADERS.items():
        if not ze_cpu.header_available(cc, header):
            raise BuildError(f"lib{library} needs <{header}> (Debian package {package})")


def build(
    out_dir: Path = DEFAULT_OUT,
    cc: str = "gcc",
    keep_c: bool = False,
    quiet: bool = True,
    flags: tuple[str, ...] = (),
) -> dict[str, Path]:
    """Builds the three libraries into `out_dir`; returns library name → path of the .so link.
    `flags` go to every compile (the sanitizer test's -fsanitize=...)."""
    _check_system_headers(cc)
    gen = load_generator()
    api = gen.load_api()
    _check_current(gen, api)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    v = api.version
    full = f"{v['major']}.{v['minor']}.{v['patch']}"
    pyinc = sysconfig.get_paths()["include"]
    built = {}
    with tempfile.TemporaryDirectory(prefix="tinytc-capi-") as tmp:
        work = Path(keep_c and out_dir or tmp)
        for library, info in api.libraries.items():
            source = work / f"{info['module']}.c"
            emit_c(gen, api, library, source, out_dir)
            script = work / f"{library}.map"
            script.write_text(_version_script(api.exported(library)))
            real = out_dir / f"lib{library}.so.{full}"
            soname = f"lib{library}.so.{v['major']}"
            cmd = [
                cc,
                "-shared",
                "-fPIC",
                "-O2",
                "-fvisibility=hidden",
                *flags,
                f"-I{INCLUDE}",
                f"-I{pyinc}",
                "-o",
                str(real),
                str(source),
                f"-Wl,-soname,{soname}",
                f"-Wl,--version-script={script}",
                "-Wl,--no-undefined",
                NODELETE,
            ]
            for need in info.get("needs", []):
                cmd += [f"-L{out_dir}", "-Wl,--no-as-needed", f"-l{need}", "-Wl,--as-needed"]
                cmd.append("-Wl,-rpath,$ORIGIN")
            cmd += _python_link_args()
            result = subprocess.run(cmd, capture_output=True, text=True)
            if result.returncode != 0:
                raise BuildError(f"{' '.join(cmd)}\n{result.stdout}{result.stderr}")
            _link(real, out_dir / soname)
            _link(out_dir / soname, out_dir / f"lib{library}.so")
            built[library] = out_dir / f"lib{library}.so"
            if not quiet:
                print(f"built {built[library]} -> {real.name}")
    _package_files(out_dir, full)
    ze_cpu = load_ze_cpu_build()
    try:
        driver = ze_cpu.build_driver(out_dir, cc, flags)
    except ze_cpu.DriverBuildError as e:
        raise BuildError(str(e)) from e
    if not quiet:
        print(f"built {driver} (Level Zero driver for the CPU)")
    validator = build_spirv_validator(out_dir, cc)
    if validator is not None and not quiet:
        print(f"built {validator} (in-process spirv-val)")
    sycl = build_sycl(gen, api, out_dir, cc, flags)
    if sycl is not None:
        built["tinytc_sycl"] = sycl
    if not quiet:
        print(
            f"built {sycl} -> {sycl.resolve().name}"
            if sycl is not None
            else "skipped libtinytc_sycl: no SYCL runtime here (pip install 'tinytc-py[sycl]')"
        )
    return built


# ---- libtinytc_sycl ----------------------------------------------------------------------------
# The C++ functions of tinytc_sycl.hpp (capi/sycl/tinytc_sycl.cpp), compiled with the system C++
# compiler against the SYCL runtime installed from PyPI (the `sycl` extra: intel-sycl-rt puts
# include/sycl and lib/libsycl.so into the environment's prefix); no SYCL compiler is involved,
# as the library only launches kernels that tinytc compiled. Its recipe handlers need two
# functions implemented in Python (capi/sycl/private_api.h), so it is also a small embedding
# module; the version script exports only the tinytc:: C++ functions.

SYCL_DIR = CAPI / "sycl"
SYCL_MODULE = "_tinytc_sycl_capi"
SYCL_CXXFLAGS = (
    "-std=c++17",
    "-DSYCL_DISABLE_FSYCL_SYCLHPP_WARNING",
    "-DCL_TARGET_OPENCL_VERSION=300",
)
# The PyPI OpenCL ICD loader (lib/libOpenCL.so.1 next to libsycl) finds its dependencies
# (libsvml, ...) only through an RPATH of the program that loads it, which applies to indirect
# dependencies too; a RUNPATH (the linker's default) does not. So programs and libtinytc_sycl
# itself are linked with DT_RPATH.
SYCL_LINK_OPTION = "-Wl,--disable-new-dtags"
SYCL_VERSION_SCRIPT = '{\n  global:\n    extern "C++" { tinytc::*; };\n  local: *;\n};\n'


def sycl_runtime() -> Path | None:
    """The prefix of the SYCL runtime (its include/sycl/sycl.hpp and lib/libsycl.so): the one
    installed into this Python's environment, or None."""
    prefix = Path(sys.prefix)
    if (prefix / "include" / "sycl" / "sycl.hpp").is_file() and (
        prefix / "lib" / "libsycl.so"
    ).exists():
        return prefix
    return None


def build_sycl(
    gen, api, out_dir: Path, cc: str = "gcc", flags: tuple[str, ...] = ()
) -> Path | None:
    """out_dir/libtinytc_sycl.so (next to libtinytc_cl and libtinytc_ze, which it links), or
    None when this environment has no SYCL runtime. Linking libtinytc_cl also gives a SYCL host
    its constructor (capi/native_cl.c), which registers the CPU OpenCL runtime before main, so
    before the host's first sycl::queue (docs/sycl.rst)."""
    prefix = sycl_runtime()
    if prefix is None:
        return None
    v = api.version
    full = f"{v['major']}.{v['minor']}.{v['patch']}"
    soname = f"libtinytc_sycl.so.{v['major']}"
    real = out_dir / f"libtinytc_sycl.so.{full}"
    cxx = os.environ.get("CXX", "g++")
    declarations = (SYCL_DIR / "private_api.h").read_text()
    functions = dict.fromkeys(re.findall(r"\b(_tinytc_sycl_\w+)\(", declarations), "status")
    with tempfile.TemporaryDirectory(prefix="tinytc-sycl-") as tmp:
        work = Path(tmp)
        embedding = work / f"{SYCL_MODULE}.c"
        _emit_embedding(
            embedding,
            "tinytc_sycl",
            SYCL_MODULE,
            types=gen.split_cdef(gen.render_cdef(api))["types"],
            declarations=declarations,
            functions=functions,
            source=_prelude('#include "tinytc/tinytc.h"\n') + (CAPI / "helpers.c").read_text(),
        )
        script = work / "tinytc_sycl.map"
        script.write_text(SYCL_VERSION_SCRIPT)
        pyinc = sysconfig.get_paths()["include"]
        common = ["-fPIC", "-O2", "-fvisibility=hidden", *flags, f"-I{INCLUDE}"]
        steps = [
            [cc, "-c", *common, f"-I{pyinc}", "-o", str(work / "embedding.o"), str(embedding)],
            [
                cxx, "-c", *common, *SYCL_CXXFLAGS, "-fvisibility-inlines-hidden",
                f"-I{SYCL_DIR}", f"-I{prefix / 'include'}", "-o", str(work / "sycl.o"),
                str(SYCL_DIR / "tinytc_sycl.cpp"),
            ],
            [
                cxx, "-shared", *flags, "-o", str(real), str(work / "embedding.o"),
                str(work / "sycl.o"), f"-Wl,-soname,{soname}", f"-Wl,--version-script={script}",
                "-Wl,--no-undefined", NODELETE, f"-L{out_dir}", "-ltinytc_cl", "-ltinytc_ze", "-ltinytc",
                f"-L{prefix / 'lib'}", "-lsycl", "-lOpenCL", "-lze_loader",
                SYCL_LINK_OPTION, "-Wl,-rpath,$ORIGIN", f"-Wl,-rpath,{prefix / 'lib'}",
                *_python_link_args(),
            ],
        ]  # fmt: skip
        for cmd in steps:
            result = subprocess.run(cmd, capture_output=True, text=True)
            if result.returncode != 0:
                raise BuildError(f"{' '.join(cmd)}\n{result.stdout}{result.stderr}")
    _link(real, out_dir / soname)
    _link(out_dir / soname, out_dir / "libtinytc_sycl.so")
    _sycl_package_files(out_dir, full, prefix)
    return out_dir / "libtinytc_sycl.so"


def _sycl_package_files(out_dir: Path, version: str, prefix: Path) -> None:
    """pkgconfig/tinytc_sycl.pc and cmake/tinytc_sycl/tinytc_syclConfig.cmake (imported target
    tinytc::tinytc_sycl) for the built tree; both bring the SYCL runtime's include/ and lib/."""
    out = out_dir.resolve()
    sycl_lib = prefix / "lib"
    defines = " ".join(f for f in SYCL_CXXFLAGS if f.startswith("-D"))
    (out_dir / "pkgconfig" / "tinytc_sycl.pc").write_text(
        f"includedir={INCLUDE}\nlibdir={out}\nsyclprefix={prefix}\n\n"
        "Name: tinytc_sycl\nDescription: SYCL interoperability of tinytc (tinytc-py)\n"
        f"Version: {version}\nRequires: tinytc_cl tinytc_ze\n"
        f"Cflags: -I${{includedir}} -I${{syclprefix}}/include {defines}\n"
        f"Libs: {SYCL_LINK_OPTION} -L${{libdir}} -Wl,-rpath,${{libdir}} -ltinytc_sycl "
        "-L${syclprefix}/lib -Wl,-rpath,${syclprefix}/lib -lsycl\n"
    )
    cm = out_dir / "cmake" / "tinytc_sycl"
    cm.mkdir(parents=True, exist_ok=True)
    (cm / "tinytc_syclConfig.cmake").write_text(
        "# tinytc-py: imported target tinytc::tinytc_sycl (with tinytc::tinytc, tinytc_cl, tinytc_ze)\n"
        'include("${CMAKE_CURRENT_LIST_DIR}/../tinytc/tinytcConfig.cmake")\n'
        f"set(tinytc_sycl_VERSION {version})\n"
        "if(NOT TARGET tinytc::tinytc_sycl)\n"
        "  add_library(tinytc::tinytc_sycl SHARED IMPORTED)\n"
        "  set_target_properties(tinytc::tinytc_sycl PROPERTIES\n"
        f'    IMPORTED_LOCATION "{out}/libtinytc_sycl.so"\n'
        f'    IMPORTED_SONAME "libtinytc_sycl.so.{version.split(".")[0]}"\n'
        f'    INTERFACE_INCLUDE_DIRECTORIES "{INCLUDE};{prefix / "include"}"\n'
        f'    INTERFACE_COMPILE_DEFINITIONS "{defines.replace("-D", "").replace(" ", ";")}"\n'
        f'    INTERFACE_LINK_LIBRARIES "tinytc::tinytc_cl;tinytc::tinytc_ze;{sycl_lib / "libsycl.so"}"\n'
        f'    INTERFACE_LINK_OPTIONS "{SYCL_LINK_OPTION}")\n'
        "endif()\n"
    )
    (cm / "tinytc_syclConfigVersion.cmake").write_text(
        (out_dir / "cmake" / "tinytc" / "tinytcConfigVersion.cmake").read_text()
    )


SPIRV_TOOLS_ARCHIVE = Path("/usr/lib/x86_64-linux-gnu/libSPIRV-Tools.a")
SPIRV_VAL_LIBRARY = "libtinytc_spirv_val.so"


def build_spirv_validator(out_dir: Path, cc: str = "gcc") -> Path | None:
    """out_dir/libtinytc_spirv_val.so: SPIRV-Tools' validator for tinytc_py.spirv.validate
    (capi/spirv_val/spirv_val.c says why), from the static library of PyPI's SPIRV-Tools
    (tinytc_py.native_libs.spirv_tools_prefix). None when that is not installed; the compiler
    then says so. libstdc++ is linked in statically with its symbols hidden, so that arena.c's
    operator new and delete serve all of the library's C++ code and nothing else in the
    process."""
    from tinytc_py.native_libs import spirv_tools_prefix

    prefix = spirv_tools_prefix()
    archive = prefix / "lib" / "libSPIRV-Tools.a" if prefix is not None else None
    if archive is None or not archive.is_file():
        return None
    target = Path(out_dir) / SPIRV_VAL_LIBRARY
    cmd = [
        cc, "-shared", "-fPIC", "-O2", "-fvisibility=hidden", f"-I{prefix / 'include'}",
        "-o", str(target), str(CAPI / "spirv_val" / "spirv_val.c"),
        str(CAPI / "spirv_val" / "arena.c"), str(archive), "-Wl,-Bstatic", "-lstdc++",
        "-Wl,-Bdynamic", "-lm", "-pthread", "-Wl,--exclude-libs,ALL", "-Wl,--no-undefined",
    ]  # fmt: skip
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise BuildError(f"{' '.join(cmd)}\n{result.stdout}{result.stderr}")
    return target.resolve()


def _package_files(out_dir: Path, version: str) -> None:
    """pkg-config files (out_dir/pkgconfig/tinytc{,_cl,_ze}.pc) and a CMake package
    configuration (out_dir/cmake/tinytc/tinytcConfig{,Version}.cmake) for the built tree."""
    pc = out_dir / "pkgconfig"
    pc.mkdir(exist_ok=True)
    head = f"includedir={INCLUDE}\nlibdir={out_dir.resolve()}\n\n"
    libs = "-L${libdir} -Wl,-rpath,${libdir}"
    fortran = f"fortran_module={CAPI / 'fortran' / 'tinytc.f90'}\n"  # --variable=fortran_module
    (pc / "tinytc.pc").write_text(
        head + fortran + "Name: tinytc\nDescription: Tiny Tensor Compiler C API (tinytc-py)\n"
        f"Version: {version}\nCflags: -I${{includedir}}\nLibs: {libs} -ltinytc\n"
    )
    for lib, runtime, what in (
        ("tinytc_cl", "-lOpenCL", "OpenCL"),
        ("tinytc_ze", "-lze_loader", "Level Zero"),
    ):
        (pc / f"{lib}.pc").write_text(
            head + f"Name: {lib}\nDescription: {what} interoperability of tinytc (tinytc-py)\n"
            f"Version: {version}\nRequires: tinytc\nCflags: -I${{includedir}}\n"
            f"Libs: {libs} -l{lib} {runtime}\n"
        )
    cm = out_dir / "cmake" / "tinytc"
    cm.mkdir(parents=True, exist_ok=True)
    targets = "".join(
        f"if(NOT TARGET tinytc::{lib})\n"
        f"  add_library(tinytc::{lib} SHARED IMPORTED)\n"
        f"  set_target_properties(tinytc::{lib} PROPERTIES\n"
        f'    IMPORTED_LOCATION "{out_dir.resolve()}/lib{lib}.so"\n'
        f'    IMPORTED_SONAME "lib{lib}.so.{version.split(".")[0]}"\n'
        f'    INTERFACE_INCLUDE_DIRECTORIES "{INCLUDE}"{deps})\n'
        "endif()\n"
        for lib, deps in (
            ("tinytc", ""),
            ("tinytc_cl", '\n    INTERFACE_LINK_LIBRARIES "tinytc::tinytc;OpenCL"'),
            ("tinytc_ze", '\n    INTERFACE_LINK_LIBRARIES "tinytc::tinytc;ze_loader"'),
        )
    )
    (cm / "tinytcConfig.cmake").write_text(
        "# tinytc-py: imported targets tinytc::tinytc, tinytc::tinytc_cl, tinytc::tinytc_ze\n"
        f'set(tinytc_VERSION {version})\nset(tinytc_INCLUDE_DIRS "{INCLUDE}")\n' + targets
    )
    (cm / "tinytcConfigVersion.cmake").write_text(
        f'set(PACKAGE_VERSION "{version}")\n'
        "if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)\n"
        "  set(PACKAGE_VERSION_COMPATIBLE FALSE)\nelse()\n"
        "  set(PACKAGE_VERSION_COMPATIBLE TRUE)\n"
        "  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)\n"
        "    set(PACKAGE_VERSION_EXACT TRUE)\n  endif()\nendif()\n"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory")
    ap.add_argument("--cc", default=os.environ.get("CC", "gcc"), help="C compiler")
    ap.add_argument("--keep-c", action="store_true", help="keep the generated C in --out")
    args = ap.parse_args(argv)
    try:
        build(args.out, args.cc, args.keep_c, quiet=False)
    except BuildError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
