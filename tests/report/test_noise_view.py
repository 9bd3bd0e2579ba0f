"""The report's "computation noise at scale" view: one model's prediction under
``none``, ``robust`` and ``calibrated`` noise side by side (issue 29)."""

import json

import pytest

from pevpm.calibrate import Calibration
from pevpm.cli import main
from pevpm.errors import PevpmError
from pevpm.report.noise import noise_view

# A kernel of about 2 ms whose calls were sometimes slowed to 9 ms by other jobs.
TIMES = [1.8e-3, 2.0e-3, 2.2e-3] * 20 + [9e-3] * 6

MODEL = """\
from pevpm.model.builder import ModelBuilder

def model():
    b = ModelBuilder(parameters={"t_step": 1.0, "t_step_sd": 0.0})
    with b.loop(5):
        b.collective("MPI_Barrier")
        b.serial("gamma(parameter t_step, parameter t_step_sd)")
    return b
"""


@pytest.fixture
def predictions(tmp_path, capsys):
    """``pevpm predict --json`` of one model at 1 and 64 ranks under each noise, as files."""
    cal = tmp_path / "cal.json"
    Calibration.from_region_times({"step": TIMES}, "stepper").save(cal)
    model = tmp_path / "model.py"
    model.write_text(MODEL)
    files = []
    for noise in ("calibrated", "none", "robust"):
        code = main(["predict", str(model), "-n", "1,64", "--machine", "constant:latency=0",
                     "--runs", "4", "--workers", "1", "--calibration", str(cal),
                     "--compute-noise", noise, "--json"])
        out, err = capsys.readouterr()
        assert code == 0, err
        files.append(tmp_path / f"{noise}.json")
        files[-1].write_text(out)
    return files


def test_the_report_shows_each_noise_side_by_side(tmp_path, predictions, capsys):
    report = tmp_path / "report"
    assert main(["report", str(report), "--noise", *map(str, predictions)]) == 0
    out = capsys.readouterr().out
    table = out.splitlines()
    assert table[0].endswith("cal.json: mean run time (s) by rank count")
    assert [line.split()[0] for line in table[2:5]] == ["none", "robust", "calibrated"]
    view = next(iter(json.loads((report / "results.json").read_text())["noise"].values()))
    means = {noise: {p["n"]: p["mean"] for p in curve} for noise, curve in view["curves"].items()}
    assert list(means) == ["none", "robust", "calibrated"]
    assert means["none"] == pytest.approx({1: 0.01, 64: 0.01})   # 5 x the median, no spread
    # the slowest of 64 draws sets the pace at every barrier: the spread grows the time
    assert means["none"][64] < means["robust"][64] < means["calibrated"][64]
    assert means["calibrated"][64] / means["calibrated"][1] > 2
    page = (report / "index.html").read_text(encoding="utf-8")
    assert "Computation noise at scale" in page and "docs/calibration.md" in page
    assert page.count("<td class='l'><code>") == 3 and (report / "noise-0.png").stat().st_size
    (report / "index.html").unlink()
    assert main(["report", str(report)]) == 0                  # redrawn from results.json
    assert "Computation noise at scale" in (report / "index.html").read_text(encoding="utf-8")


def test_predictions_that_do_not_compare_are_refused(predictions):
    outputs = [json.loads(path.read_text()) for path in predictions]
    names = [str(path) for path in predictions]
    with pytest.raises(PevpmError, match="at least two predictions"):
        noise_view(outputs[:1], names[:1])
    with pytest.raises(PevpmError, match="a second prediction under noise 'calibrated'"):
        noise_view([outputs[0], outputs[0]], names[:2])
    with pytest.raises(PevpmError, match="machine 'default', not 'constant:latency=0'"):
        noise_view([outputs[0], {**outputs[1], "machine": "default"}], names[:2])
    with pytest.raises(PevpmError, match="predicted without --calibration"):
        noise_view([outputs[0], {**outputs[1], "calibration": None}], names[:2])
    with pytest.raises(PevpmError, match="not the output of pevpm predict --json"):
        noise_view([outputs[0], {**outputs[1], "predictions": [{"numprocs": 1}]}], names[:2])


def test_a_wrong_file_is_one_error_line(tmp_path, predictions, capsys):
    junk = tmp_path / "junk.json"
    junk.write_text("[1, 2]")
    assert main(["report", str(tmp_path / "r"), "--noise", str(predictions[0]), str(junk)]) == 2
    assert capsys.readouterr().err == (f"pevpm: error: {junk}: not the output of pevpm "
                                       "predict --json\n")
    assert not (tmp_path / "r").exists()


def test_the_report_never_reads_what_it_writes_and_stray_options_are_refused(tmp_path,
                                                                            predictions,
                                                                            capsys):
    report = tmp_path / "report"
    assert main(["report", str(report), "--noise", *map(str, predictions)]) == 0
    capsys.readouterr()
    saved = report / "results.json"
    assert main(["report", str(report), "--noise", str(predictions[0]), str(saved)]) == 2
    assert capsys.readouterr().err == (f"pevpm: error: {saved}: is one of the files this "
                                       "report writes; give predictions saved elsewhere\n")
    assert main(["report", str(report), "--noise", *map(str, predictions), "--machine",
                 "default"]) == 2
    assert capsys.readouterr().err == "pevpm: error: only with --recorded TRACE: --machine\n"
