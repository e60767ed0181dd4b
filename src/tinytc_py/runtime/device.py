"""Default OpenCL device discovery, including the Intel CPU runtime installed from PyPI.

Why this exists: the machines this project runs on have no GPU and no system-wide OpenCL driver.
The PyPI package `intel-opencl-rt` installs Intel's CPU OpenCL runtime (`libintelocl.so`) into
the environment's `lib/` folder, but the `.icd` file it ships points to a path on Intel's build
machine, so the ICD loader never finds it. Importing this module therefore registers the runtime
itself: it writes an ICD folder (in a per-user cache directory) holding one `.icd` file with the
absolute path of `libintelocl.so` plus copies of the system's own `.icd` files (so a real GPU
driver stays visible), and points `OCL_ICD_VENDORS` at that folder. The ICD loader reads that
variable once, at the process's first `clGetPlatformIDs`, so this module must be imported before
anything asks pyopencl for platforms. A user who set `OCL_ICD_VENDORS` keeps their setting.

`default_device()` then prefers an OpenCL GPU that takes SPIR-V and falls back to the Intel CPU
device. Note that the CPU runtime's SPIR-V JIT is slow (0.1 s to over a second for small
programs), so callers should cache built programs.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import hashlib
import importlib.metadata
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

LIBINTELOCL = "libintelocl.so"
INTEL_OPENCL_DIST = "intel-opencl-rt"
SYSTEM_VENDORS_DIR = Path("/etc/OpenCL/vendors")
OUR_ICD_NAME = "tinytc-intel-cpu.icd"
CL_DEVICE_SUB_GROUP_SIZES_INTEL = 0x4108


def find_libintelocl() -> Path | None:
    """Absolute path of the PyPI Intel CPU runtime's `libintelocl.so`, or None if absent."""
    candidate = Path(sys.prefix) / "lib" / LIBINTELOCL
    if candidate.is_file():
        return candidate.absolute()
    try:
        dist = importlib.metadata.distribution(INTEL_OPENCL_DIST)
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in dist.files or ():
        if file.name != LIBINTELOCL:
            continue
        # Keep symlinks (no resolve()): the library finds its dependencies via RUNPATH $ORIGIN.
        path = Path(os.path.normpath(os.path.abspath(str(dist.locate_file(file)))))
        if path.is_file():
            return path
    return None


def _cache_root() -> Path:
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg) if xdg else Path.home() / ".cache"


def _icd_folder_for(lib: Path) -> Path:
    """A folder per library path, so several environments do not overwrite each other."""
    tag = hashlib.sha256(str(lib).encode()).hexdigest()[:16]
    return Path("tinytc-py") / f"opencl-vendors-{tag}"


def _write_if_changed(path: Path, text: str) -> None:
    if path.is_file() and path.read_text(encoding="utf-8", errors="replace") == text:
        return
    # Atomic replace: concurrent processes (e.g. test runs) may write the same folder.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".icd-new")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def _icd_entries(lib: Path) -> dict[str, str]:
    """File name → content of every `.icd` file our vendors folder should hold."""
    entries = {OUR_ICD_NAME: f"{lib}\n"}
    if SYSTEM_VENDORS_DIR.is_dir():
        for icd in sorted(SYSTEM_VENDORS_DIR.glob("*.icd")):
            try:
                entries[f"system-{icd.name}"] = icd.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
    return entries


PRIVATE_DIR_MODE = 0o700


def _make_private_dirs(folder: Path) -> None:
    """Creates `folder` and its missing parents with mode 0o700 (`mkdir -p` would give the
    parents the umask's mode). The folders this module creates include the cache root the
    kernel cache later uses, which refuses a group-writable root (kernel_cache/trust.py);
    folders that already exist keep their mode."""
    missing: list[Path] = []
    while not folder.is_dir():
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        try:
            path.mkdir(mode=PRIVATE_DIR_MODE)
        except FileExistsError:  # created meanwhile by a concurrent process
            if not path.is_dir():
                raise


def _populate(folder: Path, lib: Path) -> None:
    _make_private_dirs(folder)
    entries = _icd_entries(lib)
    for name, text in entries.items():
        _write_if_changed(folder / name, text)
    for stale in folder.glob("*.icd"):
        if stale.name not in entries:
            stale.unlink(missing_ok=True)


def register_intel_cpu_runtime() -> Path | None:
    """Point `OCL_ICD_VENDORS` at an ICD folder that includes the PyPI Intel CPU runtime.

    Returns the folder, or None when nothing was done: the user already set `OCL_ICD_VENDORS`,
    or `libintelocl.so` is not installed. Only effective before the process's first
    `clGetPlatformIDs`.
    """
    if "OCL_ICD_VENDORS" in os.environ:
        return None
    lib = find_libintelocl()
    if lib is None:
        return None
    relative = _icd_folder_for(lib)
    for root in (_cache_root(), Path(tempfile.gettempdir()) / f"tinytc-py-{os.getuid()}"):
        folder = root / relative
        try:
            _populate(folder, lib)
        except OSError:
            continue
        os.environ["OCL_ICD_VENDORS"] = str(folder)
        return folder
    return None


#: The ICD folder this module registered at import, or None (see register_intel_cpu_runtime).
ICD_VENDORS = register_intel_cpu_runtime()

import pyopencl as cl  # noqa: E402  (must come after OCL_ICD_VENDORS is set)


def _platform_devices(platform: cl.Platform) -> list[cl.Device]:
    try:
        return platform.get_devices()
    except cl.Error:  # e.g. DEVICE_NOT_FOUND on a platform without devices
        return []


def supports_spirv(device: cl.Device) -> bool:
    """Whether the device accepts SPIR-V programs (clCreateProgramWithIL)."""
    if "cl_khr_il_program" in device.extensions.split():
        return True
    try:
        return "SPIR-V" in str(device.il_version)
    except cl.Error:  # OpenCL < 2.1 devices do not know CL_DEVICE_IL_VERSION
        return False


def _describe(devices: list[cl.Device]) -> str:
    return ", ".join(f"{d.name!r} ({d.platform.name})" for d in devices) or "none"


@functools.cache
def default_device() -> cl.Device:
    """An OpenCL GPU that takes SPIR-V if there is one, else the Intel CPU device.

    Raises RuntimeError when neither exists (e.g. `intel-opencl-rt` is not installed, or
    pyopencl listed platforms before this module could set `OCL_ICD_VENDORS`).
    """
    try:
        platforms = cl.get_platforms()
    except cl.Error as e:
        raise RuntimeError(
            f"no OpenCL platform found ({e}); install the 'opencl' extra (intel-opencl-rt) and "
            "import tinytc_py.runtime.device before anything else queries OpenCL platforms"
        ) from e
    devices = [d for p in platforms for d in _platform_devices(p)]
    for d in devices:
        if d.type & cl.device_type.GPU and supports_spirv(d):
            return d
    for d in devices:
        if d.type & cl.device_type.CPU and "intel" in d.vendor.lower() and supports_spirv(d):
            return d
    found = _describe(devices)
    raise RuntimeError(f"no SPIR-V capable OpenCL GPU or Intel CPU device; found {found}")


@functools.cache
def default_context() -> cl.Context:
    """A context on default_device(), shared by the whole process."""
    return cl.Context([default_device()])


@functools.cache
def default_queue() -> cl.CommandQueue:
    """An in-order command queue on default_context(), shared by the whole process."""
    return cl.CommandQueue(default_context())


def _loaded_opencl_library() -> ctypes.CDLL:
    """The OpenCL ICD loader pyopencl uses (any loader would do: calls dispatch per handle)."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            for line in maps:
                path = line.split()[-1]
                if os.path.basename(path).startswith("libOpenCL"):
                    return ctypes.CDLL(path)
    except OSError:
        pass
    name = ctypes.util.find_library("OpenCL")
    if name is None:
        raise RuntimeError("OpenCL ICD loader library not found")
    return ctypes.CDLL(name)


@functools.cache
def _cl_get_device_info() -> Any:  # a ctypes function pointer
    fn = _loaded_opencl_library().clGetDeviceInfo
    fn.restype = ctypes.c_int32
    fn.argtypes = [
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_size_t,
        ctypes.c_void_p,
        ctypes.POINTER(ctypes.c_size_t),
    ]
    return fn


def subgroup_sizes(device: cl.Device) -> tuple[int, ...]:
    """The device's supported subgroup sizes (CL_DEVICE_SUB_GROUP_SIZES_INTEL), or ().

    pyopencl has no binding for this cl_intel_required_subgroup_size query, so it goes through
    ctypes on the device handle.
    """
    if "cl_intel_required_subgroup_size" not in device.extensions.split():
        return ()
    get_info = _cl_get_device_info()
    handle = ctypes.c_void_p(device.int_ptr)
    size = ctypes.c_size_t(0)
    if get_info(handle, CL_DEVICE_SUB_GROUP_SIZES_INTEL, 0, None, ctypes.byref(size)) != 0:
        return ()
    count = size.value // ctypes.sizeof(ctypes.c_size_t)
    values = (ctypes.c_size_t * count)()
    if get_info(handle, CL_DEVICE_SUB_GROUP_SIZES_INTEL, size.value, values, None) != 0:
        return ()
    return tuple(int(v) for v in values)


def device_identity(dev: Any) -> dict[str, str]:
    """What tells apart the native binaries of OpenCL devices (a kernel cache key part)."""
    return {
        "name": dev.name,
        "driver": dev.driver_version,
        "platform": f"{dev.platform.name} {dev.platform.version}",
    }
