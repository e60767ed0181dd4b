"""The Python side of libtinytc_sycl's recipe handlers (its C++ part: capi/sycl/tinytc_sycl.cpp).

Everything else libtinytc_sycl does goes through the public OpenCL and Level Zero C APIs on the
native objects behind the SYCL ones. A recipe handler cannot: `parallel_for` must launch the
kernel that the last `set_args` chose, with the group count it computed, and only the Python
handler object knows those. So the library's two private functions (not exported from it) are
implemented here:

* `_tinytc_sycl_recipe_handler_create` makes the backend's handler (the same classes as
  tinytc_cl/tinytc_ze recipe handlers, on the native context and device) and keeps next to it
  an opaque pointer from the C++ side (the SYCL context and the SYCL kernels made for it) with
  the function that frees it when the handle goes away;
* `_tinytc_sycl_recipe_handler_launch` tells the C++ side that pointer, the native kernel to
  launch (and, for Level Zero, its module) and the number of work-groups.
"""

from __future__ import annotations

from typing import Any

from ..errors import Status, TinytcError
from .errors import invalid
from .handles import addr, need, out, table
from .recipe import CRecipe
from .registry import export

#: The backend numbers the C++ side passes (private to libtinytc_sycl).
BACKEND_OPENCL = 0
BACKEND_LEVEL_ZERO = 1


class SyclRecipeHandler:
    """A recipe handler of a SYCL device: the native backend's handler (which builds the
    kernels and sets their arguments) and the C++ side's state for launching them."""

    def __init__(self, native: Any, backend: int, data: Any, destroy: Any) -> None:
        self.native = native
        self.backend = backend
        self.data = data
        self.destroy = destroy

    @property
    def recipe(self) -> Any:
        return self.native.recipe

    @property
    def records(self) -> Any:
        """The native handler's bounds report records (None unless bounds-checked)."""
        return self.native.records

    def set(self, kernel_name: str, args: list, groups: int) -> None:
        self.native.set(kernel_name, args, groups)

    def launch(self) -> tuple[int, int, int]:
        """(native kernel, native module or 0, work-groups) of the last set_args."""
        if self.backend == BACKEND_OPENCL:
            if not self.native.active:
                raise TinytcError(Status.invalid_kernel_arguments, "set_args was not called")
            return self.native.kernels[self.native.active][0], 0, self.native.groups
        from ..runtime import ze_api

        handler = self.native.handler
        if handler.active is None:
            raise TinytcError(Status.invalid_kernel_arguments, "set_args was not called")
        module = ze_api.address(handler.module.handle)
        return ze_api.address(handler.active), module, handler.groups

    def __del__(self) -> None:
        if self.destroy is None:  # creation failed: the C++ caller keeps its state
            return
        try:  # noqa: SIM105 - contextlib may be gone (None) at interpreter exit
            self.destroy(self.data)
        except Exception:  # noqa: BLE001 - never raise from a finaliser
            pass


def _native_handler(backend: int, crecipe: CRecipe, context: int, device: int) -> Any:
    if backend == BACKEND_OPENCL:
        from .cl import ClRecipeHandler

        return ClRecipeHandler(crecipe, context, device)
    if backend == BACKEND_LEVEL_ZERO:
        from ..runtime import level_zero as ze
        from .ze import ZeCRecipeHandler

        ze.init()
        return ZeCRecipeHandler(crecipe, context, device)
    raise TinytcError(Status.unsupported_backend, f"unknown SYCL backend number {backend}")


@export
def _tinytc_sycl_recipe_handler_create(
    handler: Any, backend: int, context: Any, device: Any, recipe: Any, data: Any, destroy: Any
) -> None:
    need(handler, context, device, data)
    crecipe: CRecipe = table.get("recipe", recipe)
    native = _native_handler(backend, crecipe, addr(context), addr(device))
    # The C++ caller frees `data` itself when this fails, so the handler owns it (and its
    # finaliser may call `destroy`) only once the handle is handed out.
    obj = SyclRecipeHandler(native, backend, data, None)
    out(handler, table.new_shared("recipe_handler", obj, (addr(recipe),)))
    obj.destroy = destroy


@export
def _tinytc_sycl_recipe_handler_launch(
    handler: Any, data: Any, kernel: Any, module: Any, num_groups: Any
) -> None:
    need(data, kernel, module, num_groups)
    h = table.get("recipe_handler", handler)
    if not isinstance(h, SyclRecipeHandler):
        invalid("not a SYCL recipe handler")
    native_kernel, native_module, groups = h.launch()
    data[0] = h.data
    out(kernel, native_kernel)
    out(module, native_module)
    num_groups[0] = groups
