"""Built-in machines are first-class: names anywhere a profile is taken, their origin,
every documented communication model selectable (issue 18)."""

import shutil

import pytest

from pevpm.cli import main
from pevpm.machine.presets import DESCRIPTIONS, KINDS, parse_machine, profile_of
from pevpm.machine.profile_model import COMM_MODELS, machine_from_profile
from pevpm.profile.builtin import (
    ProfileOrigin,
    builtin_names,
    different_host_note,
    profile_origin,
    resolve_profile,
)
from pevpm.profile.store import ProfileWriter
from pevpm.validate.validation import PROFILE_MODELS

JACOBI = "examples/jacobi/model.py"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def foreign_profile(tmp_path):
    """The shipped profile, as if measured on another machine."""
    path = tmp_path / "elsewhere.db"
    shutil.copyfile(resolve_profile("default"), path)
    with ProfileWriter.open(path) as writer:
        writer.set_metadata(host="cluster-node-17", cpu="Imaginary CPU 9000", cores="64",
                            host_description="")
    return path


def test_every_preset_is_described():
    assert set(DESCRIPTIONS) == set(KINDS)


def test_default_resolves_the_same_everywhere():
    path = resolve_profile("default")
    assert profile_of("default") == path == profile_of("default:model=min2x1")
    assert parse_machine("default").comm.model == machine_from_profile("default").comm.model


def test_profile_show_takes_a_builtin_name_and_tells_its_origin(capsys):
    code, out, _ = run(capsys, "profile", "show", "default")
    assert code == 0
    assert "origin: vm (2-core development VM, AMD EPYC, shared memory only), MPICH 5.0.2, " \
           "2026-11-22T02:29" in out
    assert "good for: trying pevpm without benchmarking" in out


def test_profile_export_csv_takes_a_builtin_name(capsys):
    code, out, _ = run(capsys, "profile", "export-csv", "default", "--test", "isend",
                       "--nxp", "1x2")
    assert code == 0 and out.splitlines()[1].startswith("isend,,1x2,0,")


def test_unknown_profile_name_lists_the_builtin_ones(capsys):
    code, _, err = run(capsys, "profile", "show", "defualt")
    assert code == 2
    assert err.strip() == ("pevpm: error: defualt: no such profile file "
                           "(built-in profiles: default)")


def test_machine_list_shows_presets_builtins_and_models(capsys):
    code, out, _ = run(capsys, "machine", "list")
    assert code == 0
    for kind in KINDS:
        assert f"\n  {kind} " in out
    for name in builtin_names():
        assert f"\n  {name}" in out
    assert "measured on vm (2-core development VM" in out
    for model in COMM_MODELS:
        assert f"\n  {model} " in out


def test_list_models_names_every_model_and_explains_amdahl(capsys):
    code, out, _ = run(capsys, "predict", "--list-models")
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()[1:] if line.startswith("  ")
            and not line.startswith("   ")] == list(COMM_MODELS)
    assert "whole-program baseline" in out and "pevpm analytic laws --fit" in out


def test_predict_without_a_model_is_a_one_line_error(capsys):
    code, _, err = run(capsys, "predict")
    assert code == 2 and err.startswith("pevpm: error: give the model file")


def test_validation_compares_every_model_the_docs_show():
    assert set(PROFILE_MODELS) <= set(COMM_MODELS)
    assert "latency-bandwidth" in PROFILE_MODELS


def test_latency_bandwidth_is_a_deterministic_straight_line(capsys):
    machine = parse_machine("default:model=latency-bandwidth")
    comm = machine.comm
    assert comm.latency == pytest.approx(3.9e-6, abs=0.05e-6)
    code, out, _ = run(capsys, "predict", JACOBI, "-n", "2", "--runs", "3", "--ppn", "2",
                       "--machine", "default:model=latency-bandwidth", "--json")
    assert code == 0
    import json
    prediction = json.loads(out)["predictions"][0]
    assert prediction["sd"] == 0.0 and prediction["mean"] > 0


def test_unknown_model_lists_latency_bandwidth(capsys):
    code, _, err = run(capsys, "predict", JACOBI, "-n", "2", "--machine", "default:model=lb")
    assert code == 2 and "latency-bandwidth" in err


def test_amdahl_is_fitted_from_measured_times(tmp_path, capsys):
    times = tmp_path / "times.csv"
    times.write_text("n,time\n1,1.9855\n2,2.1992\n4,0.7899\n")
    code, out, _ = run(capsys, "analytic", "laws", "--fit", str(times))
    assert code == 0
    assert "serial fraction s = 0.5104" in out
    rows = [line.split() for line in out.splitlines()[2:]]
    assert rows[1][:3] == ["2", "2.1992", "1.49944"]      # README: 1.4994 s (-31.8%)


def test_predict_notes_once_when_the_profile_is_from_another_host(foreign_profile, capsys):
    code, _, err = run(capsys, "predict", JACOBI, "-n", "1,2", "--runs", "2", "--ppn", "2",
                       "--machine", str(foreign_profile))
    assert code == 0
    notes = [line for line in err.splitlines() if "was measured on" in line]
    assert len(notes) == 1
    assert notes[0].startswith(f"pevpm predict: note: profile {foreign_profile} was measured on "
                               "cluster-node-17 (64 cores, Imaginary CPU 9000)")


def test_no_note_on_the_host_the_profile_came_from(tmp_path):
    path = tmp_path / "here.db"
    shutil.copyfile(resolve_profile("default"), path)
    here = ProfileOrigin.of_this_host()
    with ProfileWriter.open(path) as writer:
        writer.set_metadata(host=here.host, cpu=here.cpu, cores=str(here.cores))
    assert different_host_note(path) is None
    assert profile_origin(path).host == here.host


def test_fit_of_a_builtin_shows_without_writing_into_the_package(tmp_path, capsys,
                                                                  monkeypatch):
    before = resolve_profile("default").read_bytes()
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "fit", "default", "--tests", "isend", "--nxp", "1x2",
                         "--no-plots", "--no-progress", "--families", "pearson5")
    assert code == 0
    assert "built-in profile; its fits are shown, not stored" in err
    assert "isend" in out and "stored" not in out
    assert resolve_profile("default").read_bytes() == before


def test_no_note_for_a_synthetic_machine(tmp_path, capsys):
    path = tmp_path / "cluster.db"
    assert main(["machine", "new", "--latency", "2us", "--bandwidth", "10GB/s",
                 "--placements", "1x2,2x1", "--samples", "50", "-o", str(path)]) == 0
    assert different_host_note(path) is None
