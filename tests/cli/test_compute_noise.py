"""``predict --compute-noise``: which spread of a calibrated region a prediction uses (issue 29)."""

import json

import pytest

from pevpm.calibrate import Calibration
from pevpm.cli import main

# 90 quiet calls around 1 ms and 10 slowed to 5 ms by other jobs on the machine.
TIMES = [0.9e-3, 1.0e-3, 1.1e-3] * 30 + [5e-3] * 10

MODEL = """\
from pevpm.model.builder import ModelBuilder

def model():
    b = ModelBuilder(parameters={"t_spmv": 1.0, "t_spmv_sd": 0.0})
    with b.loop(10):
        b.serial("gamma(parameter t_spmv, parameter t_spmv_sd)")
        b.collective("MPI_Allreduce", size=8)
    return b
"""


@pytest.fixture
def files(tmp_path):
    cal = tmp_path / "cal.json"
    Calibration.from_region_times({"spmv": TIMES}, "cg").save(cal)
    model = tmp_path / "model.py"
    model.write_text(MODEL)
    return model, cal


def predict(capsys, model, cal, n, *noise):
    code = main(["predict", str(model), "-n", str(n), "--machine", "constant:latency=0",
                 "--runs", "20", "--workers", "1", "--calibration", str(cal), "--json",
                 *noise])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)["predictions"][0], err


def test_none_is_the_median_without_spread_at_every_count(files, capsys):
    for n in (1, 16):
        p, err = predict(capsys, *files, n, "--compute-noise", "none")
        assert p["mean"] == pytest.approx(10 * 1.0e-3) and p["sd"] == 0
        assert "note: computation noise: none (median of each region's calls, no spread" in err


def test_robust_is_the_default_and_named(files, capsys):
    p, err = predict(capsys, *files, 1)
    assert "note: computation noise: robust (median and 1.4826 x MAD" in err
    assert p["params"] == pytest.approx({"t_spmv": 1.0e-3, "t_spmv_sd": 1.4826e-4})


def test_the_calibrated_spread_grows_with_the_ranks_at_each_allreduce(files, capsys):
    """At every Allreduce the slowest rank's draw sets the pace: the measured spread,
    other jobs' noise included, lengthens the run more on 16 ranks than on one."""
    one, err = predict(capsys, *files, 1, "--compute-noise", "calibrated")
    sixteen, _ = predict(capsys, *files, 16, "--compute-noise", "calibrated")
    robust16, _ = predict(capsys, *files, 16, "--compute-noise", "robust")
    assert "note: computation noise: calibrated (mean and sd" in err
    assert one["params"]["t_spmv"] == pytest.approx(sum(TIMES) / len(TIMES))
    assert one["mean"] == pytest.approx(10 * sum(TIMES) / len(TIMES), rel=0.2)
    assert sixteen["mean"] > 1.5 * one["mean"]
    assert 10 * 1.0e-3 < robust16["mean"] < sixteen["mean"] / 1.5


def test_noise_needs_a_calibration_and_an_old_file_has_calibrated_only(files, tmp_path,
                                                                       capsys):
    model, cal = files
    assert main(["predict", str(model), "-n", "1", "--compute-noise", "none"]) == 2
    assert "--compute-noise chooses among a calibration file's figures" in \
        capsys.readouterr().err
    old = tmp_path / "old.json"
    data = json.loads(cal.read_text())
    old.write_text(json.dumps({"format": data["format"],
                               "parameters": data["noise"]["calibrated"]}))
    _, err = predict(capsys, model, old, 1)
    assert "computation noise: calibrated" in err
    assert main(["predict", str(model), "-n", "1", "--calibration", str(old),
                 "--compute-noise", "robust"]) == 2
    assert "holds the calibrated noise only" in capsys.readouterr().err


def test_noise_per_parameter(files, tmp_path, capsys):
    model, _ = files
    cal = tmp_path / "two.json"
    Calibration.from_region_times({"spmv": TIMES, "dot": TIMES}, "cg").save(cal)
    p, err = predict(capsys, model, cal, 1, "--compute-noise", "none,t_spmv=calibrated")
    assert p["params"]["t_spmv"] == pytest.approx(sum(TIMES) / len(TIMES))
    assert p["params"]["t_spmv_sd"] > 1e-3
    assert "computation noise: none (median of each region's calls, no spread, from " in err
    assert "; t_spmv: calibrated;" in err
    assert main(["predict", str(model), "-n", "1", "--calibration", str(cal),
                 "--compute-noise", "t_spvm=robust"]) == 2
    assert "no parameter 't_spvm' in the calibration (did you mean 't_spmv'?)" in \
        capsys.readouterr().err
    assert main(["predict", str(model), "-n", "1", "--calibration", str(cal),
                 "--compute-noise", "loud"]) == 2
    assert "argument --compute-noise: 'loud': give robust | calibrated | none" in \
        capsys.readouterr().err
