# Two entry points, both self-contained on a fresh machine:
#   make demo   install into .venv and run the main job (pevpm demo)
#   make test   install into .venv (with test extras) and run the test suite
VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python

.PHONY: demo test install clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

install: $(VENV)/.installed

demo: install
	$(VENV)/bin/pevpm demo

test: install
	$(PY) -m pytest -q

clean:
	rm -rf $(VENV) pevpm-report .pytest_cache
