"""The instruction table of ir/ops/: each row is written out in its family module (the
mnemonic a literal there), no instruction class shares the name of the family it derives
from, and the facts a row carries for the analyses name what the row has."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tinytc_py.compiled import source_path
from tinytc_py.ir.enums import ResultUniformity, Syntax
from tinytc_py.ir.inst import Inst, InstSpec
from tinytc_py.ir.ops import FAMILIES, INSTRUCTIONS, _register
from tinytc_py.ir.ops.arith import ArithBinaryInst, ConstantInst
from tinytc_py.spirv.convert import Converter
from tinytc_py.target.core_info import CoreInfo
from tinytc_py.text.parser import PARSE_HOOKS
from tinytc_py.text.printer import PRINT_HOOKS

ROW_MODULE = {spec.mnemonic: f for f in FAMILIES for _, spec, _ in f.ROWS}


@pytest.mark.parametrize("mnemonic", sorted(INSTRUCTIONS))
def test_mnemonic_is_a_literal_of_its_family_module(mnemonic):
    # the .py file, also when the module is compiled by mypyc (no source for inspect then)
    source = Path(source_path(ROW_MODULE[mnemonic].__name__))
    assert f'"{mnemonic}"' in source.read_text(encoding="utf-8")


def _class_annotations() -> dict[str, dict[str, str]]:
    """Class name -> attribute -> annotation, read from the sources of ir/ and ir/ops/ (a class
    compiled by mypyc keeps no __annotations__)."""
    found: dict[str, dict[str, str]] = {}
    for path in [*Path(source_path("tinytc_py.ir.inst")).parent.glob("**/*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                found[node.name] = {
                    item.target.id: ast.unparse(item.annotation)
                    for item in node.body
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
                }
    return found


def _annotation(cls: type, name: str, annotations: dict[str, dict[str, str]]) -> str | None:
    for c in cls.__mro__:
        found = annotations.get(c.__name__, {}).get(name)
        if found is not None:
            return found
    return None


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.__name__.rsplit(".", 1)[1])
def test_row_class_attributes_are_class_variables(family):
    """A row's class attributes (ordered, allowed, folds...) are set on the leaf class after it
    is made; mypyc reads an attribute declared without ClassVar from the instance, where the
    class's default stays (compiled, subgroup_reduce_max accepted complex operands)."""
    annotations = _class_annotations()
    for cls, spec, attrs in family.ROWS:
        for key in attrs:
            ann = _annotation(cls, key, annotations)
            assert ann is not None and ann.startswith("ClassVar["), (spec.mnemonic, key, ann)


def test_families_are_imported_in_table_order():
    names = [f.__name__.rsplit(".", 1)[1] for f in FAMILIES]
    assert names == ["blas", "arith", "memory", "control", "spmd", "coopmatrix", "extensions"]
    assert list(INSTRUCTIONS) == [spec.mnemonic for f in FAMILIES for _, spec, _ in f.ROWS]


def test_no_instruction_class_shares_its_family_name():
    for cls in INSTRUCTIONS.values():
        assert cls.__name__ not in {base.__name__ for base in cls.__mro__[1:]}, cls


def test_a_family_leaf_named_like_its_family_is_refused():
    class FancyInst(Inst):
        __slots__ = ()
        is_family = True

    with pytest.raises(TypeError, match="needs a name of its own"):
        _register(FancyInst, InstSpec("fancy", fmt=""), {})
    assert "fancy" not in INSTRUCTIONS


def test_the_family_leaf_classes_are_current():
    # ops/leaves.py is generated from the family rows (mypyc compiles its classes)
    tool = Path(__file__).resolve().parent.parent / "tools" / "gen_inst_leaves.py"
    proc = subprocess.run(
        [sys.executable, str(tool), "--check"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_family_row_without_its_leaf_class_is_refused():
    with pytest.raises(TypeError, match="NewopInst: ops/leaves.py is out of date"):
        _register(ArithBinaryInst, InstSpec("newop", fmt=""), {})
    assert "newop" not in INSTRUCTIONS


def test_a_family_row_gets_its_leaf_class_with_the_row_attributes():
    add = INSTRUCTIONS["add"]
    assert add.__name__ == "AddInst" and add.__bases__ == (ArithBinaryInst,)
    assert add.name == "add" and add.spec.mnemonic == "add" and "int" in add.allowed


def test_a_second_row_for_an_instruction_class_is_refused():
    with pytest.raises(TypeError, match="one row per instruction class"):
        _register(ConstantInst, InstSpec("constant2", syntax=Syntax.constant), {})
    assert "constant2" not in INSTRUCTIONS


def test_row_facts_name_what_the_row_has():
    for mnemonic, cls in INSTRUCTIONS.items():
        spec = cls.spec
        operands = {key for key, _ in spec.operand_slots}
        assert set(spec.uniform_operands) <= operands, mnemonic
        if spec.uniformity is not ResultUniformity.follows_operands:
            assert spec.result, mnemonic
        if spec.varying_params:
            assert spec.regions, mnemonic
        assert (spec.fmt is None) == (spec.syntax is not None), mnemonic
        # a kind for each region the row names: Inst.__init__ reads the class's kinds only
        # when the row names regions
        assert len(cls.region_kinds) == len(spec.regions), mnemonic


def test_a_row_with_both_a_format_and_a_syntax_is_refused():
    with pytest.raises(ValueError, match="either a format or a hand-written syntax"):
        InstSpec("x", fmt="$a", syntax=Syntax.constant)


def test_parser_and_printer_hook_exactly_the_syntaxes_the_rows_use():
    used = {cls.spec.syntax for cls in INSTRUCTIONS.values()} - {None}
    assert used == set(Syntax)
    assert set(PARSE_HOOKS) == used
    assert set(PRINT_HOOKS) == used


def test_converter_dispatch_follows_the_mro():
    # AtomicLoadInst derives from LoadInst and has its own handler; a family leaf (add) finds
    # its family's handler; a coopmatrix result tries the component-wise handler first
    conv = Converter(CoreInfo.generic(8192, 256, [16]))
    atomic_load = INSTRUCTIONS["atomic_load"]

    class Derived(atomic_load):  # type: ignore[misc,valid-type]
        __slots__ = ()

    def handler(cls: type, coop: bool = False) -> str:
        found = conv._find_handler(cls, coop)
        assert found is not None
        return found.__name__

    assert handler(INSTRUCTIONS["load"]) == "load"
    assert handler(atomic_load) == "atomic_load"
    assert handler(Derived) == "atomic_load"
    assert handler(INSTRUCTIONS["add"]) == "arith_binary"
    assert handler(INSTRUCTIONS["add"], coop=True) == "coop_arith_binary"
    assert handler(INSTRUCTIONS["select"], coop=True) == "select"
    assert ArithBinaryInst in INSTRUCTIONS["add"].__mro__


def test_two_handlers_for_one_class_are_refused():
    from tinytc_py.spirv.convert.base import handler_table

    assert handler_table(((ConstantInst, False, "one"),), ((ConstantInst, False, "one"),))
    with pytest.raises(TypeError, match="ConstantInst: two handlers, one and two"):
        handler_table(((ConstantInst, False, "one"),), ((ConstantInst, False, "two"),))
