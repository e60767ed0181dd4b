"""Command-line options shared by tinytc and tinytc-opt (-d, -O, -f, --legacy, --version), with
the same meaning as upstream's tools; the device names, the core info that `-d` selects and the
flag names are the library's (options.py)."""

from __future__ import annotations

import argparse

from ..ir.enums import OptFlag
from ..options import DEFAULT_DEVICE, DEVICES
from . import add_version_option


def add_common_options(ap: argparse.ArgumentParser, device_help: str) -> None:
    add_version_option(ap)
    ap.add_argument(
        "-d",
        "--device",
        default=DEFAULT_DEVICE,
        choices=DEVICES,
        help=f"{device_help} (default {DEFAULT_DEVICE}; cpu = this host's CPU as the Intel CPU "
        "OpenCL runtime targets it, ISA from CL_CONFIG_CPU_TARGET_ARCH else the CPU flags; "
        "cpu-avx2 / cpu-avx512 = that ISA, whatever the host)",
    )
    ap.add_argument(
        "-O",
        dest="opt_level",
        type=int,
        choices=(0, 1, 2),
        default=2,
        help="optimization level (default 2)",
    )
    ap.add_argument(
        "-f",
        dest="flags",
        action="append",
        default=[],
        metavar="FLAG",
        help="enable FLAG, or disable it with no-FLAG (flags: "
        + ", ".join(f.name.replace("_", "-") for f in OptFlag)
        + ")",
    )


def add_legacy_option(ap: argparse.ArgumentParser) -> None:
    ap.add_argument(
        "--legacy",
        action="store_true",
        help="read the legacy (tinytc v0.3) tensor language; without it, text that does not "
        "parse as the current language is tried as legacy text",
    )


def dialect_of(args: argparse.Namespace) -> str:
    return "legacy" if args.legacy else "auto"
