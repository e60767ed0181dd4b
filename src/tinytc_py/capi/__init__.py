"""Python side of libtinytc: the implementations behind the exported C functions.

The shared libraries (built by capi/build.py with cffi's embedding mode) start an interpreter on
the first call and run `attach`, which connects every Python-implemented C function to its
implementation here:

* handles.py   handle table, reference counts, ownership (docs/design.md §C1.5, §C1.6)
* errors.py    exception → status mapping; the guard that keeps exceptions inside
* registry.py  name → implementation (`@export`)
* loader.py    `attach`: imports the implementing modules and attaches them to the library
* core.py      core API (capi/api/core.toml): context, parser, programs, compilation, binaries, core info
* builder.py   builder API (builder.toml): attributes, types, values, instructions, regions, functions
* recipe.py    recipes (builder.toml) over tinytc_py.recipes
* cl.py        OpenCL interop (cl.toml) on the host's OpenCL objects (libtinytc_cl only)
"""

from .loader import attach

__all__ = ["attach"]
