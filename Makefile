# The two commands a fresh clone needs: `make demo` and `make test`.
SHELL := /bin/bash
# the interpreter `.venv` is made from: the distribution's /usr/bin/python3 when it is 3.10 or
# newer and can make a venv (Debian, Ubuntu and Fedora build CPython with PGO and LTO; pyenv
# and asdf builds skip both by default: the suite took 10% more CPU on one), else python3;
# `PYTHON=... make install` chooses
SYSTEM_PYTHON := $(shell /usr/bin/python3 -c 'import sys, ensurepip, venv; sys.exit(sys.version_info < (3, 10))' >/dev/null 2>&1 && echo /usr/bin/python3)
PYTHON ?= $(or $(SYSTEM_PYTHON),python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

export RUNTIME__DLTHUB_TELEMETRY := false
# bytecode caches on, whatever the shell says: with PYTHONDONTWRITEBYTECODE set (some images
# set it), each pytest worker rewrites every test module's asserts again (3 CPU-s a worker)
# and every interpreter a test or the bench starts compiles the package again
unexport PYTHONDONTWRITEBYTECODE

.PHONY: demo test test-compat lint bench golden install clean

install: $(STAMP)

# an existing venv is kept (whatever made it): only its packages are brought up to date
$(STAMP): pyproject.toml
	@test -x $(PY) || { echo "making $(VENV) from $$(command -v $(PYTHON)) ($$($(PYTHON) -V))" \
		&& $(PYTHON) -m venv $(VENV); }
	$(PY) -m pip install -q -U pip
	$(PY) -m pip install -q -e '.[dev]'
	$(PY) -m compileall -q dlt_contract_ops bench
	touch $(STAMP)

demo: $(STAMP)
	bash scripts/demo.sh

# The gate uses dlt's private API (dlt_contract_ops/dlt_private.py), so pyproject.toml declares
# the dlt range it is tested on: `make test` runs the suite on the newest dlt the range allows
# and then the tests of what uses that API on the oldest, in a venv of their own
# (.venv-compat; 44 CPU-s on a fresh clone, about 15 of them pip's install). Raise the range's
# bounds in pyproject.toml and `SUPPORTED_DLT` in dlt_private.py (a test keeps them equal) when a
# dlt release is tested; the oldest is read from pyproject.toml.
COMPAT_VENV := .venv-compat
COMPAT_STAMP := $(COMPAT_VENV)/.installed
DLT_OLDEST := $(shell sed -nE 's/^ *"dlt>=([0-9.]+),.*/\1/p' pyproject.toml)
# the dev extra's test runner, without the dev extra's other destinations and tools
COMPAT_TOOLS := "pytest>=8" "pytest-timeout>=2.3" "pytest-xdist>=3.5" "hypothesis>=6.100"
# the gated runs (staging, hand-over, observer, resources: every private member is used there),
# the observer's cases, the crash tests (the hand-over's journal) and the member check
COMPAT_TESTS := tests/gate/test_gated_run.py tests/gate/test_observe.py tests/gate/test_crash.py \
	tests/unit/test_dlt_private.py

# one worker per core and one more: much of a test's time is spent waiting on a server, a
# subprocess or a timeout (on 2 idle cores: 497 s with 2 workers, 371 s with 3, 409 s with 4);
# a test module stays on one worker so its module-scoped warehouse is built once; the 25
# slowest tests are listed at the end (where the suite's time goes)
TEST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 2) + 1 )))
test: $(STAMP) $(COMPAT_STAMP)
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --durations=25
	$(MAKE) --no-print-directory test-compat

$(COMPAT_STAMP): pyproject.toml
	@test -x $(COMPAT_VENV)/bin/python || $(PYTHON) -m venv $(COMPAT_VENV)
	$(COMPAT_VENV)/bin/python -m pip install -q -U pip
	$(COMPAT_VENV)/bin/python -m pip install -q -e '.[postgres]' "dlt==$(DLT_OLDEST)" $(COMPAT_TOOLS)
	touch $(COMPAT_STAMP)

test-compat: $(COMPAT_STAMP)
	$(COMPAT_VENV)/bin/python -m pytest -n $(TEST_WORKERS) --dist loadfile $(COMPAT_TESTS)

# rewrite the golden files (SQL per dialect, contract reports) from the code; review the diff
golden: $(STAMP)
	$(PY) -m tests.regen_golden

lint: $(STAMP)
	$(VENV)/bin/ruff check dlt_contract_ops tests examples bench
	$(VENV)/bin/mypy

bench: $(STAMP)
	$(PY) -m bench
	$(PY) -m bench --preset store --repeats 3 --no-cold
	$(PY) -m bench.gate
	$(PY) -m bench.lake --tables 5 --columns 12 --rows 200000 --loads 5 --repeats 1
	$(PY) -m bench.html_report

clean:
	rm -rf $(VENV) $(COMPAT_VENV) .demo .pytest_cache .mypy_cache .ruff_cache
