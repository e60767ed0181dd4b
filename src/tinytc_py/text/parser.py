"""Recursive-descent parser of the tensor language with the preprocessor built in.

Regular instructions are parsed from their format string in the instruction table; the region
instructions and the few irregular ones (constant, subview, expand) have hand-written rules
below. Every instruction is created through its class, so the parser verifies exactly as the
builder does.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import CompilationError, Location, Status
from ..ir.attrs import Attr, DictionaryAttr, StringAttr
from ..ir.context import CompilerContext
from ..ir.enums import AddressSpace, MatrixUse, Syntax
from ..ir.inst import Inst
from ..ir.nesting import MAX_NESTING, nesting_error
from ..ir.ops import INSTRUCTIONS
from ..ir.region import Func, Prog, Region
from ..ir.types import DYNAMIC, NumberType, ScalarKind, Type
from ..ir.values import Value
from ..ir.verify import check_exec, check_region_end, finish_func
from . import extension_syntax
from . import lexer as lx
from .extension_syntax import check_parsed_extension, parse_global, parse_global_name
from .preprocessor import Definitions, evaluate_rpn
from .syntax import modifier_props

SCALAR = re.compile(r"(?:i16|i32|i64|i8|index|bf16|f16|f32|f64|c32|c64)")
_SCALAR_KINDS = {k.text: k for k in ScalarKind}
_RPN_OPS = re.compile(r"\^|-(?![0-9])|\+(?![0-9])|\*|/|%|min\b|max\b")
# The operands of an instruction by name, as `Inst` takes them.
OperandMap = dict[str, Value | list[Value] | None]
_USES = {"matrix_a": MatrixUse.a, "matrix_b": MatrixUse.b, "matrix_acc": MatrixUse.acc}
# The modifier properties of each instruction class (syntax.modifier_props), looked up once.
_MODIFIER_PROPS: dict[type[Inst], tuple[tuple[Any, dict[str, Any]], ...]] = {}


def one_result_end(text: str, pos: int) -> int:
    """The end of `%name =` at `pos`, the result of an instruction with one result written on
    one line (`%name[ \t]*=`), read in one step by parse_inst; 0 when there is none."""
    n = len(text)
    if pos >= n or ord(text[pos]) != 37:  # '%'
        return 0
    end = lx.name_end(text, pos + 1)
    if end == pos + 1:
        return 0
    while end < n and (ord(text[end]) == 32 or ord(text[end]) == 9):
        end += 1
    return end + 1 if end < n and ord(text[end]) == 61 else 0  # '='


class Parser:
    def __init__(self, ctx: CompilerContext, text: str, name: str = "", source_id: int = 0) -> None:
        """`source_id` is that of a source already registered (when a second parser reads it)."""
        self.ctx = ctx
        self.c = lx.Cursor(text, source_id or ctx.add_source(name, text))
        self.defs = Definitions()
        # The values in scope by name: a name is defined once in a scope and all the scopes
        # nested in it, so one table serves every lookup; `scopes` lists the names each open
        # scope defined, to take them out when it closes.
        self.visible: dict[str, Value] = {}
        self.scopes: list[list[str]] = []
        self.regions: list[Region] = []  # regions being parsed, innermost last
        self.attr_depth = 0  # array and dictionary attributes being parsed
        self.prog: Prog | None = None  # the program being parsed (its globals are visible)
        self.memref_spellings: dict[str, Type] = {}  # see parse_memref

    # ---- program and functions ----------------------------------------------------------------

    def parse_prog(self) -> Prog:
        prog = self.prog = Prog(self.ctx, self.c.loc(0, 0))
        names: set[str] = set()
        while not self.c.at_end():
            if self.c.peek("$"):
                self.parse_def_assign()
                continue
            if self.c.peek("global"):
                parse_global(self, prog)
                continue
            func = self.parse_func()
            if func.name in names:
                raise CompilationError(
                    func.loc, Status.parse_error, f"function @{func.name} is already defined"
                )
            names.add(func.name)
            prog.add_function(func)
        return prog

    def parse_func(self) -> Func:
        c = self.c
        begin = c.skip()
        c.expect("func", "'func'")
        fname = c.name("@")
        if fname is None:
            raise c.error("expected function name (@name)")
        c.expect("(")
        params: list[tuple[str, Type, Location, DictionaryAttr | None]] = []
        if not c.accept(")"):
            while True:
                pbegin = c.skip()
                pname = c.name("%")
                if pname is None:
                    raise c.error("expected parameter (%name)")
                c.expect(":")
                ty = self.parse_type()
                ploc = c.loc(pbegin)
                pattrs = self.parse_dictionary() if c.peek("{") or c.peek("$") else None
                params.append((pname, ty, ploc, pattrs))
                if c.accept(")"):
                    break
                c.expect(",", "',' or ')'")
        attrs = self.parse_func_attrs()
        func = Func(fname, [p[1] for p in params], c.loc(begin), attrs)
        for value, (pname, _, ploc, _attrs) in zip(func.params, params):
            value.name = "" if pname.isdigit() else pname
            value.loc = ploc
        func.param_attrs = [p[3] for p in params]
        self.scopes.append([])
        for value, (pname, *_rest) in zip(func.params, params):
            self.define_value(pname, value)
        self.parse_region(func.body)
        self.close_scope()
        finish_func(func)
        return func

    def parse_func_attrs(self) -> DictionaryAttr | None:
        """`attributes {...}` after the parameter list (the legacy front end adds its forms)."""
        return self.parse_dictionary() if self.c.accept("attributes") else None

    # ---- regions and values -------------------------------------------------------------------

    def parse_region(self, region: Region, names: Sequence[tuple[str, Location]] = ()) -> None:
        c = self.c
        begin = c.skip()
        c.expect("{", "'{'")
        if len(self.regions) >= MAX_NESTING:
            raise nesting_error(c.loc(begin))
        owner = region.owner
        if isinstance(owner, Inst) and owner.parent is None and self.regions:
            # The owner is appended to the enclosing region only after its regions are parsed,
            # but a mixed region (for, if) takes its kind from there already: without the
            # parent, a `for` inside `parallel` would reject SPMD instructions.
            owner.parent = self.regions[-1]
        self.regions.append(region)
        kind = region.effective_kind()  # fixed while the region is read
        self.scopes.append([])
        self.defs.push()
        for value, (name, loc) in zip(region.params, names):
            value.name = "" if name.isdigit() else name
            value.loc = loc
            self.define_value(name, value)
        while not c.accept("}"):
            if c.at_end():
                raise c.error("expected '}'")
            if c.peek("$"):
                self.parse_def_assign()
                continue
            inst = self.parse_inst()
            check_exec(inst, kind)
            region.append(inst)
        region.loc = c.loc(begin)
        self.defs.pop()
        self.close_scope()
        self.regions.pop()
        check_region_end(region)

    def define_value(self, name: str, value: Value) -> None:
        defined = self.visible.get(name)
        if defined is not None:
            raise CompilationError(
                value.loc,
                Status.parse_error,
                f"identifier %{name} is already defined",
                [defined],
            )
        self.visible[name] = value
        self.scopes[-1].append(name)

    def close_scope(self) -> None:
        visible = self.visible
        for name in self.scopes.pop():
            del visible[name]

    def parse_value(self) -> Value:
        c = self.c
        begin = c.skip()
        name = c.name("%")
        if name is None:
            raise c.error("expected local identifier (%name)")
        value = self.visible.get(name)
        if value is None:
            raise CompilationError(
                c.loc(begin), Status.parse_error, f"undefined identifier %{name}"
            )
        return value

    def parse_value_list(self, close: str) -> list[Value]:
        """Comma-separated values up to (not including) `close`; may be empty."""
        return self.parse_list(close, self.parse_value)

    def parse_list(self, close: str, item: Callable[[], Any]) -> list[Any]:
        """Comma-separated items up to (not including) `close`; may be empty."""
        items: list[Any] = []
        if self.c.peek(close):
            return items
        items.append(item())
        while self.c.accept(","):
            items.append(item())
        return items

    def parse_name_list(self) -> list[tuple[str, Location]]:
        """'(' %a, %b ')' of names that a region instruction defines."""
        c = self.c
        c.expect("(")
        names = [self.parse_new_name()]
        while c.accept(","):
            names.append(self.parse_new_name())
        c.expect(")")
        return names

    def parse_new_name(self) -> tuple[str, Location]:
        begin = self.c.skip()
        name = self.c.name("%")
        if name is None:
            raise self.c.error("expected local identifier (%name)")
        return name, self.c.loc(begin)

    # ---- preprocessor ---------------------------------------------------------------------------

    def parse_def_assign(self) -> None:
        c = self.c
        begin = c.skip()
        name = c.name("$")
        if name is None:
            raise c.error("expected compile-time variable ($name)")
        c.expect("=")
        value = self.parse_def_rhs()
        self.defs.define(name, value, c.loc(begin))

    def parse_def_rhs(self) -> Any:
        c = self.c
        if c.accept("!calc"):
            return self.parse_calc()
        if c.peek("$"):
            return self.lookup_def()
        if c.accept("true"):
            return True
        if c.accept("false"):
            return False
        if c.peek("[") or c.peek("{") or c.peek('"'):
            return self.parse_attr()
        number = self.parse_optional_number()
        if number is not None:
            return number
        return self.parse_type()

    def parse_calc(self) -> int:
        c = self.c
        begin = c.pos
        c.expect("(")
        items: list[tuple[str | int, Location]] = []
        while not c.accept(")"):
            ibegin = c.skip()
            if c.at_end():
                raise c.error("expected ')'")
            op = c.match(_RPN_OPS)
            if op:
                items.append((op.group(0), c.loc(ibegin)))
            else:
                items.append((self.parse_integer(), c.loc(ibegin)))
        return evaluate_rpn(items, c.loc(begin))

    def lookup_def(self) -> Any:
        c = self.c
        begin = c.skip()
        name = c.name("$")
        if name is None:
            raise c.error("expected compile-time variable ($name)")
        return self.defs.lookup(name, c.loc(begin))

    # ---- constants ----------------------------------------------------------------------------

    def parse_optional_number(self) -> int | float | None:
        c = self.c
        begin = c.skip()
        end = lx.integer_end(c.text, begin)
        if end != begin:
            c.pos = end
            value = lx.parse_integer_text(c.text[begin:end])
            if value is None:
                raise CompilationError(
                    c.loc(begin), Status.parse_error, "integer constant out of range"
                )
            return value
        m = c.match(lx.FLOAT)
        if m:
            fvalue = lx.parse_float_text(m.group(0))
            if fvalue is None:
                raise CompilationError(
                    c.loc(begin), Status.parse_error, "floating constant out of range"
                )
            return fvalue
        return None

    def parse_integer(self) -> int:
        c = self.c
        begin = c.skip()
        value = self.lookup_def() if c.peek("$") else self.parse_optional_number()
        if not isinstance(value, int) or isinstance(value, bool):
            if c.pos == begin:
                raise c.error("expected integer constant")
            raise CompilationError(c.loc(begin), Status.parse_error, "expected integer constant")
        return value

    def parse_constant_value(self) -> Any:
        """bool, int, float, (re, im) or a $variable holding one of those."""
        c = self.c
        begin = c.skip()
        if c.peek("$"):
            value = self.lookup_def()
        elif c.accept("true"):
            value = True
        elif c.accept("false"):
            value = False
        elif c.accept("["):
            re_part = self.parse_float_component()
            c.expect(",")
            im_part = self.parse_float_component()
            c.expect("]")
            value = (re_part, im_part)
        else:
            value = self.parse_optional_number()
        if value is None or isinstance(value, (Type, Attr)):
            if c.pos == begin:
                raise c.error("expected constant")
            raise CompilationError(c.loc(begin), Status.parse_error, "expected constant")
        return value

    def parse_float_component(self) -> float:
        """A part of a complex-constant: a floating-constant (an integer is not one)."""
        c = self.c
        begin = c.skip()
        value = self.lookup_def() if c.peek("$") else self.parse_optional_number()
        if not isinstance(value, float):
            if c.pos == begin:
                raise c.error("expected floating constant")
            raise CompilationError(c.loc(begin), Status.parse_error, "expected floating constant")
        return value

    # ---- types --------------------------------------------------------------------------------

    def parse_type(self) -> Type:
        c = self.c
        begin = c.skip()
        if c.peek("$"):
            value = self.lookup_def()
            if not isinstance(value, Type):
                raise CompilationError(c.loc(begin), Status.parse_error, "expected a type")
            return value
        word = c.word()
        if word is None:
            raise c.error("expected type")
        kind = _SCALAR_KINDS.get(word)
        if kind is not None:
            return self.ctx.number(kind)
        if word == "bool":
            return self.ctx.bool
        if word == "void":
            return self.ctx.void
        c.pos = begin
        if c.accept("memref"):
            return self.parse_memref(begin)
        if c.accept("group"):
            return self.parse_group_body(begin)
        if c.accept("coopmatrix"):
            return self.parse_coopmatrix_body(begin)
        for keyword in ("memref", "group", "coopmatrix"):
            if word.startswith(keyword):
                # "memreff32x8": the keyword, then a token where "<" must follow (upstream's
                # lexer splits the word there and its parser reports the token after it)
                rest = word[len(keyword) :]
                token = next((t for t in (*_SCALAR_KINDS, "bool") if rest.startswith(t)), rest)
                at = begin + len(keyword)
                raise CompilationError(
                    c.loc(at, at + len(token)),
                    Status.parse_error,
                    f"syntax error, unexpected {token}, expecting <",
                )
        raise CompilationError(
            c.loc(begin, begin + len(word)), Status.parse_error, f"unknown type '{word}'"
        )

    def parse_scalar_in_type(self) -> NumberType:
        c = self.c
        begin = c.skip()
        if c.peek("$"):
            value = self.lookup_def()
        else:
            m = c.match(SCALAR)
            value = self.ctx.number(_SCALAR_KINDS[m.group(0)]) if m else None
        if not isinstance(value, NumberType):
            if c.pos == begin:
                raise c.error("expected number type")
            raise CompilationError(c.loc(begin), Status.parse_error, "expected number type")
        return value

    def parse_extent(self) -> int:
        c = self.c
        if c.accept("?"):
            return DYNAMIC
        begin = c.skip()
        if c.peek("$"):
            return self.parse_integer()
        end = lx.digits_end(c.text, begin)
        if end == begin:
            raise c.error("expected integer constant or '?'")
        c.pos = end
        value = lx.parse_integer_text(c.text[begin:end])
        if value is None:
            raise CompilationError(
                c.loc(begin), Status.parse_error, "integer constant out of range"
            )
        return value

    def accept_x(self) -> bool:
        """The 'x' separator of shapes; it may touch the next number (`4x8`)."""
        c = self.c
        if c.at("x", c.skip()):  # (Cursor.at: str.startswith is a method call when compiled)
            c.pos += 1
            return True
        return False

    def parse_shape(self) -> list[int]:
        shape = []
        while self.accept_x():
            shape.append(self.parse_extent())
        return shape

    def parse_memref(self, begin: int) -> Type:
        """A memref type after its keyword. Programs spell the same memref types again and again
        (parameters, subviews, loads): a spelling read before is looked up instead of read again.
        Its value depends on the spelling alone (no $variable, which depends on the scope, and
        no comment), and only a spelling read without error to its end is recorded."""
        c = self.c
        end = lx.memref_spelling_end(c.text, begin)
        if end < 0:
            return self.parse_memref_body(begin)
        spelling = c.text[begin:end]
        ty = self.memref_spellings.get(spelling)
        if ty is not None:
            c.pos = end
            return ty
        ty = self.parse_memref_body(begin)
        if c.pos == end:
            self.memref_spellings[spelling] = ty
        return ty

    def parse_memref_body(self, begin: int) -> Type:
        c = self.c
        c.expect("<")
        element = self.parse_scalar_in_type()
        shape = self.parse_shape()
        stride = None
        addrspace = AddressSpace.global_
        while c.accept(","):
            if c.accept("strided"):
                c.expect("<")
                stride = []
                if not c.peek(">"):
                    stride.append(self.parse_extent())
                    while c.accept(","):
                        stride.append(self.parse_extent())
                c.expect(">")
            elif c.accept("local"):
                addrspace = AddressSpace.local
            elif c.accept("global"):
                addrspace = AddressSpace.global_
            else:
                raise c.error("expected 'strided', 'local' or 'global'")
        c.expect(">")
        if stride is not None and len(stride) != len(shape):
            raise CompilationError(
                c.loc(begin),
                Status.ir_shape_stride_mismatch,
                "shape and stride must have the same length",
            )
        return self.ctx.memref(element, shape, stride, addrspace, c.loc(begin))

    def parse_group_body(self, begin: int) -> Type:
        c = self.c
        c.expect("<")
        memref = self.parse_type()
        size = self.parse_group_size()
        offset = 0
        if c.accept(","):
            c.expect("offset")
            c.expect(":")
            offset = self.parse_extent()
        c.expect(">")
        return self.ctx.group(memref, size, offset, c.loc(begin))

    def parse_group_size(self) -> int:
        """The `x size` of a group type (the legacy front end allows it to be left out)."""
        if not self.accept_x():
            raise self.c.error("expected 'x' and the group size")
        return self.parse_extent()

    def parse_coopmatrix_body(self, begin: int) -> Type:
        c = self.c
        c.expect("<")
        component = self.parse_scalar_in_type()
        shape = self.parse_shape()
        if len(shape) != 2:
            raise CompilationError(c.loc(begin), Status.parse_error, "coopmatrix needs rows x cols")
        if DYNAMIC in shape:
            raise CompilationError(
                c.loc(begin),
                Status.ir_invalid_shape,
                "coopmatrix rows and columns must be constants, not '?'",
            )
        c.expect(",")
        ubegin = c.skip()
        use = _USES.get(c.word() or "")
        if use is None:
            c.pos = ubegin
            raise c.error("expected matrix_a, matrix_b or matrix_acc")
        c.expect(">")
        return self.ctx.coopmatrix(component, shape[0], shape[1], use, c.loc(begin))

    # ---- attributes ---------------------------------------------------------------------------

    def parse_attr(self) -> Attr:
        c = self.c
        begin = c.skip()
        self.attr_depth += 1
        try:
            if self.attr_depth > MAX_NESTING:
                raise nesting_error(c.loc(begin, begin + 1), "attributes")
            return self.parse_attr_body(begin)
        finally:
            self.attr_depth -= 1

    def parse_attr_body(self, begin: int) -> Attr:
        c = self.c
        if c.peek("$"):
            value = self.lookup_def()
            if isinstance(value, bool):
                return self.ctx.boolean_attr(value)
            if isinstance(value, int):
                return self.ctx.integer_attr(value)
            if not isinstance(value, Attr):
                raise CompilationError(c.loc(begin), Status.parse_error, "expected attribute")
            return value
        if c.peek("{"):
            return self.parse_dictionary()
        if c.accept("["):
            items = []
            if not c.accept("]"):
                items.append(self.parse_attr())
                while c.accept(","):
                    items.append(self.parse_attr())
                c.expect("]")
            return self.ctx.array_attr(items)
        if c.accept("true"):
            return self.ctx.boolean_attr(True)
        if c.accept("false"):
            return self.ctx.boolean_attr(False)
        m = c.match(lx.STRING)
        if m:
            return self.ctx.string_attr(m.group(1))
        ibegin = c.skip()
        end = lx.integer_end(c.text, ibegin)
        if end != ibegin:
            c.pos = end
            value = lx.parse_integer_text(c.text[ibegin:end])
            if value is None:
                raise CompilationError(
                    c.loc(begin), Status.parse_error, "integer constant out of range"
                )
            return self.ctx.integer_attr(value)
        raise c.error("expected attribute")

    def parse_dictionary(self) -> DictionaryAttr:
        c = self.c
        begin = c.skip()
        if c.peek("$"):
            value = self.lookup_def()
            if not isinstance(value, DictionaryAttr):
                raise CompilationError(
                    c.loc(begin), Status.parse_error, "expected dictionary attribute"
                )
            return value
        c.expect("{")
        items: list[tuple[StringAttr | str, Attr]] = []
        if not c.accept("}"):
            while True:
                m = c.match(lx.STRING)
                name = m.group(1) if m else c.word()
                if name is None:
                    raise c.error("expected attribute name")
                c.expect("=")
                items.append((name, self.parse_attr()))
                if c.accept("}"):
                    break
                c.expect(",", "',' or '}'")
        return self.ctx.dictionary_attr(items, c.loc(begin))

    # ---- instructions -------------------------------------------------------------------------

    def parse_inst(self) -> Inst:
        c = self.c
        begin = c.skip()
        names: list[tuple[str, Location]] = []
        one = one_result_end(c.text, begin)
        if one:
            nend = lx.name_end(c.text, begin + 1)
            names.append((c.text[begin + 1 : nend], c.loc(begin, nend)))
            c.pos = one
        elif c.peek("%"):
            names.append(self.parse_new_name())
            while c.accept(","):
                names.append(self.parse_new_name())
            c.expect("=")
        mbegin = c.skip()
        mend = lx.mnemonic_end(c.text, mbegin)
        if mend == mbegin:
            raise c.error("expected instruction")
        c.pos = mend
        mnemonic = c.text[mbegin:mend]
        # As upstream: the instruction is located from its mnemonic on, a result at its name.
        inst = self.parse_inst_body(mnemonic, mbegin, mbegin)
        if inst.spec.extension:
            check_parsed_extension(self, inst)
        if len(names) != len(inst.results):
            inst.drop_uses()
            raise CompilationError(
                c.loc(begin, mend),
                Status.parse_error,
                f"'{mnemonic.split('.')[0]}' returns {len(inst.results)} value(s), "
                f"but {len(names)} name(s) are given",
            )
        for value, (name, loc) in zip(inst.results, names):
            value.name = "" if name.isdigit() else name
            value.loc = loc
            self.define_value(name, value)
        return inst

    def parse_inst_body(self, mnemonic: str, mbegin: int, begin: int) -> Inst:
        """The instruction after its mnemonic (with modifiers); `begin` is where its result
        names start. The legacy front end overrides this to read its own forms."""
        mods: list[str] = []
        base = mnemonic
        if "." in mnemonic:
            base, *mods = mnemonic.split(".")
        cls = INSTRUCTIONS.get(base)
        if cls is None:
            # located at the first character, as upstream's lexer stops there
            raise CompilationError(
                self.c.loc(mbegin, mbegin + 1),
                Status.parse_error,
                f"Unknown token ('{base}' is not an instruction)",
            )
        props = self.parse_modifiers(cls, mods, mbegin)
        syntax = cls.spec.syntax  # hand-written syntax: its hook
        if syntax is not None:
            return PARSE_HOOKS[syntax](self, cls, props, begin)
        return self.parse_formatted(cls, props, begin)

    def parse_modifiers(self, cls: type[Inst], mods: list[str], begin: int) -> dict[str, Any]:
        props: dict[str, Any] = {}
        i = 0
        spec_props = _MODIFIER_PROPS.get(cls)
        if spec_props is None:
            spec_props = _MODIFIER_PROPS[cls] = modifier_props(cls.spec.props)
        for mod in mods:
            while i < len(spec_props):
                prop, table = spec_props[i]
                if mod in table:
                    if prop.kind == "fence":
                        props[prop.name] = props.get(prop.name, 0) | table[mod]
                    else:
                        props[prop.name] = table[mod]
                        i += 1
                    break
                i += 1
            else:
                raise CompilationError(
                    self.c.loc(begin),
                    Status.parse_error,
                    f"unexpected modifier '.{mod}' for {cls.spec.mnemonic}",
                )
        for prop, table in spec_props:
            if prop.default is None and prop.name not in props:
                choices = ", ".join("." + k for k in table)
                raise CompilationError(
                    self.c.loc(begin),
                    Status.parse_error,
                    f"{cls.spec.mnemonic} needs one of the modifiers {choices}",
                )
        return props

    def parse_formatted(self, cls: type[Inst], props: dict[str, Any], begin: int) -> Inst:
        """Parses the operands of a regular instruction by walking its format string."""
        c = self.c
        operands: dict[str, Any] = {}
        result_type = None
        attrs = None
        end: int | None = None  # before a trailing attrs? that is absent: the location's end
        steps = cls.spec.fmt_steps
        for k, (kind, key) in enumerate(steps):
            end = None
            if kind == "$":
                operands[key] = self.parse_value()
            elif kind == "":
                c.expect(key)
            elif kind == "type":
                result_type = self.parse_type()
            elif kind == "$*":
                operands[key] = self.parse_value_list(steps[k + 1][1])
            elif kind == "#":
                props[key] = self.parse_integer()
            elif kind == "@":
                props[key] = parse_global_name(self)
            else:  # attrs? (peeking skips the blanks after the instruction)
                end = c.pos
                if c.peek("{") or c.peek("$"):
                    attrs, end = self.parse_dictionary(), None
        return cls(operands, props, result_type, c.loc(begin, end), attrs)

    # ---- hand-written instruction rules -------------------------------------------------------

    def parse_constant(self, cls: type[Inst], props: dict[str, Any], begin: int) -> Inst:
        props["value"] = self.parse_constant_value()
        self.c.expect(":")
        return cls({}, props, self.parse_type(), self.c.loc(begin))

    def parse_int_or_value(self, static: list[int], dynamic: list[Value]) -> None:
        c = self.c
        if c.peek("%"):
            static.append(DYNAMIC)
            dynamic.append(self.parse_value())
        else:
            static.append(self.parse_integer())

    def parse_subview(self, cls: type[Inst], props: dict[str, Any], begin: int) -> Inst:
        c = self.c
        operand = self.parse_value()
        offs: list[int] = []
        sizes: list[int] = []
        dyn_offs: list[Value] = []
        dyn_sizes: list[Value] = []
        c.expect("[")
        if not c.peek("]"):
            while True:
                self.parse_int_or_value(offs, dyn_offs)
                if c.accept(":"):
                    self.parse_int_or_value(sizes, dyn_sizes)
                else:
                    sizes.append(0)
                if not c.accept(","):
                    break
        c.expect("]")
        c.expect(":")
        ty = self.parse_type()
        props.update(static_offsets=tuple(offs), static_sizes=tuple(sizes))
        ops: OperandMap = {"operand": operand, "offsets": dyn_offs, "sizes": dyn_sizes}
        return cls(ops, props, ty, c.loc(begin))

    def parse_expand(self, cls: type[Inst], props: dict[str, Any], begin: int) -> Inst:
        c = self.c
        operand = self.parse_value()
        c.expect("[")
        props["expanded_mode"] = self.parse_integer()
        c.expect("->")
        static: list[int] = []
        dynamic: list[Value] = []
        while True:
            c.skip()
            if c.peek("%"):
                static.append(DYNAMIC)
                dynamic.append(self.parse_value())
            else:
                static.append(self.parse_extent())
            if not self.accept_x():
                break
        c.expect("]")
        c.expect(":")
        ty = self.parse_type()
        props["static_expand_shape"] = tuple(static)
        return cls({"operand": operand, "expand_shape": dynamic}, props, ty, c.loc(begin))

    def parse_for(self, cls: type[Inst], props: dict[str, Any], begin: int) -> Inst:
        c = self.c
        var = self.parse_new_name()
        c.expect("=")
        frm = self.parse_value()
        c.expect(",")
        to = self.parse_value()
        step = self.parse_value() if c.accept(",") else None
        iter_names: list[tuple[str, Location]] = []
        init: list[Value] = []
        types: list[Type] = []
        if c.accept("init"):
            c.expect("(")
            while True:
                iter_names.append(self.parse_new_name())
                c.expect("=")
                init.append(self.parse_value())
                if not c.accept(","):
                    break
            c.expect(")")
            c.expect("->")
            types = self.parse_type_list()
        ops: OperandMap = {"from": frm, "to": to, "step": step, "iter_init": init}
        loc = c.loc(begin)
        inst = cls(ops, props, types, loc)
        return self.parse_for_body(inst, [var] + iter_names)

    def parse_for_body(self, inst: Inst, names: list[tuple[str, Location]]) -> Inst:
        """The region of a `for` and its optional attribute dictionary."""
        self.parse_region(inst.regions[0], names)
        if self.c.accept("attributes"):
            inst.attrs = self.parse_dictionary()
            inst.check_attrs()
        return inst

    def parse_type_list(self, *, may_be_empty: bool = False) -> list[Type]:
        """A parenthesised type list; `if` may write `-> ()` for "no results" (upstream
        accepts it), while `for` lists one type per loop-carried value, so never none."""
        c = self.c
        c.expect("(")
        if may_be_empty and c.accept(")"):
            return []
        types = [self.parse_type()]
        while c.accept(","):
            types.append(self.parse_type())
        c.expect(")")
        return types

    def parse_if(self, cls: type[Inst], props: dict[str, Any], begin: int) -> Inst:
        c = self.c
        cond = self.parse_condition()
        types = self.parse_type_list(may_be_empty=True) if c.accept("->") else []
        inst = cls({"condition": cond}, props, types, c.loc(begin))
        self.parse_region(inst.regions[0])
        if c.accept("else"):
            self.parse_region(inst.regions[1])
        else:
            check_region_end(inst.regions[1])
        return inst

    def parse_condition(self) -> Value:
        """The condition of an `if` (the legacy front end also takes `true`/`false`)."""
        return self.parse_value()

    def parse_foreach(self, cls: type[Inst], props: dict[str, Any], begin: int) -> Inst:
        c = self.c
        names = self.parse_name_list()
        c.expect("=")
        c.expect("(")
        frm = self.parse_value_list(")")
        c.expect(")")
        c.expect(",")
        c.expect("(")
        to = self.parse_value_list(")")
        c.expect(")")
        if cls.spec.mnemonic == "foreach_tile":
            c.expect("as")
            names += self.parse_name_list()
            c.expect("<=")
            c.expect("(")
            tile = [self.parse_integer()]
            while c.accept(","):
                tile.append(self.parse_integer())
            c.expect(")")
            props["tile_shape"] = tuple(tile)
        inst = cls({"from": frm, "to": to}, props, None, c.loc(begin))
        if len(names) != len(inst.regions[0].params):
            inst.drop_uses()
            raise CompilationError(
                c.loc(begin),
                Status.ir_from_to_mismatch,
                "loop variables and ranges differ in number",
            )
        self.parse_region(inst.regions[0], names)
        return inst

    def parse_parallel(self, cls: type[Inst], props: dict[str, Any], begin: int) -> Inst:
        inst = cls({}, props, None, self.c.loc(begin))
        self.parse_region(inst.regions[0])
        return inst

    def parse_printf(self, cls: type[Inst], props: dict[str, Any], begin: int) -> Inst:
        return extension_syntax.parse_printf(self, cls, props, begin)

    def parse_coop_apply(self, cls: type[Inst], props: dict[str, Any], begin: int) -> Inst:
        c = self.c
        names = self.parse_name_list()
        if len(names) != 3:
            raise CompilationError(
                c.loc(begin), Status.parse_error, "expected (%row, %col, %value)"
            )
        # The grammar and example write "=", the reference's prose (and upstream's printer)
        # "in": both are accepted, "=" is printed.
        if not c.accept("in"):
            c.expect("=", "'=' or 'in'")
        a = self.parse_value()
        c.expect("->")
        ty = self.parse_type()
        inst = cls({"a": a}, props, ty, c.loc(begin))
        self.parse_region(inst.regions[0], names)
        return inst


PARSE_HOOKS: dict[Syntax, Callable[[Parser, type[Inst], dict[str, Any], int], Inst]] = {
    Syntax.constant: Parser.parse_constant,
    Syntax.subview: Parser.parse_subview,
    Syntax.expand: Parser.parse_expand,
    Syntax.for_: Parser.parse_for,
    Syntax.if_: Parser.parse_if,
    Syntax.foreach: Parser.parse_foreach,
    Syntax.parallel: Parser.parse_parallel,
    Syntax.printf: Parser.parse_printf,
    Syntax.coop_apply: Parser.parse_coop_apply,
}
"""The parse hook of each hand-written syntax (InstSpec.syntax): called with the parser, the
instruction class, its modifiers' properties and where the instruction begins."""
