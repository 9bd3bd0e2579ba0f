"""The demo's scaling curves: one problem size per curve, every point says how it was
obtained, and a stationary curve is estimated alike at every count (issue 29)."""

import pytest

from pevpm.cli.demo_pipeline import DemoPlan, scaling_predictions, simulated_iterations
from pevpm.profile.builtin import resolve_profile
from pevpm.validate.cases import CASES, ProblemSize


def _fft_calibration(counts):
    """Serial times that shrink as 1/n (10 ms an iteration on one rank), 20% per-call spread."""
    timing = {str(n): {"median": 4e-3 / n, "per_call": {"mean": 4e-3 / n, "sd": 0.8e-3 / n}}
              for n in counts}
    return {"fft2d": {"row_ffts": timing,
                      "transpose": {str(n): {"median": 2e-3 / n} for n in counts},
                      "program_iteration": {"median": 0.01}}}


def test_the_quick_fft_curve_simulates_the_same_iterations_at_every_count():
    """``demo --quick`` once simulated 78 iterations at 16 ranks and 4 at 64 (each its own
    message budget): 4 iterations of 2 runs missed the tail of an iteration's time,
    and the FFT's curve fell from 0.157 s at 16 ranks to 0.030 s at 64."""
    plan = DemoPlan.for_mode(quick=True)
    points = scaling_predictions(resolve_profile("default"), _fft_calibration([1, 2, 4, 16, 64]),
                                 plan, lambda _: None, cases={"fft2d": CASES["fft2d"]})["fft2d"]
    assert [p["n"] for p in points] == [4, 16, 64]
    assert {p["simulated_iterations"] for p in points} == {4}
    assert {p["iterations"] for p in points} == {plan.size.fft_iterations}
    assert {p["grid"] for p in points} == {plan.size.grid}
    for p in points:
        assert p["runs"] * p["simulated_iterations"] >= 32
        assert p["scaled_by"] == pytest.approx(plan.size.fft_iterations / 4)
        assert p["calibration"] == f"serial time from the kernels calibrated for {p['n']} ranks on this machine"


def test_points_past_the_grid_are_a_curve_of_their_own():
    plan = DemoPlan(ProblemSize(grid=16, fft_iterations=4), {}, [4, 16, 32], repeats=1, runs=8)
    curves = scaling_predictions(resolve_profile("default"), _fft_calibration([1, 2, 4, 8, 16]),
                                 plan, lambda _: None, cases={"fft2d": CASES["fft2d"]})
    assert [p["n"] for p in curves["fft2d"]] == [4, 16]
    (beyond,) = curves["fft2d (grid = ranks)"]
    assert (beyond["n"], beyond["grid"]) == (32, 32)
    assert beyond["calibration"].startswith("a 32 x 32 grid, one row per rank; serial time from "
                                            "the kernels calibrated at 8 ranks")


def test_simulated_iterations_follow_the_largest_count():
    assert simulated_iterations("fft2d", [4, 16, 64], 100) == 20000 // 64 ** 2
    assert simulated_iterations("jacobi", [4, 16, 64], 5000) == 20000 // 128
    assert simulated_iterations("jacobi", [4], 10) == 10
