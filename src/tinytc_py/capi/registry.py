"""Which Python function implements which exported C function.

Implementations are plain functions named like the C function they implement, registered with
`@export`; they take the C arguments as cffi passes them and return nothing (success) or raise.
The implementing modules import this one; loader.py imports them and attaches what they
registered, so nothing here imports an implementing module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

IMPLS: dict[str, Callable[..., Any]] = {}


def export(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Registers `fn` as the implementation of the C function of the same name."""
    IMPLS[fn.__name__] = fn
    return fn


def register(name: str, fn: Callable[..., Any]) -> None:
    """Registers an implementation under an explicit name (for generated functions)."""
    IMPLS[name] = fn
