"""validate_case interleaves calibration with the real runs (one calibration
before each timed repeat and one after the last), predicts each count from
those calibrations, and notes a point whose calibrations and runs saw
different loads. The runs are faked at run_once, so no MPI is needed."""

import pytest

from pevpm.validate import runner, validation
from pevpm.validate.cases import CASES, ProblemSize


class FakeRuns:
    """run_once stand-in: logs each run; the n-rank runs take 1/n s."""

    def __init__(self, events):
        self.events = events

    def __call__(self, program, nprocs, args, timeout, launcher):
        self.events.append(f"run {nprocs}")
        return {"wall_time": 1.0 / nprocs}


class FixedMeter:
    """BusyMeter stand-in: other processes used ``cores`` during every span."""

    cores = 0.05

    def start(self):
        return self

    def others(self, own_seconds):
        return self.cores


def jacobi_calibration(t_iter):
    return {"jacobi": {"program_iteration": {"median": t_iter}}}


@pytest.fixture
def events(monkeypatch):
    log = []
    monkeypatch.setattr(runner, "run_once", FakeRuns(log))
    monkeypatch.setattr(runner, "BusyMeter", FixedMeter)
    monkeypatch.setattr(validation, "predict_point", lambda case, n, profile, params, *a: (
        log.append(f"predict {n} t_iter={params['t_iter']:g}")
        or {"predictions": {"full": params["t_iter"] * 1e4 / n}}))
    return log


def test_each_count_alternates_calibrations_and_runs_and_calibrates_once_more(events):
    t_iters = iter([1e-4, 2e-4, 3e-4, 4e-4, 5e-5, 5e-5, 5e-5, 5e-5])

    def recalibrate():
        events.append("calibrate")
        return jacobi_calibration(next(t_iters))

    rows = validation.validate_case(CASES["jacobi"], [1, 2], "unused.db", None,
                                    ProblemSize.quick(), 3, 4, 0, recalibrate=recalibrate)
    one_count = ["calibrate", "run {n}", "calibrate", "run {n}", "calibrate", "run {n}",
                 "calibrate"]
    assert events == (["run 1"] + [e.format(n=1) for e in one_count]    # warm-up first
                      + ["predict 1 t_iter=0.00025"]
                      + ["run 2"] + [e.format(n=2) for e in one_count]
                      + ["predict 2 t_iter=5e-05"])
    assert events.count("calibrate") == 2 * (3 + 1)
    # trapezoid: (1/2 * 1 + 2 + 3 + 1/2 * 4) / 3 = 2.5 (x 1e-4); the ends count half
    assert rows[0]["predictions"]["full"] == pytest.approx(2.5)
    assert [r["measured_times"] for r in rows] == [[1.0] * 3, [0.5] * 3]
    assert [r["calibration_others"] for r in rows] == [0.05, 0.05]
    assert [r["measured_others"] for r in rows] == [0.05, 0.05]


def test_the_busiest_calibration_is_compared_with_the_busiest_run(events, monkeypatch):
    spans = iter([0.05, 0.0, 0.05, 1.5, 0.05])

    class Meter(FixedMeter):
        def others(self, own_seconds):
            return next(spans)

    monkeypatch.setattr(runner, "BusyMeter", Meter)
    rows = validation.validate_case(CASES["jacobi"], [1], "unused.db", None,
                                    ProblemSize.quick(), 2, 4, 0,
                                    recalibrate=lambda: jacobi_calibration(1e-4))
    # calibrate 0.05, run 0.0, calibrate 0.05, run 1.5, calibrate 0.05
    assert rows[0]["calibration_others"] == 0.05
    assert rows[0]["measured_others"] == 1.5
    table = validation.format_rows("jacobi", rows)
    assert "note: at n=1 the calibration and the real runs saw different loads" in table


def test_without_recalibrate_the_given_calibration_serves_every_count(events):
    rows = validation.validate_case(CASES["jacobi"], [1, 2], "unused.db",
                                    jacobi_calibration(1e-4), ProblemSize.quick(), 2, 1, 0)
    assert events == ["run 1"] * 3 + ["predict 1 t_iter=0.0001"] \
        + ["run 2"] * 3 + ["predict 2 t_iter=0.0001"]
    assert [r["calibration_others"] for r in rows] == [None, None]


def test_run_example_calls_between_before_each_repeat_and_after_the_last(events):
    m = runner.run_example("jacobi", 2, repeats=2, warmup=1,
                           between=lambda: events.append("between"))
    assert events == ["run 2", "between", "run 2", "between", "run 2", "between"]
    assert m.times == [0.5, 0.5] and m.others == [0.05, 0.05]


def test_interleaved_params_weigh_the_end_calibrations_half():
    params = [{"N": 256, "t": 1.0}, {"N": 256, "t": 3.0}]
    assert validation.interleaved_params(params) == {"N": 256, "t": 2.0}
    four = validation.interleaved_params([{"t": 4.0}, {"t": 1.0}, {"t": 1.0}, {"t": 4.0}])
    assert four["t"] == pytest.approx((2.0 + 1.0 + 1.0 + 2.0) / 3)
    assert type(validation.interleaved_params([{"N": 256}] * 3)["N"]) is int
