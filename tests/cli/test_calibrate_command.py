"""``pevpm calibrate`` and ``pevpm predict --calibration``."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from pevpm.cli import main

ROOT = Path(__file__).resolve().parents[2]
RING = ROOT / "docs" / "calibration" / "ring.py"
RING_MODEL = ROOT / "docs" / "calibration" / "ring_model.py"

PROGRAM = """
print("PEVPM-REGION step 0.010")
print("PEVPM-REGION step 0.010")
"""

MODEL = """
from pevpm.model.builder import ModelBuilder

def model():
    b = ModelBuilder(parameters={"t_step": 1.0, "iterations": 10})
    with b.loop("parameter iterations"):
        b.serial("parameter t_step")
    return b
"""


def test_calibrate_writes_parameters_that_predict_reads(tmp_path, capsys):
    program, model = tmp_path / "prog.py", tmp_path / "model.py"
    program.write_text(PROGRAM)
    model.write_text(MODEL)
    out = tmp_path / "cal.json"
    assert main(["calibrate", "-o", str(out), "--busy-retries", "0", "--",
                 sys.executable, str(program)]) == 0
    printed = capsys.readouterr().out
    assert "parameters: -D t_step=0.01 -D t_step_sd=0" in printed
    assert json.loads(out.read_text())["parameters"] == {"t_step": 0.01, "t_step_sd": 0.0}
    assert main(["predict", str(model), "-n", "1", "--machine", "constant:latency=0",
                 "--runs", "2", "--calibration", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    (prediction,) = json.loads(captured.out)["predictions"]
    assert prediction["mean"] == pytest.approx(10 * 0.01)   # 10 iterations of t_step
    assert "the model does not use t_step_sd" in captured.err
    assert main(["predict", str(model), "-n", "1", "--machine", "constant:latency=0",
                 "--runs", "2", "--calibration", str(out), "-D", "t_step=0.5",
                 "--json"]) == 0                            # -D wins over the file
    assert json.loads(capsys.readouterr().out)["predictions"][0]["mean"] == pytest.approx(5.0)


def test_calibrate_errors_are_one_line(tmp_path, capsys):
    assert main(["calibrate"]) == 2
    assert "no program to run" in capsys.readouterr().err
    assert main(["calibrate", "--", sys.executable, "-c", "pass"]) == 2
    assert "printed no PEVPM-REGION lines" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    model = tmp_path / "model.py"
    model.write_text(MODEL)
    assert main(["predict", str(model), "-n", "1", "--calibration", str(bad)]) == 2
    assert "not a calibration file" in capsys.readouterr().err
    other = tmp_path / "other.json"
    other.write_text('{"format": "pevpm-parameters/1", "parameters": {"t_other": 1}}')
    assert main(["predict", str(model), "-n", "1", "--calibration", str(other)]) == 2
    assert "the model uses none of its parameters (t_other)" in capsys.readouterr().err


@pytest.mark.mpi
def test_the_walkthrough_ring_calibrates_and_predicts(tmp_path, capsys):
    mpiexec = shutil.which("mpiexec", path=str(Path(sys.executable).parent))
    out = tmp_path / "ring.json"
    assert main(["calibrate", "-o", str(out), "--repeats", "1", "--busy-retries", "0", "--",
                 mpiexec, "-n", "2", sys.executable, str(RING), "--iterations", "30"]) == 0
    parameters = json.loads(out.read_text())["parameters"]
    assert set(parameters) == {"t_compute", "t_compute_sd"}
    assert "compute" in capsys.readouterr().out
    assert main(["predict", str(RING_MODEL), "-n", "2", "--calibration", str(out),
                 "--machine", "default", "--runs", "2", "-D", "iterations=30", "--json"]) == 0
    (prediction,) = json.loads(capsys.readouterr().out)["predictions"]
    assert prediction["mean"] >= 30 * parameters["t_compute"] * 0.5
