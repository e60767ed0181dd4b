"""Runs upstream tinytc's lit suite (test/lit of intel/tiny-tensor-compiler v0.4.0) against our
`tinytc` and `tinytc-opt`, and prints each test's result and the pass/fail counts.

    TINYTC_UPSTREAM_SRC=/path/to/tiny-tensor-compiler python tools/upstream_lit.py [-v]

Upstream's RUN lines call `%tinytc-oc` (its compiler driver, our `tinytc`), `%tinytc-opt` and
`filecheck`. Nothing of upstream's is copied: the lit configuration is written to a temporary
folder whose test source root is upstream's test/lit, and the tools are those next to the Python
that runs this script (the venv's bin folder). `--json FILE` writes {test: {"code", "output"}}
for programs (tests/test_upstream_lit.py); the exit status is 0 when lit ran, whatever the counts.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

PASSING = ("PASS", "XFAIL")

# The configuration lit loads: upstream's tests in place, our tools for its substitutions.
LIT_CONFIG = """\
import lit.formats
config.name = "upstream"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".ir"]
config.test_source_root = {source!r}
config.test_exec_root = {exec_root!r}
config.substitutions.append(("%tinytc-oc", {tinytc!r}))
config.substitutions.append(("%tinytc-opt", {tinytc_opt!r}))
config.environment["PATH"] = {path!r}
"""


def run_lit(upstream: Path, bindir: Path) -> dict[str, dict[str, str]]:
    """Runs lit over upstream/test/lit; returns {relative test path: {"code", "output"}}."""
    source = upstream / "test" / "lit"
    if not source.is_dir():
        raise SystemExit(
            f"error: {source} is not a folder (TINYTC_UPSTREAM_SRC must name a "
            "checkout of intel/tiny-tensor-compiler v0.4.0)"
        )
    with tempfile.TemporaryDirectory(prefix="tinytc-upstream-lit-") as tmp:
        suite = Path(tmp) / "suite"
        suite.mkdir()
        path = os.pathsep.join([str(bindir), os.environ.get("PATH", "")])
        (suite / "lit.cfg.py").write_text(
            LIT_CONFIG.format(
                source=str(source),
                exec_root=str(Path(tmp) / "out"),
                tinytc=str(bindir / "tinytc"),
                tinytc_opt=str(bindir / "tinytc-opt"),
                path=path,
            )
        )
        report = Path(tmp) / "results.json"
        # PyPI's lit has no __main__ module, so `python -m lit` does not work.
        lit_main = "import sys, lit.main; sys.exit(lit.main.main())"
        cmd = [sys.executable, "-c", lit_main, "-q", f"--output={report}", str(suite)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if not report.exists():
            raise SystemExit(f"error: lit wrote no report\n{proc.stdout}\n{proc.stderr}")
        data = json.loads(report.read_text(encoding="utf-8"))
    # lit names a test "upstream :: opt/check-ir/axpby0.ir".
    return {
        t["name"].split(" :: ", 1)[-1]: {"code": t["code"], "output": t["output"]}
        for t in data["tests"]
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--upstream",
        default=os.environ.get("TINYTC_UPSTREAM_SRC"),
        help="upstream checkout (default: $TINYTC_UPSTREAM_SRC)",
    )
    ap.add_argument("--json", type=Path, help="write the per-test results to this file")
    ap.add_argument("-v", "--verbose", action="store_true", help="show lit's output of failures")
    args = ap.parse_args(argv)
    if not args.upstream:
        ap.error("set TINYTC_UPSTREAM_SRC or pass --upstream")
    results = run_lit(Path(args.upstream), Path(sys.executable).absolute().parent)
    for name, res in sorted(results.items()):
        print(f"{res['code']:<12} {name}")
        if args.verbose and res["code"] not in PASSING:
            print(res["output"])
    passed = sum(res["code"] in PASSING for res in results.values())
    print(f"upstream lit: {passed} of {len(results)} passed, {len(results) - passed} failed")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
