"""`TINYTC_CACHE`: whether the kernel cache is on for the process. Its own module so that
warm.py, which the package re-exports, reads it without importing the package back."""

from __future__ import annotations

from .. import environ

ENV_SWITCH = "TINYTC_CACHE"


def switched_on() -> bool:
    """Whether TINYTC_CACHE leaves caching on for the process."""
    return not environ.says_off(environ.get(ENV_SWITCH))
