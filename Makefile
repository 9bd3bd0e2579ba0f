# Two entry points, both self-contained on a fresh machine:
#   make demo   install into .venv and run the main job (pevpm demo)
#   make test   install into .venv (with test extras) and run the test suite
# and the documentation:
#   make docs   the guides and the API reference as HTML in docs/_build/html
VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python

.PHONY: demo test docs install browser clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

install: $(VENV)/.installed

demo: install
	$(VENV)/bin/pevpm demo

# The report test renders pevpm's HTML in headless Chromium; install Debian's
# chromium when we can (root with apt), otherwise that one test is skipped.
browser:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
	  && (apt-get update -qq && apt-get install -y -qq chromium) >/dev/null 2>&1; } \
	  || echo "note: chromium unavailable; the browser test of the report will be skipped"

test: install browser
	$(VENV)/bin/lint-imports
	$(PY) -m pytest -q

# Warnings are errors: a public name without a docstring or an example fails.
docs: install
	$(VENV)/bin/sphinx-build -W --keep-going -b html docs docs/_build/html

clean:
	rm -rf $(VENV) pevpm-report .pytest_cache docs/_build
