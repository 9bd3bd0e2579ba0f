"""The binding as a separate cost: profiles measured with the C core, predictions of
Python programs with the stored mpi4py cost added, of compiled programs without it."""

import numpy as np
import pytest
from bench_helpers import COST, write_pt2pt_profile

from pevpm.cli.predict import _with_binding
from pevpm.machine.profile_comm import ProfileCommModel
from pevpm.profile.store import Profile


def _means(model: ProfileCommModel) -> list[float]:
    return [mean for index in (model.transfer, model.local) for series in index.series
            for mean in series.means]


def test_python_programs_pay_the_stored_binding_cost(tmp_path):
    path = tmp_path / "c.db"
    write_pt2pt_profile(path, "c", costs=True)
    compiled = ProfileCommModel.from_profile(path)
    python = ProfileCommModel.from_profile(path, binding="python")
    assert np.allclose(np.subtract(_means(python), _means(compiled)), COST, rtol=1e-9)
    assert not python.profile_notes and not compiled.profile_notes
    with Profile.open(path) as prof:
        assert prof.runs()[0].binding == "c"
        assert len(prof.binding_costs()) == 4


def test_a_profile_measured_in_python_needs_no_cost(tmp_path):
    path = tmp_path / "py.db"
    write_pt2pt_profile(path, "python", costs=False)
    python = ProfileCommModel.from_profile(path, binding="python")
    assert _means(python) == _means(ProfileCommModel.from_profile(path))
    assert not python.profile_notes


def test_missing_costs_are_named_in_a_note(tmp_path):
    path = tmp_path / "some.db"
    write_pt2pt_profile(path, "c", costs="some")
    model = ProfileCommModel.from_profile(path, binding="python")
    notes = [note for note in model.notes if note.startswith("binding:")]
    assert notes == list(model.profile_notes)
    assert len(notes) == 1 and "1 block(s)" in notes[0] and "isendlocal 1024 B 1x2" in notes[0]


@pytest.mark.parametrize("spec, model, choice, expected", [
    ("default", "examples/jacobi/jacobi.py", "auto", "default:binding=python"),
    ("default:model=mean2x1", "examples/jacobi/jacobi.py", "auto",
     "default:model=mean2x1,binding=python"),
    ("default", "examples/jacobi/jacobi.c", "auto", "default"),
    ("default", "examples/jacobi/model.py", "auto", "default"),
    ("default", "examples/jacobi/model.py", "python", "default:binding=python"),
    ("default:binding=c", "examples/jacobi/jacobi.py", "auto", "default:binding=c"),
    ("perseus", "examples/jacobi/jacobi.py", "auto", "perseus"),
])
def test_predict_picks_the_binding_of_the_program(spec, model, choice, expected):
    assert _with_binding(spec, model, choice) == expected
