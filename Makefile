# esatui: `make run` to monitor this machine, `make test` for everything CI checks.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
LOCK   := requirements-test.lock

.PHONY: run demo test check lint typecheck contracts unit wheel-check bench import-graph clean system-deps

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml $(LOCK) | $(BIN)/python
	$(BIN)/pip install -q -c $(LOCK) -e '.[test]'
	touch $@ $(VENV)/.installed

run: $(VENV)/.installed
	$(BIN)/esatui live $(ARGS)

demo: $(VENV)/.installed
	$(BIN)/esatui demo $(ARGS)

test: lint unit wheel-check

lint: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

unit: $(VENV)/.installed-test system-deps
	$(BIN)/pytest $(PYTEST_ARGS)

# The distribution's packages the tests run for real (Prometheus): installed when missing.
system-deps:
	bash .ci/system-deps

# A wheel built from this tree, installed in a fresh venv, must give a working esatui.
wheel-check: $(VENV)/.installed-test
	rm -rf build/wheel-check && mkdir -p build/wheel-check
	$(BIN)/pip wheel -q --no-deps -w build/wheel-check .
	$(PYTHON) -m venv build/wheel-check/venv
	build/wheel-check/venv/bin/pip install -q -c $(LOCK) build/wheel-check/esatui-*.whl
	cd build/wheel-check && ./venv/bin/python $(CURDIR)/tests/wheel_smoke.py

bench: $(VENV)/.installed-test
	$(BIN)/python -m bench $(ARGS)

# The real import graph (through the symlinked core folders), in DOT: | dot -Tsvg > graph.svg
import-graph: $(VENV)/.installed-test
	@$(BIN)/import-linter drawgraph esatui

clean:
	rm -rf $(VENV) build dist .mypy_cache .ruff_cache .pytest_cache .hypothesis
