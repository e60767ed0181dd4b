# Entry points for developers and CI: `make setup`, `make test`, `make run`.
# Every target works on a fresh clone: `setup` installs what the project needs (idempotently).

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := test

PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.tinytc-installed
APT_PACKAGES := spirv-headers ocl-icd-opencl-dev opencl-headers libze-dev gcc g++ gfortran valgrind doctest-dev pkg-config cmake binutils
SPIRV_GRAMMAR := /usr/include/spirv/unified1/spirv.core.grammar.json
CL_HEADER := /usr/include/CL/cl.h
ZE_HEADER := /usr/include/level_zero/ze_api.h
DOCTEST_HEADER := /usr/include/doctest/doctest.h
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

export PIP_DISABLE_PIP_VERSION_CHECK := 1
export PIP_NO_INPUT := 1

.PHONY: setup apt test run docs fuzz bench-gemm compiled

setup: apt $(STAMP) capi compiled
	@test -f $(SPIRV_GRAMMAR) || { echo "error: $(SPIRV_GRAMMAR) missing after setup" >&2; exit 1; }

# System packages: skipped when the tools and headers are already there.
apt:
	@if command -v g++ >/dev/null \
	    && command -v gfortran >/dev/null && command -v valgrind >/dev/null \
	    && command -v pkg-config >/dev/null && command -v cmake >/dev/null && command -v nm >/dev/null \
	    && test -f $(SPIRV_GRAMMAR) && test -f $(CL_HEADER) && test -f $(ZE_HEADER) \
	    && test -f $(DOCTEST_HEADER); then \
	  echo "apt: spirv-headers, OpenCL and Level Zero headers, doctest, gfortran, valgrind, pkg-config, cmake already present"; \
	else \
	  echo "apt: installing $(APT_PACKAGES)"; \
	  $(SUDO) apt-get update; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y --no-install-recommends $(APT_PACKAGES); \
	fi

$(VPY):
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
	  || { echo "error: $(PYTHON) is older than Python 3.11" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)

# Reinstalls only when pyproject.toml changes (or the venv is new). The sycl extra (the SYCL
# runtime: 206 MB download, 723 MB installed) is what libtinytc_sycl is built against
# (docs/sycl.rst).
$(STAMP): pyproject.toml | $(VPY)
	$(VPY) -m pip install -e '.[test,opencl,sycl,dpnp]'
	touch $@

# The C API libraries (libtinytc, libtinytc_cl, libtinytc_ze; libtinytc_sycl) in build/lib, built
# with cffi's embedding mode from the committed headers (capi/build.py; tools/gen_capi.py
# regenerates those). Rebuilt only when one of their inputs (or the environment they embed)
# changed.
CAPI_INPUTS := $(wildcard capi/*.py capi/*.c capi/*.h capi/api/*.toml capi/spirv_val/*.c \
  capi/ze_cpu/*.py capi/ze_cpu/*.c capi/ze_cpu/*.h capi/sycl/*.cpp capi/sycl/*.h capi/cxx/*.in \
  include/*.h include/tinytc/*.h include/tinytc/*.hpp tools/gen_capi.py tools/gen_cxx.py)
CAPI_STAMP := build/lib/.tinytc-capi-built
.PHONY: capi
capi: $(CAPI_STAMP)
$(CAPI_STAMP): $(STAMP) $(CAPI_INPUTS)
	$(VPY) capi/build.py --out build/lib
	touch $@

# The compiler's hot modules compiled with mypyc into build/mypyc (the list and the import rules:
# src/tinytc_py/compiled.py). The script rebuilds only when their sources changed, and skips
# (pure Python) without mypyc or a C compiler; TINYTC_PURE_PYTHON=1 runs the sources anyway.
compiled: $(STAMP) | apt
	$(VPY) tools/build_compiled.py

test: setup
	$(VPY) -m pytest -q

# The long mode of the front-end fuzzer: 10^6 mutated programs on all cores (minutes); prints
# the counts and fails on a crash or a hang. FUZZ_N=... for another count.
FUZZ_N ?= 1000000
fuzz: setup
	$(VPY) tests/fuzz/long_run.py -n $(FUZZ_N)

# Compiles examples/ir/matvec_batched.ir, runs it on the default OpenCL device, checks it with NumPy.
run: setup
	$(VPY) examples/python/run_kernel.py

# The documentation (Sphinx; warnings are errors) into docs/_build/html.
docs: setup
	$(VPY) -m sphinx -W --keep-going -b html docs docs/_build/html

# Batched GEMM benchmark, native ISA and AVX2-class code (a few minutes; on a shared machine run
# it alone). torch (CPU build, torch.bmm column) comes with the test extra; the other anchors are
# installed if missing: MKL (cblas_?gemm_batch_strided) into the venv, Debian's header-only
# libxsmm-dev.
bench-gemm: setup
	@test -f $(VENV)/lib/libmkl_rt.so.3 || $(VPY) -m pip install mkl
	@test -f /usr/include/libxsmm_source.h || $(SUDO) env DEBIAN_FRONTEND=noninteractive \
	  apt-get install -y --no-install-recommends libxsmm-dev
	$(VPY) benchmarks/gemm_batched.py
