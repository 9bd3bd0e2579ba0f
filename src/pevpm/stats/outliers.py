"""Split measured times into the systematic body and the outliers.

MPIBench's rule (thesis sec. 4.3.4): sort the times, take the value at the
``percentile``-th percentile and call everything above ``multiplier`` times
that value an outlier.  The thesis text uses 99 and 10; its appendix B
(``MPIBENCH_OUTLIER_PERCENTILE=0.99``, ``..._MULTIPLIER=5``) uses 99 and 5.
Percentiles here are always given in percent (0.99 in appendix B is 99).

The rule fails when more than ``100 - percentile`` percent of the samples are
outliers: the percentile then lands among them and nothing is flagged.

>>> import numpy as np
>>> times = np.r_[np.full(999, 1e-5), 2e-1]
>>> split = split_outliers(times, percentile=99, multiplier=10)
>>> split.threshold, int(split.is_outlier.sum())
(0.0001, 1)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pevpm.errors import PevpmError

THESIS_TEXT_RULE = (99.0, 10.0)
THESIS_APPENDIX_RULE = (99.0, 5.0)


@dataclass(frozen=True)
class OutlierSplit:
    """Result of :func:`split_outliers`: the boundary and a mask over the input."""

    threshold: float
    is_outlier: np.ndarray

    @property
    def count(self) -> int:
        return int(self.is_outlier.sum())


def split_outliers(times, percentile: float = 99.0, multiplier: float = 10.0) -> OutlierSplit:
    """Flag times above ``multiplier`` x the ``percentile``-th percentile."""
    if not 0.0 < percentile <= 100.0:
        raise PevpmError(f"outlier percentile {percentile} must be in (0, 100] percent")
    if multiplier < 1.0:
        raise PevpmError(f"outlier multiplier {multiplier} must be at least 1")
    values = np.asarray(times, dtype=float)
    if values.size == 0:
        return OutlierSplit(float("inf"), np.zeros(0, dtype=bool))
    threshold = float(np.percentile(values, percentile, method="inverted_cdf")) * multiplier
    if threshold <= 0.0:
        threshold = float("inf")
    return OutlierSplit(threshold, values > threshold)
