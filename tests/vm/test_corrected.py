"""The correction of extrapolated runs by runs simulated whole."""

import math

import numpy as np
import pytest

from pevpm.vm.strategies.corrected import Correction, corrected_summary, estimated_error
from pevpm.vm.strategies.prediction import RunSummary


def test_an_exact_linear_correction_is_recovered_with_no_error():
    y = np.array([1.0, 2.0, 4.0, 7.0])
    fit = Correction.fit(y + 0.5 + 0.1 * (y - y.mean()), y)
    assert fit.intercept == pytest.approx(0.5)
    assert fit.slope == pytest.approx(0.1)
    assert np.allclose(fit.residuals, 0.0)
    assert fit.correct(10.0, None) == pytest.approx(0.5 + 0.1 * (10.0 - 3.5))
    assert estimated_error(fit, 80, 100, 3.0) == pytest.approx(0.0)


def test_the_error_shrinks_with_the_pilots_and_grows_with_the_corrected_share():
    rng = np.random.default_rng(1)
    y = rng.normal(10.0, 1.0, 400)
    x = y + 0.3 + rng.normal(0.0, 0.2, 400)
    few, many = Correction.fit(x[:20], y[:20]), Correction.fit(x, y)
    assert few.mean_error(80, 100) > many.mean_error(80, 100)
    assert few.mean_error(80, 100) == pytest.approx(4 * few.mean_error(20, 100))
    # three standard errors of the mean correction: 0.2 / sqrt(400) * 3 / 10 with all corrected
    assert estimated_error(many, 100, 100, 10.0) == pytest.approx(3 * 0.2 / 20 / 10, rel=0.1)
    assert Correction.fit(x[:2], y[:2]).mean_error(1, 2) == math.inf


def test_a_corrected_run_keeps_its_rank_times_and_scales_its_critical_path():
    summary = RunSummary(2.0, np.ones((2, 4)), np.array([1.0, 0.5, 0.5]), 10, {})
    out = corrected_summary(summary, 0.5)
    assert out.makespan == 2.5
    assert out.rank_times.tolist() == summary.rank_times.tolist()
    assert out.critical_path.tolist() == [1.25, 0.625, 0.625]
    assert out.messages_simulated == 10
