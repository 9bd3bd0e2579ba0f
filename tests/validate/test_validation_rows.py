"""Validation rows: Amdahl baseline, the table, the cases' model parameters."""

import pytest

from pevpm.errors import PevpmError
from pevpm.validate.cases import CASES, ProblemSize, find_case
from pevpm.validate.validation import add_amdahl, format_rows


def test_amdahl_fitted_to_exact_amdahl_times_reproduces_them():
    serial = 0.2                                   # T(n) = 10 (0.2 + 0.8 / n)
    rows = [{"n": n, "measured_mean": 10 * (serial + (1 - serial) / n), "predictions": {}}
            for n in (1, 2, 4)]
    add_amdahl(rows)
    for r in rows:
        assert r["predictions"]["amdahl"] == pytest.approx(r["measured_mean"], rel=1e-12)


def test_amdahl_needs_a_one_process_time():
    rows = [{"n": 2, "measured_mean": 1.0, "predictions": {}},
            {"n": 4, "measured_mean": 0.6, "predictions": {}}]
    add_amdahl(rows)
    assert all("amdahl" not in r["predictions"] for r in rows)


def test_table_shows_each_model_and_a_dash_where_missing():
    rows = [{"n": 1, "measured_mean": 2.0, "measured_sd": 0.0,
             "predictions": {"full": 2.2, "amdahl": 2.0}},
            {"n": 2, "measured_mean": 1.0, "measured_sd": 0.1, "predictions": {"full": 0.9}}]
    table = format_rows("bag", rows).splitlines()
    assert table[0] == "bag"
    assert "full" in table[1] and "amdahl" in table[1]
    assert table[2].split()[-6:] == ["2.2000", "s", "+10.0", "2.0000", "s", "+0.0"]
    assert table[3].rstrip().endswith("-")
    assert len(table) == 4                          # no load recorded: no note


def test_runs_on_a_busy_machine_are_noted_under_the_table():
    rows = [{"n": 1, "measured_mean": 2.0, "measured_sd": 0.0, "measured_others": 0.05,
             "predictions": {"full": 2.2}},
            {"n": 2, "measured_mean": 1.0, "measured_sd": 0.1, "measured_others": 1.2,
             "predictions": {"full": 0.9}}]
    table = format_rows("bag", rows).splitlines()
    assert table[-1] == ("note: the real runs at n=2 shared the machine: other processes used "
                         "up to 1.20 cores; their times may be too long")
    assert len(table) == 5


def test_fft_parameters_come_from_the_matching_calibration():
    calibration = {"fft2d": {"row_ffts": {"1": {"median": 2e-3}, "2": {"median": 1.2e-3}},
                             "transpose": {"1": {"median": 1e-3}, "2": {"median": 6e-4}},
                             "program_iteration": {"median": 6e-3}}}
    params = CASES["fft2d"].model_params(calibration, 2, ProblemSize())
    # the one-rank program time, halved, times the kernels' slowdown at 2 ranks:
    # (2 * 1.2 + 0.6) * 2 / (2 * 2 + 1) = 1.2
    assert params["t_serial"] == pytest.approx(6e-3 / 2 * 1.2)
    assert params["t_sd"] == 0.0   # a calibration without single-call spreads
    calibration["fft2d"]["row_ffts"]["2"]["per_call"] = {"mean": 1e-3, "sd": 2.5e-4}
    params = CASES["fft2d"].model_params(calibration, 2, ProblemSize())
    # each of the two phases (t_serial / 2) varies by the kernel's 25%
    assert params["t_sd"] == pytest.approx(6e-3 / 2 * 1.2 / 2 * 0.25)
    with pytest.raises(PevpmError, match="no serial times for 4 processes"):
        CASES["fft2d"].model_params(calibration, 4, ProblemSize())


def test_jacobi_sweep_spread_scales_with_the_strip():
    calibration = {"jacobi": {"program_iteration": {"median": 1e-4},
                              "strip": {"1": {"median": 1e-4},
                                        "2": {"median": 6e-5,
                                              "per_call": {"mean": 6e-5, "sd": 3e-5}}}}}
    params = CASES["jacobi"].model_params(calibration, 2, ProblemSize())
    # t_iter = 1e-4 * (2 * 6e-5 / 1e-4) = 1.2e-4; a rank's strip is half, varying by 50%
    assert params["t_iter"] == pytest.approx(1.2e-4)
    assert params["t_sd"] == pytest.approx(1.2e-4 / 2 * 0.5)
    assert CASES["jacobi"].model_params(calibration, 4, ProblemSize())["t_sd"] == 0.0


def test_bad_cases_and_counts_are_refused_before_running():
    with pytest.raises(PevpmError, match="unknown example 'jacobbi'"):
        find_case("jacobbi")
    assert find_case("examples/jacobi/").name == "jacobi"
    with pytest.raises(PevpmError, match="fft2d cannot run on 3 processes"):
        CASES["fft2d"].check_procs([1, 3], ProblemSize())
    with pytest.raises(PevpmError, match="calibration has no entry for 'jacobi'"):
        CASES["jacobi"].model_params({}, 1, ProblemSize())
