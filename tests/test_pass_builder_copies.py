"""passes/pass_builder.py repeats IRBuilder.__init__, RegionScope.__init__/__enter__ and
IfScope.__enter__ so that they run compiled: the copies must set the same attributes as the
originals (an attribute added to an original and not to its copy would be missing in passes)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tinytc_py.ir.builder import IfScope, IRBuilder, RegionScope
from tinytc_py.ir.context import CompilerContext
from tinytc_py.passes import pass_builder
from tinytc_py.passes.pass_builder import PassBuilder, PassIfScope, PassRegionScope

# compiled, the copies are native classes: their attributes are slots (no vars()) and typed
pytestmark = pytest.mark.skipif(
    not pass_builder.__file__.endswith(".py"), reason="compares instance dicts: sources only"
)


def test_pass_builder_init_sets_irbuilders_attributes() -> None:
    ctx = CompilerContext()
    assert sorted(vars(PassBuilder(ctx))) == sorted(vars(IRBuilder(ctx)))


def test_pass_region_scope_sets_region_scopes_attributes() -> None:
    def scopes():
        for cls in (RegionScope, PassRegionScope):
            builder = SimpleNamespace(region="outer")
            region = SimpleNamespace(params=["p"])
            scope = cls(builder, region, "inst")
            yield scope, builder, region

    (orig, ob, oreg), (copy, cb, creg) = scopes()
    assert vars(copy).keys() == vars(orig).keys()
    assert (orig.__enter__(), copy.__enter__()) == ("p", "p")
    assert vars(copy).keys() == vars(orig).keys()
    assert (ob.region, cb.region) == (oreg, creg)


def test_pass_if_scope_sets_if_scopes_attributes() -> None:
    inst = SimpleNamespace(regions=[SimpleNamespace(params=[]), SimpleNamespace(params=[])])
    orig, copy = IfScope(None, inst), PassIfScope(None, inst)
    assert vars(copy).keys() == vars(orig).keys()
    assert isinstance(copy.then, PassRegionScope) and isinstance(copy.otherwise, PassRegionScope)
    assert tuple(copy.__enter__()) == (copy.then, copy.otherwise)
    assert tuple(orig.__enter__()) == (orig.then, orig.otherwise)
