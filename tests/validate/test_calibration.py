import numpy as np
import pytest

from pevpm.errors import PevpmError
from pevpm.validate.calibration import (
    calibrate,
    calibrate_bag_of_tasks,
    load_calibration,
    load_example,
    save_calibration,
    time_call,
)


def test_time_call_reports_consistent_statistics():
    calls = []
    stats = time_call(lambda: calls.append(1), repeats=4, min_batch=0.001)
    assert stats["repeats"] == 4
    assert stats["min"] <= stats["median"] <= stats["max"]
    assert stats["min"] <= stats["mean"] <= stats["max"]
    # warm-up batches double until one lasts min_batch; then 4 batches of the final size
    assert len(calls) >= 4 * stats["calls_per_batch"]


def test_calibration_covers_each_example_and_process_count():
    data = calibrate(["jacobi", "fft2d"], nprocs=[2, 4], repeats=2)
    assert set(data["jacobi"]["strip"]) == {"1", "2", "4"}
    assert data["jacobi"]["iteration"] == data["jacobi"]["strip"]["1"]
    assert set(data["fft2d"]["row_ffts"]) == set(data["fft2d"]["transpose"]) == {"1", "2", "4"}
    assert data["fft2d"]["per_row"] == data["fft2d"]["row_ffts"]["1"]["median"] / 256
    spreads = (data["jacobi"]["strip"]["2"]["per_call"], data["fft2d"]["row_ffts"]["4"]["per_call"])
    for spread in spreads:
        assert spread["mean"] > 0 and spread["sd"] >= 0 and spread["calls"] >= 500
    with pytest.raises(PevpmError, match="no calibration for sorting"):
        calibrate(["sorting"])


def test_bag_of_tasks_calibration_describes_the_job_stream():
    data = calibrate_bag_of_tasks(durations=(0.0005, 0.001), repeats=1, njobs=20, seed=4)
    jobs = load_example("bag_of_tasks").job_stream(20, 65536, 0.01, 4)
    assert data["job_stream"]["mean_compute"] == pytest.approx(jobs[:, 1].mean())
    assert data["job_stream"]["mean_send_bytes"] == pytest.approx(jobs[:, 0].mean())
    for mode in ("spin", "sleep"):
        assert len(data[mode]["measured"]) == 2
        overshoot = np.median(np.subtract(data[mode]["measured"], (0.0005, 0.001)))
        assert data[mode]["slope"] == 1.0
        assert data[mode]["overhead"] == pytest.approx(overshoot) and overshoot >= 0


def test_fft_calibration_refuses_sizes_the_ranks_do_not_divide():
    with pytest.raises(PevpmError, match="not divisible by 3"):
        calibrate(["fft2d"], nprocs=[3], repeats=1)


def test_save_and_load_round_trip(tmp_path):
    data = calibrate(["jacobi"], nprocs=[1], repeats=1)
    save_calibration(data, tmp_path / "c.json")
    assert load_calibration(tmp_path / "c.json") == data
    (tmp_path / "other.json").write_text('{"format": "something else"}')
    with pytest.raises(PevpmError, match="not a pevpm calibration file"):
        load_calibration(tmp_path / "other.json")
    with pytest.raises(PevpmError, match="cannot read calibration"):
        load_calibration(tmp_path / "missing.json")
