#!/usr/bin/env python3
"""Generate src/tinytc_py/spirv/tables.py from the Khronos SPIR-V grammar JSON.

Why a generator: opcode numbers, operand layouts and enum values are facts owned by Khronos.
Typing them by hand invites silent mistakes; reading the grammar at import time would make every
compile depend on a system file. So the tables are generated once, committed, and `--check`
(run by the tests) fails when the committed file no longer matches what the inputs produce.

Inputs: the core grammar and the OpenCL.std extended-instruction grammar from Debian's
spirv-headers, plus tools/spirv_grammar_patch.json for the few newer instructions, operand kinds
and enumerants that this spirv-headers release lacks (SPV_KHR_cooperative_matrix,
SPV_INTEL_bfloat16_conversion) and corrections of instructions it gets wrong (OpAsmTargetINTEL).

Usage: gen_spirv_tables.py [--grammar-dir DIR] [--patch FILE] [--output FILE] [--check]
"""

from __future__ import annotations

import argparse
import json
import keyword
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_GRAMMAR_DIR = Path("/usr/include/spirv/unified1")
DEFAULT_PATCH = ROOT / "tools" / "spirv_grammar_patch.json"
DEFAULT_OUTPUT = ROOT / "src" / "tinytc_py" / "spirv" / "tables.py"
CORE_GRAMMAR = "spirv.core.grammar.json"
OPENCL_GRAMMAR = "extinst.opencl.std.100.grammar.json"


class GrammarError(Exception):
    """The grammar and the patch disagree, or the patch refers to something unknown."""


def _value(raw: int | str) -> int:
    """Enumerant values are ints for value enums and hex strings ("0x0010") for bit enums."""
    return raw if isinstance(raw, int) else int(raw, 0)


def _merge_enumerants(kind: str, existing: list[dict], additions: list[dict]) -> None:
    """Append `additions` to `existing`, skipping entries the system grammar already has."""
    by_name = {e["enumerant"]: _value(e["value"]) for e in existing}
    for entry in additions:
        name, value = entry["enumerant"], _value(entry["value"])
        if name not in by_name:
            existing.append(entry)
        elif by_name[name] != value:
            raise GrammarError(f"patch gives {kind}.{name} = {value}, grammar says {by_name[name]}")


def merge_patch(core: dict, patch: dict) -> None:
    """Fold the vendored patch into the core grammar in place.

    Entries already present with the same value are skipped so that the patch keeps working
    (as a no-op) once the installed headers are new enough; a conflicting value is an error
    because one of the two sources would then be wrong.
    """
    opcodes = {i["opname"]: i["opcode"] for i in core["instructions"]}
    for inst in patch.get("instructions", []):
        known = opcodes.get(inst["opname"])
        if known is None:
            core["instructions"].append(inst)
        elif known != inst["opcode"]:
            raise GrammarError(
                f"patch gives {inst['opname']} = {inst['opcode']}, grammar says {known}"
            )
    by_name = {i["opname"]: i for i in core["instructions"]}
    for fix in patch.get("corrections", []):
        inst = by_name.get(fix["opname"])
        if inst is None or inst["opcode"] != fix["opcode"]:
            raise GrammarError(f"correction for unknown instruction {fix['opname']}")
        inst["operands"] = fix["operands"]
    kinds = {k["kind"]: k for k in core["operand_kinds"]}
    for kind in patch.get("operand_kinds", []):
        if kind["kind"] in kinds:
            _merge_enumerants(kind["kind"], kinds[kind["kind"]]["enumerants"], kind["enumerants"])
        else:
            core["operand_kinds"].append(kind)
            kinds[kind["kind"]] = kind
    for kind_name, additions in patch.get("enumerants", {}).items():
        if kind_name not in kinds:
            raise GrammarError(f"patch adds enumerants to unknown operand kind {kind_name}")
        _merge_enumerants(kind_name, kinds[kind_name]["enumerants"], additions)
    used = {o["kind"] for i in core["instructions"] for o in i.get("operands", [])}
    missing = used - kinds.keys()
    if missing:
        raise GrammarError(f"instructions use undefined operand kinds: {sorted(missing)}")


def py_ident(kind: str, name: str) -> str:
    """A Python identifier for an enumerant; tables.py inverts exactly these two rules."""
    if keyword.iskeyword(name):
        return name + "_"
    if name[0].isdigit():
        return kind + name
    return name


def _operand_spec(operand: dict) -> str:
    """Operand kind plus its quantifier ('?' optional, '*' repeated) as one short string."""
    return operand["kind"] + operand.get("quantifier", "")


def _class(name: str, doc: str, members: list[tuple[str, int]], hexadecimal: bool) -> list[str]:
    lines = ["", "", f"class {name}:", f'    """{doc}"""', ""]
    for ident, value in members:
        literal = f"{value:#06x}" if hexadecimal else f"{value}"
        lines.append(f"    {ident}: Final = {literal}")
    return lines


def _tuple(items) -> str:
    items = list(items)
    if len(items) == 1:
        return f'("{items[0]}",)'
    return "(" + ", ".join(f'"{i}"' for i in items) + ")"


def _entry(indent: str, key: object, items) -> list[str]:
    """`key: (kinds...),` on one line, or one kind per line when that would exceed 100 columns."""
    items = list(items)
    line = f"{indent}{key}: {_tuple(items)},"
    if len(line) <= 100:
        return [line]
    return [f"{indent}{key}: (", *(f'{indent}    "{i}",' for i in items), f"{indent}),"]


def _sorted_stable(entries: list[dict], key: str) -> list[dict]:
    """Sort by numeric value; ties keep grammar order, so the canonical name stays first."""
    return sorted(entries, key=lambda e: _value(e[key]))


HEADER = '''\
"""SPIR-V grammar tables: opcodes, operand layouts, operand enums and OpenCL.std numbers.

Generated by tools/gen_spirv_tables.py (do not edit; `--check` fails when this file is stale).
Enum classes hold plain ints declared `Final`: the compiled modules (mypyc) put the number
itself into their code, so naming an opcode or enumerant costs nothing at run time (a plain
class attribute costs a module-dictionary and a class-attribute lookup each time). Enumerants
whose SPIR-V name is not a Python identifier are renamed: a keyword gets a trailing underscore
(`None` -> `None_`), a leading digit gets the kind as prefix (`1D` -> `Dim1D`); the *_NAMES
dictionaries give the SPIR-V spelling back. When several names share a
value (aliases such as `OpSDot`/`OpSDotKHR`) the first one listed is the canonical spelling.
"""
'''

FOOTER = '''

def _spelling(prefix: str, ident: str) -> str:
    """Invert the generator's renaming (`None_` -> `None`, `Dim1D` -> `1D`)."""
    if ident.endswith("_"):
        return ident[:-1]
    rest = ident.removeprefix(prefix)
    if rest != ident and rest[:1].isdigit():
        return rest
    return ident


def _names(cls: type, prefix: str = "") -> dict[int, str]:
    """Value -> SPIR-V name; class bodies list the canonical name of a value first."""
    names: dict[int, str] = {}
    for ident, value in vars(cls).items():
        if not ident.startswith("_"):
            names.setdefault(value, prefix + _spelling(cls.__name__, ident))
    return names


#: opcode -> "OpName"
OP_NAMES: dict[int, str] = _names(Op, "Op")
#: operand kind -> value -> enumerant name
ENUM_NAMES: dict[str, dict[int, str]] = {kind: _names(cls) for kind, cls in ENUMS.items()}
#: OpenCL.std instruction number -> name
OPENCL_STD_NAMES: dict[int, str] = _names(OpenCLStd)
#: opcodes whose first operand is a result type
HAS_RESULT_TYPE: frozenset[int] = frozenset(
    op for op, kinds in OPERANDS.items() if kinds[:1] == ("IdResultType",)
)
#: opcodes that define a result id
HAS_RESULT: frozenset[int] = frozenset(
    op for op, kinds in OPERANDS.items() if "IdResult" in kinds[:2]
)
'''


def _enum_classes(enum_kinds: list[dict]) -> list[str]:
    lines = []
    for kind in enum_kinds:
        bits = kind["category"] == "BitEnum"
        members = [
            (py_ident(kind["kind"], e["enumerant"]), _value(e["value"]))
            for e in _sorted_stable(kind["enumerants"], "value")
        ]
        doc = f"SPIR-V {'bit mask' if bits else 'enum'} {kind['kind']}."
        lines += _class(kind["kind"], doc, members, hexadecimal=bits)
    return lines


def _kind_tables(core: dict, enum_kinds: list[dict]) -> list[str]:
    kinds = core["operand_kinds"]
    lines = ["", "", "#: operand kind name -> enum class", "ENUMS: dict[str, type] = {"]
    lines += [f'    "{k["kind"]}": {k["kind"]},' for k in enum_kinds]
    lines += ["}", "#: every operand kind -> its category (Id, Literal, Composite, *Enum)"]
    lines += ["OPERAND_CATEGORIES: dict[str, str] = {"]
    lines += [f'    "{k["kind"]}": "{k["category"]}",' for k in kinds]
    lines += ["}", "#: Composite kinds -> the kinds of their two parts"]
    lines += ["COMPOSITE_PARTS: dict[str, tuple[str, ...]] = {"]
    for k in kinds:
        if k["category"] == "Composite":
            lines += _entry("    ", f'"{k["kind"]}"', k["bases"])
    lines += ["}", "#: enumerants that take extra operands: kind -> value -> operand kinds"]
    lines += ["ENUM_PARAMS: dict[str, dict[int, tuple[str, ...]]] = {"]
    for kind in enum_kinds:
        params: dict[int, list[str]] = {}
        for e in _sorted_stable(kind["enumerants"], "value"):
            if e.get("parameters"):
                params.setdefault(_value(e["value"]), [_operand_spec(p) for p in e["parameters"]])
        if params:
            lines.append(f'    "{kind["kind"]}": {{')
            for value, spec in params.items():
                lines += _entry("        ", value, spec)
            lines.append("    },")
    return lines + ["}"]


def _operand_tables(instructions: list[dict], opencl: dict) -> list[str]:
    lines = ["#: opcode -> operand kinds in order; suffix '?' = optional, '*' = zero or more"]
    lines += ["OPERANDS: dict[int, tuple[str, ...]] = {"]
    seen = set()
    for inst in instructions:
        if inst["opcode"] not in seen:
            seen.add(inst["opcode"])
            spec = [_operand_spec(o) for o in inst.get("operands", [])]
            lines += _entry("    ", inst["opcode"], spec)
    lines += ["}", "#: OpenCL.std instruction number -> operand kinds after the instruction number"]
    lines += ["OPENCL_STD_OPERANDS: dict[int, tuple[str, ...]] = {"]
    for inst in opencl["instructions"]:
        lines += _entry(
            "    ", inst["opcode"], [_operand_spec(o) for o in inst.get("operands", [])]
        )
    return lines + ["}"]


def render(core: dict, opencl: dict, patch_name: str) -> str:
    """The complete text of tables.py; deterministic for given inputs."""
    version = (core["major_version"], core["minor_version"], core["revision"])
    lines = [
        "# Generated by tools/gen_spirv_tables.py; do not edit. Inputs:",
        f"#   {CORE_GRAMMAR} {'.'.join(map(str, version))}",
        f"#   {OPENCL_GRAMMAR} {opencl['version']}.{opencl['revision']}",
        f"#   {patch_name}",
        HEADER.rstrip("\n"),
        "",
        "from typing import Final",
        "",
        f"GRAMMAR_VERSION = {version!r}",
        f"MAGIC_NUMBER: Final = {_value(core['magic_number']):#010x}",
    ]
    instructions = _sorted_stable(core["instructions"], "opcode")
    lines += _class(
        "Op",
        "Opcodes without the `Op` prefix: `Op.TypeInt` is OpTypeInt.",
        [(i["opname"][2:], i["opcode"]) for i in instructions],
        hexadecimal=False,
    )
    enum_kinds = [k for k in core["operand_kinds"] if k["category"] in ("ValueEnum", "BitEnum")]
    lines += _enum_classes(enum_kinds)
    lines += _class(
        "OpenCLStd",
        "Instruction numbers of the OpenCL.std extended instruction set.",
        [(py_ident("OpenCLStd", i["opname"]), i["opcode"]) for i in opencl["instructions"]],
        hexadecimal=False,
    )
    lines += _kind_tables(core, enum_kinds)
    lines += _operand_tables(instructions, opencl)
    return "\n".join(lines) + "\n" + FOOTER


def generate(grammar_dir: Path, patch_path: Path) -> str:
    core = json.loads((grammar_dir / CORE_GRAMMAR).read_text())
    opencl = json.loads((grammar_dir / OPENCL_GRAMMAR).read_text())
    merge_patch(core, json.loads(patch_path.read_text()))
    return render(core, opencl, patch_path.name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grammar-dir", type=Path, default=DEFAULT_GRAMMAR_DIR)
    parser.add_argument("--patch", type=Path, default=DEFAULT_PATCH)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if --output differs instead of writing it"
    )
    args = parser.parse_args(argv)
    try:
        text = generate(args.grammar_dir, args.patch)
    except (OSError, GrammarError, KeyError, ValueError) as err:
        print(f"gen_spirv_tables: {err}", file=sys.stderr)
        return 2
    if args.check:
        current = args.output.read_text() if args.output.exists() else None
        if current != text:
            print(
                f"gen_spirv_tables: {args.output} is stale; run tools/gen_spirv_tables.py",
                file=sys.stderr,
            )
            return 1
        return 0
    args.output.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
