"""pevpm.calibrate: robust statistics, machine probes, region lines, calibration files."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from pevpm.calibrate import (
    Calibration,
    MachineState,
    disturbance,
    load_parameters,
    parse_region_lines,
    robust_summary,
    run_program,
    time_region,
)
from pevpm.calibrate.regions import REGION_DIR_VARIABLE
from pevpm.errors import PevpmError


def test_descheduled_calls_move_the_plain_mean_but_not_the_robust_figures():
    rng = np.random.default_rng(7)
    body = rng.gamma(100.0, 1e-5, size=2000)            # mean 1 ms, sd 0.1 ms
    times = np.r_[body, np.full(10, 0.2)]                # ten 200 ms deschedulings (0.5%)
    s = robust_summary(times)
    assert s.outliers == 10
    assert s.body_mean == pytest.approx(body.mean())
    assert s.body_sd == pytest.approx(body.std())
    assert s.mean > 1.9 * s.body_mean                     # the plain mean doubled
    assert s.median == pytest.approx(1e-3, rel=0.02)
    assert s.robust_sd == pytest.approx(1e-4, rel=0.1)
    assert s.trimmed_mean == pytest.approx(1e-3, rel=0.02)


@pytest.mark.parametrize("times, message", [([], "no timed calls"),
                                            ([1.0, float("nan")], "finite"),
                                            ([1.0, -1.0], "non-negative")])
def test_bad_times_are_refused(times, message):
    with pytest.raises(PevpmError, match=message):
        robust_summary(times)


def test_a_machine_is_busy_when_others_use_a_fifth_of_a_core():
    quiet = MachineState(load=0.2, cores=2, others=0.1, spin_rate=5e7)
    loaded = MachineState(load=1.5, cores=2, others=0.9, spin_rate=2.5e7)
    slow_only = MachineState(load=0.2, cores=2, others=0.0, spin_rate=3e7)
    assert disturbance(quiet, quiet) is None
    assert disturbance(quiet, loaded) == ("busy: other processes used 0.90 of 2 cores; "
                                          "the probe ran at 50% of its reference speed")
    assert disturbance(quiet, slow_only) == "busy: the probe ran at 60% of its reference speed"
    assert MachineState.from_dict(loaded.to_dict()) == loaded


def test_time_region_keeps_figures_and_the_machine_state():
    timing = time_region(lambda: sum(range(100)), "sum", calls=50, repeats=2,
                         min_batch=0.001, retries=0, probe_interval=0.01)
    assert timing.name == "sum" and timing.attempts == 1
    assert timing.spread.calls == 50
    assert timing.batches["repeats"] == 2 and timing.batches["median"] > 0
    assert timing.before.cores >= 1
    assert json.loads(json.dumps(timing.to_dict()))["spread"]["calls"] == 50


def test_region_lines_are_parsed_and_checked():
    text = "noise\nPEVPM-REGION a 0.5\n  PEVPM-REGION b 1e-3  \nPEVPM-REGION a 0.25\n"
    assert parse_region_lines(text) == {"a": [0.5, 0.25], "b": [0.001]}
    with pytest.raises(PevpmError, match="region a: 'x' is not a number"):
        parse_region_lines("PEVPM-REGION a x\n")
    with pytest.raises(PevpmError, match="region a: time -1 is not a finite time"):
        parse_region_lines("PEVPM-REGION a -1\n")


PROGRAM = """
import sys
from pevpm.calibrate import region
for i in range(20):
    with region("work"):
        sum(range(1000))
print("PEVPM-REGION io 0.002")
sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
"""


def test_run_program_gathers_regions_from_files_and_stdout(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    regions = run_program([sys.executable, str(script)], repeats=2)
    assert len(regions["work"]) == 40                      # written to the region folder
    assert regions["io"] == [0.002, 0.002]                 # printed on stdout


def test_run_program_failures_are_clear(tmp_path, monkeypatch):
    monkeypatch.delenv(REGION_DIR_VARIABLE, raising=False)
    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    with pytest.raises(PevpmError, match="exited with status 3"):
        run_program([sys.executable, str(script), "3"])
    with pytest.raises(PevpmError, match="printed no PEVPM-REGION lines"):
        run_program([sys.executable, "-c", "print('hello')"])
    with pytest.raises(PevpmError, match="no such program: /no/such/program"):
        run_program(["/no/such/program"])
    with pytest.raises(PevpmError, match="no program to run"):
        run_program([])


def test_a_calibration_round_trips_through_its_file(tmp_path):
    cal = Calibration.from_region_times({"work": [1e-3, 3e-3] * 50 + [0.5]}, "prog")
    assert cal.noise["calibrated"] == pytest.approx({"t_work": 2e-3, "t_work_sd": 1e-3})
    assert cal.parameters == cal.noise["robust"]        # the default: the robust figures
    path = tmp_path / "c.json"
    cal.save(path)
    assert load_parameters(path) == cal.parameters
    assert load_parameters(path, "calibrated") == cal.noise["calibrated"]


@pytest.mark.parametrize("content, message", [
    ("not json", "not JSON"),
    ('{"format": "other"}', "expected format pevpm-parameters/1"),
    ('{"format": "pevpm-parameters/1"}', "has no parameters"),
    ('{"format": "pevpm-parameters/1", "parameters": {"t x": 1}}', "is not a name"),
    ('{"format": "pevpm-parameters/1", "parameters": {"t": "1"}}', "not a finite number"),
    ('{"format": "pevpm-parameters/1", "parameters": {"t": NaN}}', "not a finite number"),
])
def test_damaged_calibration_files_are_refused(tmp_path, content, message):
    path = tmp_path / "c.json"
    path.write_text(content)
    with pytest.raises(PevpmError, match=message):
        load_parameters(path)
