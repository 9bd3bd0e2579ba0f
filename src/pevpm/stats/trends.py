"""Pearson V parameters across message size and contention.

The thesis (sec. 4.7, further work 2) asks for the location, shape and scale
of Pearson V fits plotted against message size and the number of contending
processes, and for a way to predict them.  :class:`PearsonVTrend` fits three
smooth models to per-(size, contention) fits:

* location ``g(s) = latency + s / bandwidth`` (the contention-free linear
  model ``T = l + b/W``; the location tracks the minimum latency), fitted by
  non-negative least squares;
* shape ``ln a = a0 + a1 ln c + a2 ln(1 + s/n)`` (more contention or larger
  messages give a smaller shape, i.e. a heavier tail: expect a1, a2 < 0);
* scale ``ln b = b0 + b1 ln c + b2 ln(1 + s/n)``,

where ``n = latency * bandwidth`` is Hockney's half-performance length, so
``1 + s/n`` is the contention-free time relative to the latency: with
``b2 = 1`` the scale grows in proportion to the location.

A coefficient whose variable was never varied (one size, or one contention
level) is fixed at zero.  :meth:`PearsonVTrend.at` answers for any size and
contention and flags answers outside the benchmarked ranges.

>>> from pevpm.stats.distributions import PearsonV
>>> points = [TrendPoint(s, c, PearsonV(5.0 / c**0.3, 2e-6 + s * 1e-10, 5e-6 + s * 1e-9))
...           for s in (0, 1024, 65536) for c in (2, 4, 8)]
>>> trend = PearsonVTrend.fit(points)
>>> round(trend.latency * 1e6, 3), round(trend.bandwidth / 1e9, 3)
(5.0, 1.0)
>>> answer = trend.at(size=1 << 20, contention=4)
>>> answer.extrapolated, answer.notes
(True, ('size 1048576 above the largest benchmarked size 65536',))
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from pevpm.errors import ModelError
from pevpm.stats.distributions import PearsonV


@dataclass(frozen=True)
class TrendPoint:
    """A Pearson V fit for one message size (bytes) and contention level."""

    size: int
    contention: int
    distribution: PearsonV


@dataclass(frozen=True)
class TrendAnswer:
    """The Pearson V predicted at one (size, contention), with any extrapolation."""

    distribution: PearsonV
    extrapolated: bool
    notes: tuple[str, ...]


def _features(sizes, contentions, half_length: float, use_contention: bool, use_size: bool):
    sizes = np.asarray(sizes, dtype=float)
    contentions = np.asarray(contentions, dtype=float)
    columns = [np.ones_like(sizes)]
    columns.append(np.log(contentions) if use_contention else np.zeros_like(sizes))
    columns.append(np.log1p(sizes / half_length) if use_size else np.zeros_like(sizes))
    return np.column_stack(columns)


def _half_length(latency: float, per_byte: float) -> float:
    if per_byte <= 0:
        return math.inf
    return max(latency / per_byte, 1.0)


@dataclass(frozen=True)
class PearsonVTrend:
    """Smooth models of Pearson V location, shape and scale (see module doc).

    Times are in whatever unit the fits used (seconds in a profile); sizes in
    bytes; ``bandwidth`` in bytes per time unit (``inf`` if the location does
    not grow with size).
    """

    latency: float
    bandwidth: float
    shape_coefficients: tuple[float, float, float]
    scale_coefficients: tuple[float, float, float]
    size_range: tuple[int, int]
    contention_range: tuple[int, int]

    @classmethod
    def fit(cls, points: Sequence[TrendPoint]) -> PearsonVTrend:
        """Fit the three models to at least one point."""
        if not points:
            raise ModelError("cannot fit Pearson V trends to no fits")
        sizes = np.array([p.size for p in points], dtype=float)
        contentions = np.array([p.contention for p in points], dtype=float)
        if np.any(sizes < 0) or np.any(contentions < 1):
            raise ModelError("trend points need sizes >= 0 and contention >= 1")
        locs = np.array([p.distribution.loc for p in points])
        # location = latency + size / bandwidth, both terms non-negative
        (latency, per_byte), _ = optimize.nnls(np.column_stack([np.ones_like(sizes), sizes]), locs)
        use_c = bool(np.ptp(contentions) > 0)
        use_s = bool(np.ptp(sizes) > 0)
        half_length = _half_length(latency, per_byte)
        design = _features(sizes, contentions, half_length, use_c, use_s)
        shapes = np.log([p.distribution.shape for p in points])
        scales = np.log([p.distribution.scale for p in points])
        shape_coef = np.linalg.lstsq(design, shapes, rcond=None)[0]
        scale_coef = np.linalg.lstsq(design, scales, rcond=None)[0]
        return cls(
            latency=float(latency),
            bandwidth=math.inf if per_byte <= 0 else float(1.0 / per_byte),
            shape_coefficients=tuple(float(v) for v in shape_coef),
            scale_coefficients=tuple(float(v) for v in scale_coef),
            size_range=(int(sizes.min()), int(sizes.max())),
            contention_range=(int(contentions.min()), int(contentions.max())),
        )

    @property
    def half_length(self) -> float:
        """Hockney's n_1/2 = latency * bandwidth (bytes), at least one byte."""
        return _half_length(self.latency, 1.0 / self.bandwidth)

    def location(self, size) -> np.ndarray | float:
        return self.latency + np.asarray(size, dtype=float) / self.bandwidth

    def shape(self, size, contention) -> np.ndarray | float:
        return self._power_law(self.shape_coefficients, size, contention)

    def scale(self, size, contention) -> np.ndarray | float:
        return self._power_law(self.scale_coefficients, size, contention)

    def _power_law(self, coefficients, size, contention):
        c0, c_contention, c_size = coefficients
        contention = np.asarray(contention, dtype=float)
        relative_size = np.asarray(size, dtype=float) / self.half_length
        return np.exp(c0 + c_contention * np.log(contention) + c_size * np.log1p(relative_size))[()]

    def extrapolation_notes(self, size: int, contention: int) -> tuple[str, ...]:
        """Why (size, contention) lies outside the benchmarked ranges, if it does."""
        notes = []
        low, high = self.size_range
        if size < low:
            notes.append(f"size {size} below the smallest benchmarked size {low}")
        elif size > high:
            notes.append(f"size {size} above the largest benchmarked size {high}")
        low, high = self.contention_range
        if contention < low:
            notes.append(f"contention {contention} below the lowest benchmarked {low}")
        elif contention > high:
            notes.append(f"contention {contention} above the highest benchmarked {high}")
        return tuple(notes)

    def at(self, size: int, contention: int) -> TrendAnswer:
        """The Pearson V for a message of ``size`` bytes under ``contention``."""
        if size < 0 or contention < 1:
            raise ModelError(
                f"trend query needs size >= 0 and contention >= 1, got {size}, {contention}"
            )
        distribution = PearsonV(
            shape=float(self.shape(size, contention)),
            scale=float(self.scale(size, contention)),
            loc=float(self.location(size)),
        )
        notes = self.extrapolation_notes(size, contention)
        return TrendAnswer(distribution, bool(notes), notes)
