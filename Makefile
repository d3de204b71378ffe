# Two commands do everything on a fresh machine with Python 3.11 and make:
#   make demo   - create .venv, install dynid, run the main workflow on a builtin robot
#   make test   - create .venv, install dynid with test tools, run the whole suite
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test bench install clean

$(BIN)/python:
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "error: $(PYTHON) not found (set PYTHON=/path/to/python3.11)"; exit 2; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[test]"
	@touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/dynid demo

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadfile tests

bench: $(STAMP)
	$(BIN)/python bench/dynamics.py

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
