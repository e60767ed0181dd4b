"""pytest configuration of the kernel execution tests (helpers live in support.py)."""

import importlib.util


def pytest_configure(config):
    if importlib.util.find_spec("pyopencl") is not None:
        config.addinivalue_line("filterwarnings", "ignore::pyopencl.CompilerWarning")
