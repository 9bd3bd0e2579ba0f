"""The HTML report is drawn from saved results and can be rebuilt from them."""

import json
import os
from pathlib import Path

import pytest

from pevpm.errors import PevpmError
from pevpm.report.html import error_percent, rebuild_report, write_report


def test_report_has_every_section_and_marks_large_errors(tmp_path, sample_results):
    path = write_report(sample_results, str(tmp_path))
    page = Path(path).read_text(encoding="utf-8")
    for png in ["speedup-jacobi.png", "breakdown-jacobi.png", "collective-0.png"]:
        assert os.path.getsize(tmp_path / png) > 1000
        assert f'src="{png}"' in page
    assert '<td class="bad">+20.0</td>' in page      # 1.2 s predicted vs 1.0 s measured
    assert "<td>+1.0</td>" in page                   # 2.02 vs 2.0 is within tolerance
    assert "trace.json" in page and "ui.perfetto.dev" in page
    assert json.loads((tmp_path / "results.json").read_text())["title"] == "demo"


def test_rebuild_redraws_from_results_json(tmp_path, sample_results):
    write_report(sample_results, str(tmp_path))
    (tmp_path / "index.html").unlink()
    (tmp_path / "speedup-jacobi.png").unlink()
    rebuild_report(str(tmp_path))
    assert (tmp_path / "index.html").exists() and (tmp_path / "speedup-jacobi.png").exists()


def test_rebuild_without_results_is_a_clear_error(tmp_path):
    with pytest.raises(PevpmError, match="no results.json here"):
        rebuild_report(str(tmp_path))
    (tmp_path / "results.json").write_text("{not json")
    with pytest.raises(PevpmError, match="results.json is not valid JSON"):
        rebuild_report(str(tmp_path))


def test_error_percent_is_signed():
    assert error_percent(110.0, 100.0) == pytest.approx(10.0)
    assert error_percent(90.0, 100.0) == pytest.approx(-10.0)


def test_measurements_taken_on_a_busy_machine_are_flagged(tmp_path, sample_results):
    rows = sample_results["validation"]["jacobi"]
    rows[-1]["measured_others"] = 1.4
    page = Path(write_report(sample_results, str(tmp_path))).read_text(encoding="utf-8")
    assert "(busy)</td>" in page
    assert f"The real runs at n = {rows[-1]['n']} shared the machine" in page
    assert "up to 1.40 cores" in page


def test_a_point_calibrated_under_another_load_is_noted(tmp_path, sample_results):
    rows = sample_results["validation"]["jacobi"]
    rows[0]["measured_others"], rows[0]["calibration_others"] = 0.1, 0.05
    rows[-1]["measured_others"], rows[-1]["calibration_others"] = 1.2, 0.05
    page = Path(write_report(sample_results, str(tmp_path))).read_text(encoding="utf-8")
    assert (f"At n = {rows[-1]['n']} the calibration and the real runs saw different loads: "
            "other processes used 0.05 cores during the calibration, up to 1.20 during the "
            "runs.") in page
    assert f"At n = {rows[0]['n']} the calibration" not in page
