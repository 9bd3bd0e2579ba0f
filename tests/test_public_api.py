"""The public API at the top of the package, loaded lazily (issue 29)."""

import subprocess
import sys
from pathlib import Path

import pytest

import pevpm

ROOT = Path(__file__).resolve().parents[1]


def test_the_names_a_program_needs_come_from_pevpm():
    from pevpm import ModelBuilder, Prediction, Profile, load_model, parse_machine, predict

    b = ModelBuilder()
    b.serial("0.5 / numprocs")
    p = predict(b.build(), 2, parse_machine("constant:latency=0"), runs=2, workers=1)
    assert isinstance(p, Prediction) and p.mean == 0.25
    assert load_model(ROOT / "examples/jacobi/model.py").parameters["iterations"] > 0
    assert Profile.__module__ == "pevpm.profile.store"
    assert set(pevpm.__all__) == {*pevpm.PUBLIC, "__version__"}


def test_importing_pevpm_loads_nothing_heavy():
    code = ("import sys, pevpm; heavy = [m for m in ('numpy', 'scipy', 'pevpm.vm.strategies.montecarlo') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'predicts'"):
        pevpm.predicts  # noqa: B018


def test_the_moved_module_shims_are_retired():
    with pytest.raises(ModuleNotFoundError):
        import pevpm.machine.distributions  # noqa: F401


def test_make_check_is_a_target_beside_make_test():
    dry = subprocess.run(["make", "-n", "check"], cwd=ROOT, capture_output=True, text=True,
                         check=False)
    assert dry.returncode == 0, dry.stderr
    assert "lint-imports" in dry.stdout and "not slow and not mpi" in dry.stdout
