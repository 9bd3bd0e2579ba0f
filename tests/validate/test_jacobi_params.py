"""The hand-written Jacobi model's serial time: a fixed cost every rank pays
plus the rest of the one-rank iteration divided by the ranks."""

import pytest

from pevpm.validate.cases import CASES, ProblemSize


def calibration(fixed=None):
    strip = {"1": {"median": 60e-6, "per_call": {"mean": 60e-6, "sd": 6e-6}},
             "2": {"median": 33e-6, "per_call": {"mean": 33e-6, "sd": 3.3e-6}}}
    data = {"program_iteration": {"median": 60e-6}, "strip": strip}
    if fixed is not None:
        data["fixed"] = {"seconds": fixed}
    return {"jacobi": data}


def serial(params, n):
    return params["t_fixed"] + params["t_iter"] / n


def test_fixed_cost_is_paid_by_every_rank():
    case = CASES["jacobi"]
    at = {n: case.model_params(calibration(6e-6), n, ProblemSize.quick()) for n in (1, 2, 64)}
    # One rank: the program's iteration; two: the calibrated strip (its co-scheduling
    # factor is taken over the part that shrinks); beyond: the one-rank factor.
    assert serial(at[1], 1) == pytest.approx(60e-6)
    assert serial(at[2], 2) == pytest.approx(33e-6)
    assert serial(at[64], 64) == pytest.approx(6e-6 + 54e-6 / 64)
    assert at[2]["t_sd"] == pytest.approx(33e-6 * 0.1)


def test_calibration_without_fixed_cost_divides_everything():
    params = CASES["jacobi"].model_params(calibration(), 64, ProblemSize.quick())
    assert params["t_fixed"] == 0.0
    assert serial(params, 64) == pytest.approx(60e-6 / 64)


def test_the_programs_loop_at_a_tiny_grid_is_paid_by_every_rank():
    # a + b * rows: a = the program's one-rank iteration on a 16 x 16 grid
    # (20 us here), b * N the rest of the one-rank iteration (60 - 20 us).
    data = calibration(6e-6)
    data["jacobi"]["loop_fixed"] = {"median": 20e-6}
    case = CASES["jacobi"]
    at = {n: case.model_params(data, n, ProblemSize.quick()) for n in (1, 16, 1024)}
    assert serial(at[1], 1) == pytest.approx(60e-6)
    assert at[16]["t_fixed"] == pytest.approx(20e-6)
    assert serial(at[16], 16) == pytest.approx(20e-6 + 40e-6 / 16)
    assert serial(at[1024], 1024) == pytest.approx(20e-6 + 40e-6 / 1024)


def test_calibrate_jacobi_times_the_loop_on_a_tiny_grid():
    from pevpm.validate import calibration as calibrate

    data = calibrate.calibrate_jacobi(size=128, nprocs=(1,), repeats=1, min_batch=0.001)
    loop = data["loop_fixed"]
    assert loop["iterations"] == calibrate.LOOP_FIXED_ITERATIONS
    assert 0 < loop["median"] < data["program_iteration"]["median"]
