"""Statistics of timed calls that a descheduled call cannot drag off.

A serial region timed on a shared machine is sometimes descheduled for a
whole scheduler slice: one call of 50 us then takes 4 ms.  Means and
standard deviations follow such calls; medians, trimmed means and the
median absolute deviation do not.  :func:`robust_summary` gives both kinds,
and splits off outliers with MPIBench's rule (:mod:`pevpm.stats.outliers`):
anything above ``multiplier`` times the ``percentile``-th percentile.

>>> times = [1.0e-3] * 98 + [1.1e-3, 40e-3]      # one call was descheduled
>>> s = robust_summary(times)
>>> s.outliers, round(s.mean * 1e3, 3), round(s.body_mean * 1e3, 3)
(1, 1.391, 1.001)
>>> round(s.robust_sd * 1e3, 6), s.median
(0.0, 0.001)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from pevpm.errors import PevpmError
from pevpm.stats.outliers import THESIS_TEXT_RULE, split_outliers

#: Scale that turns a median absolute deviation into a normal distribution's sd.
MAD_TO_SD = 1.4826
#: Share cut from each end for the trimmed mean.
TRIM = 0.1


@dataclass(frozen=True)
class RobustSummary:
    """Seconds per call, robust and plain.

    ``median``, ``trimmed_mean`` (10% cut from each end) and ``robust_sd``
    (1.4826 x median absolute deviation) ignore a few descheduled calls;
    ``body_mean`` and ``body_sd`` are the mean and sd after MPIBench's outlier
    rule removed ``outliers`` calls (what a model's ``gamma(mean, sd)``
    should get); ``mean`` and ``sd`` keep every call.

    >>> s = robust_summary([2.0, 2.0, 2.0, 4.0])
    >>> s.median, s.robust_cv, s.to_dict()["calls"]
    (2.0, 0.0, 4)
    """

    calls: int
    median: float
    trimmed_mean: float
    robust_sd: float
    body_mean: float
    body_sd: float
    outliers: int
    mean: float
    sd: float
    min: float
    max: float

    @property
    def robust_cv(self) -> float:
        """Coefficient of variation from the robust figures (0 for a zero median)."""
        return self.robust_sd / self.median if self.median > 0 else 0.0

    def to_dict(self) -> dict:
        """The figures as a plain dict (for JSON)."""
        return asdict(self)


def robust_summary(times, percentile: float = THESIS_TEXT_RULE[0],
                   multiplier: float = THESIS_TEXT_RULE[1]) -> RobustSummary:
    """Summarise per-call ``times`` (seconds); at least one finite, non-negative time."""
    values = np.asarray(times, dtype=float)
    if values.size == 0:
        raise PevpmError("no timed calls to summarise")
    if not np.all(np.isfinite(values)) or np.any(values < 0):
        raise PevpmError("call times must be finite and non-negative")
    median = float(np.median(values))
    ordered = np.sort(values)
    cut = int(TRIM * values.size)
    trimmed = ordered[cut:values.size - cut] if values.size > 2 * cut else ordered
    split = split_outliers(values, percentile, multiplier)
    body = values[~split.is_outlier]
    return RobustSummary(
        calls=int(values.size), median=median, trimmed_mean=float(trimmed.mean()),
        robust_sd=float(MAD_TO_SD * np.median(np.abs(values - median))),
        body_mean=float(body.mean()), body_sd=float(body.std()), outliers=split.count,
        mean=float(values.mean()), sd=float(values.std()),
        min=float(values.min()), max=float(values.max()))
