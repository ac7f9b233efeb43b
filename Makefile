PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install test bench tables clean

install: $(BIN)/gatekeep

$(BIN)/gatekeep: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

test: install
	$(BIN)/pytest -q

# as users run gatekeep: a temporary HOME, no GATEKEEP_HOME (tests/bench/userenv.py)
bench: install
	$(BIN)/python tests/bench/bench_hook.py
	$(BIN)/python tests/bench/bench_user.py
	$(BIN)/python tests/bench/bench_check.py
	$(BIN)/python tests/bench/bench_names.py
	$(BIN)/python tests/bench/bench_look_only.py

# bashlex's parser tables, shipped so that importing bashlex does not rebuild them
tables: install
	$(BIN)/python -m gatekeep.read.bashlex_loader

clean:
	rm -rf $(VENV) build dist .pytest_cache
