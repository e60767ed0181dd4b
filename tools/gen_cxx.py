"""The C++ half of tools/gen_capi.py: tinytc's C++ API headers from the same API description.

The C++ API is a header-only layer over the C functions (upstream tinytc's `tinytc.hpp` and its
parts). Its hand-written parts (handles, array views, the builder helpers, the runtime
interop) are templates in capi/cxx/*.hpp.in; what follows mechanically from the C API is
generated into them at `// @generated <part>` lines:

  enums     one `enum class <name>` per C enum with the same values, and `to_string`
  forward   the instruction and type class tags (`gemm_inst`, `memref_type`, ...)
  getters   `getter<X_type>`: one per `tinytc_X_type_get`, its parameters in C++ types
  creators  `creator<X_inst>`: one per `tinytc_X_inst_create`

Parameter translation (C -> C++): `size_t n_size, const T *n` -> `array_view<T'> n`;
`tinytc_bool_t` -> `bool`; `tinytc_<enum>_t` -> the enum class; the rest is kept.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gen_capi import Api, Function, Param

TEMPLATE_DIR = Path(__file__).resolve().parent.parent / "capi" / "cxx"
HEADERS = ("tinytc", "types", "core", "builder", "tinytc_cl", "tinytc_ze", "tinytc_sycl")
MARKER = re.compile(r"^// @generated (\w+)\n", re.M)
CXX_SCALARS = {"tinytc_bool_t": "bool", "int32_t": "std::int32_t", "int64_t": "std::int64_t"}


def _cxx_scalar(api: Api, ctype: str) -> tuple[str, str | None]:
    """The C++ type of a C value type and, for enums, the C type to cast back to."""
    enums = {e.ctype: e.name for e in api.enums}
    if ctype in enums:
        return enums[ctype], ctype
    return CXX_SCALARS.get(ctype, ctype), None


def cxx_params(api: Api, params: list[Param]) -> list[tuple[str, str, str]]:
    """(C++ declaration type, name, expression passing it on to C) for each C++ parameter."""
    out = []
    i = 0
    while i < len(params):
        p = params[i]
        nxt = params[i + 1] if i + 1 < len(params) else None
        if p.ctype == "size_t" and nxt is not None and p.name == f"{nxt.name}_size":
            elem = nxt.ctype.removeprefix("const ").removesuffix(" *").removesuffix("*")
            cxx, cast = _cxx_scalar(api, elem)
            data = (
                f"reinterpret_cast<const {cast} *>({nxt.name}.data())"
                if cast
                else (f"{nxt.name}.data()")
            )
            out.append((f"array_view<{cxx}>", nxt.name, f"{nxt.name}.size(), {data}"))
            i += 2
            continue
        cxx, cast = _cxx_scalar(api, p.ctype)
        out.append((cxx, p.name, f"static_cast<{cast}>({p.name})" if cast else p.name))
        i += 1
    return out


def _enums(api: Api) -> str:
    out = []
    for e in api.enums:
        cases = "".join(f"    {case} = {value},\n" for case, value, _ in e.members)
        out.append(
            f"//! C++ spelling of {e.ctype}\nenum class {e.name} {{\n{cases}}};\n"
            f"//! Text of a {e.name} value (the C API's tinytc_{e.name}_to_string)\n"
            f"inline auto to_string({e.name} val) -> char const * {{\n"
            f"    return ::tinytc_{e.name}_to_string(static_cast<{e.ctype}>(val));\n}}\n\n"
        )
    return "".join(out)


def _instruction_creators(api: Api) -> list[Function]:
    return [f for f in api.functions if f.name.endswith("_inst_create") and f.header == "builder"]


def _type_getters(api: Api) -> list[Function]:
    return [f for f in api.functions if re.fullmatch(r"tinytc_\w+_type_get", f.name)]


def _class(func: Function, prefix: str = "tinytc_", suffix: str = "_create") -> str:
    return func.name.removeprefix(prefix).removesuffix(suffix)


def _forward(api: Api) -> str:
    cxx = api.cxx
    insts = [_class(f) for f in _instruction_creators(api)] + ["constant_inst"]
    insts += [f"{n}_inst" for n in cxx["abstract_instructions"]]
    types = [_class(f, suffix="_get") for f in _type_getters(api)]
    types += [f"{n}_type" for n in cxx["abstract_types"]]
    out = ["//! Instruction classes: tags naming what creator<T> creates\n"]
    out += [f"class {n};\n" for n in sorted(set(insts))]
    out.append("\n//! Data type classes: tags naming what getter<T> returns\n")
    out += [f"class {n};\n" for n in sorted(set(types))]
    return "".join(out)


def _wrap(head: str, items: list[str], tail: str, indent: str) -> str:
    """head(items)tail on one line when it fits in 100 columns, else one item per line."""
    line = f"{head}({', '.join(items)}){tail}"
    if len(indent) + len(line) <= 100:
        return indent + line
    inner = indent + "    "
    return f"{indent}{head}(\n" + ",\n".join(inner + i for i in items) + f"){tail}"


def _decls(params: list[tuple[str, str, str]]) -> list[str]:
    return [f"{t} {n}" for t, n, _ in params]


def _getters(api: Api) -> str:
    out = []
    for f in _type_getters(api):
        cls = _class(f, suffix="_get")
        params = cxx_params(api, f.params[1:])
        args = ["&ty"] + [c for _, _, c in params]
        out.append(
            f"//! {f.doc}\ntemplate <> struct getter<{cls}> {{\n"
            + _wrap("inline auto operator()", _decls(params), " -> tinytc_type_t {", "    ")
            + "\n        tinytc_type_t ty;\n"
            + _wrap(f"CHECK_STATUS({f.name}", args, ");", "        ")
            + "\n        return ty;\n    }\n};\n\n"
        )
    return "".join(out)


def _results(f: Function) -> str:
    """How many values the instruction returns: 0, 1, or `max` for a list."""
    names = [p.name for p in f.params]
    if "results" in names:
        return "std::numeric_limits<std::int32_t>::max()"
    return "1" if "result" in names else "0"


def _creators(api: Api) -> str:
    out = []
    for f in _instruction_creators(api):
        cls = _class(f)
        params = cxx_params(api, f.params[1:-1])
        args = ["&instr"] + [c for _, _, c in params] + ["&loc"]
        decls = _decls(params) + ["location const &loc = {}"]
        out.append(
            f"//! {f.doc}\ntemplate <> struct creator<{cls}> {{\n"
            f"    //! Number of values the instruction defines\n"
            f"    constexpr static std::int32_t max_returned_values = {_results(f)};\n"
            + _wrap("inline auto operator()", decls, " -> unique_handle<tinytc_inst_t> {", "    ")
            + "\n        tinytc_inst_t instr;\n"
            + _wrap(f"CHECK_STATUS_LOC({f.name}", args, ", loc);", "        ")
            + "\n        return unique_handle{instr};\n    }\n};\n\n"
        )
    return "".join(out)


def render(api: Api, header: str, generated_note: str) -> str:
    parts = {
        "enums": _enums,
        "forward": _forward,
        "getters": _getters,
        "creators": _creators,
    }
    text = (TEMPLATE_DIR / f"{header}.hpp.in").read_text()
    body = MARKER.sub(lambda m: parts[m.group(1)](api), text)
    return f"// {generated_note}\n// Template: capi/cxx/{header}.hpp.in\n{body}"


def outputs(api: Api, include_dir: Path, generated_note: str) -> dict[Path, str]:
    return {include_dir / f"{h}.hpp": render(api, h, generated_note) for h in HEADERS}
