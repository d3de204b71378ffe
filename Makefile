# Two commands do everything on a fresh machine with Python 3.11 and make:
#   make demo   - create .venv, install dynid, run the main workflow on a builtin robot
#   make test   - create .venv, install dynid with test tools, run the whole suite
#   make check  - the fast tier of the suite (tests not marked slow: tests/tiers.py), under a minute
#   make bench  - speed figures against Pinocchio's C++ loop (installs the Eigen headers it builds with)
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.bench-installed

.PHONY: demo test check bench install clean

$(BIN)/python:
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "error: $(PYTHON) not found (set PYTHON=/path/to/python3.11)"; exit 2; }
	$(PYTHON) -m venv $(VENV)

# the pip that comes with Python 3.11 (22.3 or later) installs everything here: no upgrade from the
# index; --no-compile: Python compiles the modules the tests import, not all of SciPy, Dask, ...
$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-compile -e ".[test]"
	@touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/dynid demo

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadfile tests

check: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadfile -m "not slow" tests

$(BENCH_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[test,bench]"
	@touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BIN)/python bench/dynamics.py

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
