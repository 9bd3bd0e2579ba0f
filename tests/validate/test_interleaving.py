"""validate_case interleaves calibration with the real runs and notes a point
whose calibration and runs saw different loads."""

from pevpm.validate import validation
from pevpm.validate.cases import CASES, ProblemSize
from pevpm.validate.runner import Measurement


class QuietMeter:
    """Other processes used 0.05 cores during every calibration."""

    def start(self):
        return self

    def others(self, own_seconds):
        return 0.05


def test_each_count_is_calibrated_right_before_its_runs_and_predicted_with_it(monkeypatch):
    events = []
    calibrations = iter([{"which": "first"}, {"which": "second"}])

    def recalibrate():
        events.append("calibrate")
        return next(calibrations)

    def measure(case, counts, size, repeats, progress):
        (n,) = counts
        events.append(f"run {n}")
        return {n: Measurement("jacobi", n, [], [1.0 / n, 1.2 / n], others=[0.0, 1.5 * (n - 1)])}

    def predict_case(case, counts, profile, calibration, size, runs, seed, progress):
        (n,) = counts
        events.append(f"predict {n} with {calibration['which']}")
        return {n: {"predictions": {"full": 1.0 / n}}}

    monkeypatch.setattr(validation, "measure", measure)
    monkeypatch.setattr(validation, "predict_case", predict_case)
    monkeypatch.setattr(validation, "BusyMeter", QuietMeter)
    rows = validation.validate_case(CASES["jacobi"], [1, 2], "unused.db", None,
                                    ProblemSize.quick(), 2, 4, 0, recalibrate=recalibrate)
    assert events == ["calibrate", "run 1", "predict 1 with first",
                      "calibrate", "run 2", "predict 2 with second"]
    assert [r["n"] for r in rows] == [1, 2]
    assert [r["calibration_others"] for r in rows] == [0.05, 0.05]
    # the runs at 2 ranks saw 1.5 cores of other work, the calibration 0.05
    table = validation.format_rows("jacobi", rows)
    assert "note: at n=2 the calibration and the real runs saw different loads" in table
    assert "at n=1 the calibration" not in table


def test_without_recalibrate_the_given_calibration_serves_every_count(monkeypatch):
    seen = []
    monkeypatch.setattr(validation, "measure", lambda case, counts, *a: {
        counts[0]: Measurement("jacobi", counts[0], [], [1.0])})
    monkeypatch.setattr(validation, "predict_case", lambda case, counts, profile, cal, *a: (
        seen.append(cal) or {counts[0]: {"predictions": {"full": 1.0}}}))
    rows = validation.validate_case(CASES["jacobi"], [1, 2], "unused.db", {"which": "once"},
                                    ProblemSize.quick(), 1, 1, 0)
    assert seen == [{"which": "once"}] * 2
    assert [r["calibration_others"] for r in rows] == [None, None]
