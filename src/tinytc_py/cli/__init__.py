"""Command-line tools: tinytc (offline compiler), tinytc-opt, tinytc-py, tinytc-upgrade and
tinytc-cache; and the one option they all have, `--version` (kept here, free of compiler
imports, so that a tool that needs no compiler starts without loading one)."""

from __future__ import annotations

import argparse
import importlib.metadata

DISTRIBUTION = "tinytc-py"


def add_version_option(ap: argparse.ArgumentParser) -> None:
    """`--version`: prints the tool's name and the installed tinytc-py version, then exits."""
    try:
        version = importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:  # run from a source tree, not installed
        version = "(not installed)"
    ap.add_argument("--version", action="version", version=f"%(prog)s ({DISTRIBUTION}) {version}")
