"""Recipes of the builder C API (capi.md §3.2.8). Phase 1 has only the block-size suggestion; the
recipe objects themselves (small GEMM batched, tall and skinny) come with the recipes package."""

from __future__ import annotations

from typing import Any

from ..errors import Status, TinytcError
from .handles import need, table
from .registry import export


@export
def tinytc_recipe_tall_and_skinny_suggest_block_size(info: Any, M_block_size: Any) -> None:
    need(M_block_size)
    core = table.get("core_info", info)
    size = min(128, core.minmax_work_group_size)
    if size <= 0:
        raise TinytcError(Status.invalid_core_info, "no usable work-group size")
    M_block_size[0] = size
