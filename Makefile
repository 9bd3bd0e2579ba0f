# Two entry points, both self-contained on a fresh machine:
#   make demo   install into .venv and run the main job (pevpm demo)
#   make test   install into .venv (with test extras) and run the test suite
#   make check  the fast subset while you work: import layers, model, stats,
#               machines, profiles, the engine's semantics, predict (< 60 s)
# and the documentation:
#   make docs   the guides and the API reference as HTML in docs/_build/html
VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python

.PHONY: demo test check docs install browser lammps clean

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

# tests/trace/test_lammps.py runs Debian's lammps (built with Open MPI): installed
# when we can (root with apt), otherwise that test is skipped.
lammps:
	@command -v lmp >/dev/null 2>&1 && command -v mpirun.openmpi >/dev/null 2>&1 || { \
	  [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && (apt-get update -qq && \
	  apt-get install -y -qq lammps openmpi-bin libopenmpi-dev) >/dev/null 2>&1; } \
	  || echo "note: lammps unavailable; the LAMMPS test of pevpm trace will be skipped"

test: install browser lammps
	$(VENV)/bin/lint-imports
	$(PY) -m pytest -q

# The fast subset: no real MPI runs, nothing marked slow.
CHECK_TESTS := tests/model tests/stats tests/analytic tests/machine tests/profile \
	tests/calibrate tests/test_layers.py tests/test_progress.py tests/test_public_api.py \
	tests/vm/test_engine_semantics.py tests/vm/test_bounds.py tests/vm/test_prediction.py \
	tests/cli/test_predict_command.py tests/cli/test_predict_user_words.py \
	tests/cli/test_predict_scaling.py tests/cli/test_cli_commands.py tests/cli/test_help_is_light.py

check: install
	$(VENV)/bin/lint-imports
	$(PY) -m pytest -q -m "not slow and not mpi" $(CHECK_TESTS)

# Warnings are errors: a public name without a docstring or an example fails.
docs: install
	$(VENV)/bin/sphinx-build -W --keep-going -b html docs docs/_build/html

clean:
	rm -rf $(VENV) pevpm-report .pytest_cache docs/_build
