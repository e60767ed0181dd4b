"""The language reference (docs/reference/): every instruction of the table has an entry with an
example, the generated files are current, every example and every program of the hand-written
pages compiles to SPIR-V that passes validation, and every instruction's example survives a
print / parse round trip."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tinytc_py
from tinytc_py.compiler import assemble_module, compile_to_module
from tinytc_py.ir.context import CompilerContext
from tinytc_py.ir.ops import INSTRUCTIONS
from tinytc_py.ir.types import _PROMOTABLE
from tinytc_py.text.dialect import parse
from tinytc_py.text.printer import print_prog

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "docs" / "reference"


def _generator():
    spec = importlib.util.spec_from_file_location("gen_langref", ROOT / "tools" / "gen_langref.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_langref"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


gen = _generator()
EXAMPLES = gen.examples()


def compile_and_validate(text: str):
    """Parses, compiles for the default target and validates (assemble_module runs the
    validator and raises on an invalid module); returns the parsed program."""
    prog = parse(text, CompilerContext())
    mnemonics = {inst.name for f in prog.funcs for inst in f.body.walk()}
    assemble_module(compile_to_module(prog))
    return mnemonics


def test_generated_files_are_current():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_langref.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_check_fails_on_a_stale_file(tmp_path, monkeypatch, capsys):
    stale = tmp_path / "instructions.rst"
    stale.write_text(gen.REFERENCE.read_text() + "edited\n")
    monkeypatch.setattr(gen, "REFERENCE", stale)
    assert gen.main(["--check"]) == 1
    assert "stale generated files" in capsys.readouterr().err
    assert stale.read_text().endswith("edited\n")  # --check writes nothing


def test_every_instruction_has_an_entry_with_an_example():
    assert set(EXAMPLES) == set(INSTRUCTIONS)
    page = (REFERENCE / "instructions.rst").read_text()
    entries = re.split(r"^\.\. _inst-", page, flags=re.MULTILINE)[1:]
    by_name = {e.split(":", 1)[0]: e for e in entries}
    assert set(by_name) == set(INSTRUCTIONS)
    for mnemonic, entry in by_name.items():
        assert re.search(r"\nExample:\n\n\.\. code-block:: text\n\n   (func|global) @", entry)
        assert f"tinytc_{mnemonic}_inst_create" in entry


def test_prose_that_does_not_match_the_table_is_rejected(tmp_path):
    prose = gen.PROSE.read_text()
    bad = tmp_path / "instructions.toml"
    bad.write_text(
        prose.replace("[part.group.inst.ger]", "[part.group.inst.gerx]").replace(
            'operands = { B = "memref, the output" }\n', 'operands = { B = "memref", X = "?" }\n', 1
        )
    )
    with pytest.raises(ValueError) as info:
        gen.load_prose(bad)
    message = str(info.value)
    assert "gerx: not an instruction of the table" in message
    assert "ger: no reference entry" in message
    # an operand that the table's row does not have
    bad.write_text(prose.replace('idx = "``i32``, the lane to read"', 'lane_id = "i32"'))
    with pytest.raises(ValueError, match=r"subgroup_broadcast: operands \['idx'\]"):
        gen.load_prose(bad)


@pytest.mark.parametrize("mnemonic", sorted(EXAMPLES))
def test_example_compiles_and_validates(mnemonic):
    assert mnemonic in compile_and_validate(EXAMPLES[mnemonic])


@pytest.mark.parametrize("mnemonic", sorted(INSTRUCTIONS))
def test_every_instruction_round_trips_through_printer_and_parser(mnemonic):
    """Each row of the table, in its reference example: the printed program contains the
    instruction, and parsing the print gives a program that prints the same text (a row's
    format or hand-written syntax reads what it writes)."""
    text = print_prog(parse(EXAMPLES[mnemonic], CompilerContext()))
    assert re.search(rf"(= |^ *){mnemonic}[ .\n]", text, re.MULTILINE), text
    assert print_prog(parse(text, CompilerContext())) == text


TEXT_BLOCK = re.compile(r"^\.\. code-block:: text\n\n((?:(?:   .*)?\n)+)", re.MULTILINE)
PAGES = ["index.rst", "types.rst", "preprocessor.rst"]


@pytest.mark.parametrize("page", PAGES)
def test_programs_of_the_hand_written_pages_compile(page):
    programs = [b for b in TEXT_BLOCK.findall((REFERENCE / page).read_text()) if "func @" in b]
    assert programs
    for program in programs:
        compile_and_validate(program)


def test_types_page_lists_the_promotions_of_the_compiler():
    text = (REFERENCE / "types.rst").read_text()
    rows = re.findall(r"^``(\w+)``( +``[\w ]+``)?$", text, re.MULTILINE)
    table = {kind: set(to.strip(" `").split()) | {kind} for kind, to in rows if kind in _PROMOTABLE}
    assert table == {k: set(v) for k, v in _PROMOTABLE.items()}


def _run(mnemonic: str, *args) -> None:
    pytest.importorskip("pyopencl")
    from tinytc_py.runtime import device

    try:
        device.default_device()
    except RuntimeError:
        pytest.skip("no SPIR-V capable OpenCL device")
    tinytc_py.compile(EXAMPLES[mnemonic]).kernel("example")(*args)


def test_examples_do_what_their_prose_says():
    """A few examples run on the device and are compared with NumPy."""
    rng = np.random.default_rng(7)
    A = np.asfortranarray(rng.random((32, 8), dtype=np.float32))
    B = np.asfortranarray(rng.random((16, 8), dtype=np.float32))
    C = np.zeros((32, 16), dtype=np.float32, order="F")
    _run("gemm", A, B, C)  # C = A * transpose(B)
    np.testing.assert_allclose(C, A @ B.T, rtol=1e-5)

    A = np.asfortranarray(rng.random((10, 4)))
    B = np.zeros((10, 4), order="F")
    _run("cumsum", A, B)  # running sums down each column
    np.testing.assert_allclose(B, np.cumsum(A, axis=0))

    x = rng.random(16, dtype=np.float32)
    y = np.zeros(16, dtype=np.float32)
    _run("subgroup_inclusive_scan_add", x, y)
    np.testing.assert_allclose(y, np.cumsum(x), rtol=1e-5)

    A = np.asfortranarray(rng.random((5, 3), dtype=np.float32))
    B = np.zeros((5, 3), dtype=np.float32, order="F")
    _run("foreach", A, B)
    np.testing.assert_array_equal(B, 2 * A)
