"""tools/gen_inst_leaves.py on a scratch copy of the sources: it must still read the instruction
families when the committed ops/leaves.py no longer imports (a family class was renamed)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_leaf_tool_regenerates_after_a_family_class_is_renamed(tmp_path):
    """A renamed family class makes the committed leaves.py import a name that is gone, so the
    package's import fails; the tool still finds the families and writes the file anew."""
    shutil.copytree(ROOT / "src" / "tinytc_py", tmp_path / "src" / "tinytc_py")
    (tmp_path / "tools").mkdir()
    tool = shutil.copy(ROOT / "tools" / "gen_inst_leaves.py", tmp_path / "tools")
    family = tmp_path / "src" / "tinytc_py" / "ir" / "ops" / "extensions.py"
    family.write_text(re.sub(r"\bMathNaryInst\b", "NaryMathInst", family.read_text()))
    env = {**os.environ, "TINYTC_PURE_PYTHON": "1"}

    def run(*args: str) -> subprocess.CompletedProcess:
        cmd = [sys.executable, str(tool), *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)

    stale = run("--check")
    assert stale.returncode == 1 and "out of date" in stale.stdout, stale.stdout + stale.stderr
    regen = run()
    assert regen.returncode == 0, regen.stdout + regen.stderr
    leaves = (family.parent / "leaves.py").read_text()
    assert "(NaryMathInst):" in leaves and "MathNaryInst" not in leaves
    assert run("--check").returncode == 0
