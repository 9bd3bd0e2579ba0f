"""Extrapolation corrected by runs simulated whole (two-phase sampling).

When a long loop's runs do not settle (on a noisy machine at 1,024 ranks the
ranks' spread keeps growing for hundreds of iterations), extrapolating each
run at the mean pace misses the growth still to come.  Instead of simulating
every run whole, the first runs (the pilots) are simulated both ways: cut
after ``K`` iterations and extrapolated (``y``), and whole (``x``).  The
rest are only cut and extrapolated; each gets the pilots' correction
``x - y`` as a regression on ``y`` (so a run that was late at ``K`` keeps
its share of the growth) plus a residual drawn from the pilots' own (so the
spread of run times is kept).  This is the regression estimator of
double sampling: its mean is unbiased for the whole-run mean, with a
standard error the pilots measure.

>>> c = Correction.fit(np.array([10.5, 11.6, 12.4]), np.array([10.0, 11.0, 12.0]))
>>> round(c.intercept, 3), round(c.slope, 3)
(0.5, -0.05)
>>> round(c.correct(11.0, None), 3)     # the expected correction at the pilots' mean y
0.5
>>> round(c.correct(12.0, 2), 3)        # pilot 2's y with its own residual: its own x - y
0.4
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pevpm.vm.strategies.prediction import RunSummary
from pevpm.vm.strategies.steady import NOISE_SE


@dataclass(frozen=True)
class Correction:
    """``x - y`` of the pilots as ``intercept + slope (y - mean_y)`` plus residuals."""

    intercept: float
    slope: float
    mean_y: float
    residuals: np.ndarray

    @classmethod
    def fit(cls, whole: np.ndarray, extrapolated: np.ndarray) -> Correction:
        """Least squares of the pilots' corrections on their extrapolated times."""
        d = whole - extrapolated
        mean_y = float(extrapolated.mean())
        centred = extrapolated - mean_y
        spread = float(centred @ centred)
        slope = float(centred @ (d - d.mean()) / spread) if spread > 0 else 0.0
        intercept = float(d.mean())
        return cls(intercept, slope, mean_y, d - intercept - slope * centred)

    def correct(self, y: float, residual: int | None) -> float:
        """The correction for a run extrapolated to ``y``, with pilot residual
        number ``residual`` (None: none, the expected correction)."""
        extra = 0.0 if residual is None else float(self.residuals[residual])
        return self.intercept + self.slope * (y - self.mean_y) + extra

    def mean_error(self, rest: int, runs: int) -> float:
        """Standard error (seconds) the fit adds to the mean of ``runs`` run
        times of which ``rest`` are corrected ones."""
        n = self.residuals.size
        if n < 3:
            return math.inf
        sd = float(np.std(self.residuals, ddof=2))
        return sd / math.sqrt(n) * rest / runs


def corrected_summary(summary: RunSummary, correction: float) -> RunSummary:
    """An extrapolated run's summary with ``correction`` seconds added to its
    run time (and to the critical path in proportion); per-rank times stay
    the extrapolated ones."""
    makespan = summary.makespan + correction
    scale = makespan / summary.makespan if summary.makespan > 0 else 1.0
    return RunSummary(makespan, summary.rank_times, summary.critical_path * scale,
                      summary.messages_simulated, summary.collectives, summary.outstanding,
                      summary.engine_note)


def estimated_error(correction: Correction, rest: int, runs: int, mean: float) -> float:
    """Relative error of the corrected mean: :data:`~pevpm.vm.strategies.steady.NOISE_SE`
    standard errors of the fit over the mean run time."""
    if mean <= 0:
        return 0.0
    return NOISE_SE * correction.mean_error(rest, runs) / mean
