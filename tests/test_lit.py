"""Runs the lit + FileCheck suite in tests/lit once per session; one pytest test per .ir file.

lit runs all files in one process (in parallel, with one shared configuration), which is much
faster than one lit call per file; each pytest test then only looks up its file's result in
lit's JSON report and shows lit's output for that file when it did not pass.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

LIT_DIR = Path(__file__).resolve().parent / "lit"
SKIPPED_DIRS = {"Inputs", "Output"}
LIT_TIMEOUT = 1500  # seconds for the whole lit run (it runs inside the first test's setup)
PASSING = {"PASS", "XFAIL"}


def _lit_files() -> list[str]:
    """The .ir test files lit will discover, as paths relative to tests/lit."""
    files = []
    for path in sorted(LIT_DIR.rglob("*.ir")):
        rel = path.relative_to(LIT_DIR)
        if SKIPPED_DIRS.isdisjoint(rel.parts[:-1]):
            files.append(rel.as_posix())
    return files


class LitRun:
    """The results of one lit run: per-file result records plus lit's own output."""

    def __init__(self, proc: subprocess.CompletedProcess, results: dict[str, dict]):
        self.proc = proc
        self.results = results

    def log(self) -> str:
        return f"lit exit code {self.proc.returncode}\n{self.proc.stdout}\n{self.proc.stderr}"


@pytest.fixture(scope="session")
def lit_run(tmp_path_factory: pytest.TempPathFactory) -> LitRun:
    report = tmp_path_factory.mktemp("lit") / "results.json"
    # PyPI's lit has no __main__ module, so `python -m lit` does not work.
    lit_main = "import sys, lit.main; sys.exit(lit.main.main())"
    cmd = [sys.executable, "-c", lit_main, "-q", f"--output={report}", str(LIT_DIR)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=LIT_TIMEOUT)
    if not report.exists():
        pytest.fail(f"lit wrote no report: {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")
    data = json.loads(report.read_text(encoding="utf-8"))
    # Test names look like "tinytc :: parse/gemm.ir".
    results = {t["name"].split(" :: ", 1)[-1]: t for t in data["tests"]}
    return LitRun(proc, results)


@pytest.mark.timeout(LIT_TIMEOUT + 120)
@pytest.mark.parametrize("path", _lit_files())
def test_lit(path: str, lit_run: LitRun) -> None:
    result = lit_run.results.get(path)
    if result is None:
        pytest.fail(f"lit reported no result for {path}\n{lit_run.log()}", pytrace=False)
    code = result["code"]
    if code == "UNSUPPORTED":
        pytest.skip(f"lit: UNSUPPORTED {path}")
    if code not in PASSING:
        pytest.fail(f"lit: {code} {path}\n{result['output']}", pytrace=False)
