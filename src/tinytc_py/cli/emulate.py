"""tinytc-emulate: rewrite a SPIR-V module compiled for an Intel GPU so the CPU runtime runs it.

    tinytc-emulate IN.spv -o OUT.spv [--device pvc|bmg]

The output keeps the kernels, their arguments, subgroup and work-group sizes; see
docs/emulate.rst for what is emulated. Exit status 1 with a message naming the construct when
the input uses something the emulator does not implement.
"""

from __future__ import annotations

import argparse
import sys

from ..emulate import DEVICES, emulate_spirv
from ..errors import TinytcError
from . import add_version_option


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tinytc-emulate", description=__doc__.splitlines()[0])
    add_version_option(parser)
    parser.add_argument("input", help="SPIR-V binary compiled for an Intel GPU")
    parser.add_argument("-o", "--output", required=True, help="output SPIR-V binary")
    parser.add_argument(
        "--device",
        choices=DEVICES,
        default="pvc",
        help="the GPU the input was compiled for (default pvc); its subgroup sizes are checked",
    )
    args = parser.parse_args(argv)
    try:
        with open(args.input, "rb") as f:
            data = f.read()
        out = emulate_spirv(data, args.device)
    except (OSError, ValueError, TinytcError) as e:
        print(f"tinytc-emulate: {args.input}: {e}", file=sys.stderr)
        return 1
    with open(args.output, "wb") as f:
        f.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
