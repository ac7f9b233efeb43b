PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install test bench clean

install: $(BIN)/gatekeep

$(BIN)/gatekeep: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

test: install
	$(BIN)/pytest -q

bench: install
	$(BIN)/python tests/bench/bench_names.py
	$(BIN)/python tests/bench/bench_hook.py

clean:
	rm -rf $(VENV) build dist .pytest_cache
