PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install user-install user-uninstall test bench tables clean

install: $(BIN)/gatekeep

$(BIN)/gatekeep: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

# `gatekeep` on PATH for you alone: a link to the virtualenv's command in BINDIR, and bash
# completion where bash-completion looks for it. Nothing outside your home; `user-uninstall` undoes it.
BINDIR ?= $(HOME)/.local/bin
COMPLETIONS ?= $(or $(XDG_DATA_HOME),$(HOME)/.local/share)/bash-completion/completions
# where the bash-completion package's loader is, on Debian, Fedora and Homebrew: without it nothing
# loads the completion file (user-install says so)
BASH_COMPLETION ?= /usr/share/bash-completion/bash_completion /etc/bash_completion \
	/opt/homebrew/etc/profile.d/bash_completion.sh /usr/local/etc/profile.d/bash_completion.sh

user-install: install
	mkdir -p '$(BINDIR)' '$(COMPLETIONS)'
	ln -sfn '$(abspath $(BIN))/gatekeep' '$(BINDIR)/gatekeep'
	_GATEKEEP_COMPLETE=bash_source '$(BIN)/gatekeep' > '$(COMPLETIONS)/gatekeep'
	@echo "linked $(BINDIR)/gatekeep; bash completion in $(COMPLETIONS)/gatekeep"
	@case ":$$PATH:" in *":$(BINDIR):"*) ;; *) case "$${SHELL##*/}" in zsh) sh=zsh;; *) sh=bash;; esac; \
	 echo "$(BINDIR) is not on your PATH: '$(BINDIR)/gatekeep' install --shell $$sh --path '$(BINDIR)' puts it there (with the hook; a gated shell denies other writes to start-up files)";; esac
	@for f in $(BASH_COMPLETION); do [ -r "$$f" ] && exit 0; done; \
	 echo "bash completion needs the bash-completion package, not found here: without it, Tab completes no gatekeep command"

user-uninstall:
	rm -f '$(BINDIR)/gatekeep' '$(COMPLETIONS)/gatekeep'

# on every core there is (one worker on one core); each worker's tests have their own GATEKEEP_HOME
test: install
	$(BIN)/pytest -n auto

# as users run gatekeep: a temporary HOME, no GATEKEEP_HOME (tests/bench/userenv.py)
bench: install
	$(BIN)/python tests/bench/bench_hook.py
	$(BIN)/python tests/bench/bench_user.py
	$(BIN)/python tests/bench/bench_check.py
	$(BIN)/python tests/bench/bench_names.py
	$(BIN)/python tests/bench/bench_look_only.py
	$(BIN)/python tests/bench/bench_reliability.py
	$(BIN)/python tests/bench/bench_sandbox.py

# bashlex's parser tables, shipped so that importing bashlex does not rebuild them
tables: install
	$(BIN)/python -m gatekeep.read.bashlex_loader

clean:
	rm -rf $(VENV) build dist .pytest_cache
