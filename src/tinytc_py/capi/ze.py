"""The Level Zero C API (capi/api/ze.toml) on the host's own Level Zero objects.

The host passes raw ze_*_handle_t values from its own loader; runtime.ze_api opens the same
`libze_loader.so.1`, so the handles are valid there as they are. Modules and kernels created
for the host are the host's to destroy; a recipe handler owns its module and kernels. Failed
Level Zero calls are compute_runtime_error (what TINYTC_ZE_CHECK_STATUS gives upstream), and
the build log of a failed module build goes to the error reporter of the compiler context.
"""

from __future__ import annotations

from typing import Any

from ..errors import UNKNOWN_LOCATION
from ..ir.context import CompilerContext
from ..runtime import level_zero as ze
from ..runtime.ze_core_info import core_info_from_ze_device, support_level
from ..target.core_info import CoreFeature
from .core import BinaryObj
from .errors import invalid
from .handles import addr, addresses, need, out, table
from .parsed import binary_of_handle
from .recipe import CRecipe, ReportRecords, bounds_checked
from .registry import export


def _reporter(ctx: CompilerContext) -> Any:
    def report(message: str) -> None:
        if ctx.reporter is not None:
            ctx.reporter(message, UNKNOWN_LOCATION)

    return report


@export
def tinytc_ze_core_info_create(info: Any, device: Any) -> None:
    need(info, device)
    ze.init()
    out(info, table.new_shared("core_info", core_info_from_ze_device(addr(device))))


@export
def tinytc_ze_get_support_level(device: Any, level: Any) -> None:
    need(device, level)
    ze.init()
    level[0] = int(support_level(addr(device)))


@export
def tinytc_ze_get_group_size(kernel: Any, x: Any, y: Any, z: Any) -> None:
    need(kernel, x, y, z)
    x[0], y[0], z[0] = ze.required_group_size(addr(kernel))


@export
def tinytc_ze_kernel_create(krnl: Any, mod: Any, name: Any) -> None:
    need(krnl, mod, name)
    module = ze.Module(ze.ze_api.handle("ze_module_handle_t", addr(mod)), owned=False)
    name_text = ze.ze_api.ffi.string(ze.ze_api.ffi.cast("char *", addr(name))).decode()
    out(krnl, ze.ze_api.address(module.kernel(name_text)))


def _module(context: Any, device: Any, binary: Any, ctx: CompilerContext) -> int:
    ze.init()
    module = ze.Module.create(addr(context), addr(device), binary, _reporter(ctx), ctx)
    return ze.ze_api.address(module.detach())


@export
def tinytc_ze_kernel_bundle_create_with_binary(
    bundle: Any, context: Any, device: Any, bin_: Any
) -> None:
    need(bundle, context, device)
    obj: BinaryObj = table.get("binary", bin_)
    out(bundle, _module(context, device, obj.binary, obj.ctx))


@export
def tinytc_ze_kernel_bundle_create_with_program(
    bundle: Any, context: Any, device: Any, prg: Any, core_features: int
) -> None:
    need(bundle, context, device)
    entry = table.entry("prog", prg)
    ze.init()
    info = core_info_from_ze_device(addr(device))
    info.core_features = CoreFeature(core_features)
    binary = binary_of_handle(entry, info)
    out(bundle, _module(context, device, binary, entry.obj.ctx))


class ZeCRecipeHandler:
    """The C API's view of a Level Zero recipe handler: memory arguments arrive as cffi
    pointers and become addresses for the runtime's handler. In bounds-checked mode it owns
    the report records, in shared USM of the context."""

    def __init__(self, crecipe: CRecipe, context: int, device: int) -> None:
        self.recipe = crecipe.recipe
        report = _reporter(self.recipe.prog.ctx)
        self.handler = ze.RecipeHandler(self.recipe, context, device, report)
        self.records: ReportRecords | None = None
        if bounds_checked(self.recipe):
            ctx = ze.Context.borrow(context)
            dev = ze.Device(device)
            self.records = ReportRecords(
                self.recipe, lambda nbytes: ctx.alloc_shared(nbytes, dev), ctx.free
            )

    def __del__(self) -> None:
        try:
            if self.records is not None:
                self.records.close()
        except Exception:  # noqa: BLE001 - never raise from a finaliser
            pass

    def set(self, kernel_name: str, args: list, groups: int) -> None:
        for arg in args:
            if arg.mem is not None:
                arg.mem = (arg.mem[0], addr(arg.mem[1]))
        self.handler.set(kernel_name, args, groups)


@export
def tinytc_ze_recipe_handler_create(handler: Any, context: Any, device: Any, recipe: Any) -> None:
    need(handler, context, device)
    crecipe: CRecipe = table.get("recipe", recipe)
    ze.init()
    obj = ZeCRecipeHandler(crecipe, addr(context), addr(device))
    out(handler, table.new_shared("recipe_handler", obj, (addr(recipe),)))


@export
def tinytc_ze_recipe_handler_submit(
    handler: Any, list_: Any, signal_event: Any, num_wait_events: int, wait_events: Any
) -> None:
    need(list_)
    h = table.get("recipe_handler", handler)
    if not isinstance(h, ZeCRecipeHandler):
        invalid("not a Level Zero recipe handler")
    wait = addresses(num_wait_events, wait_events)
    h.handler.submit(addr(list_), addr(signal_event) or None, wait)
