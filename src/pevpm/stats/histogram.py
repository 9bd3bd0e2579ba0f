"""Histograms of measured times, with fixed or automatic bin widths.

Appendix B of the thesis bins with a fixed width (``MPIBENCH_HIST_BIN``,
0.05 ms); section 4.5.1 scales the bin with the spread of the data.  The
automatic width here is ``(p99 - min) / target_bins`` so the body of the
distribution always gets about ``target_bins`` bins whatever the network.

>>> import numpy as np
>>> h = Histogram.of(np.array([1.0, 1.5, 2.5]), bin_width=1.0)
>>> h.edges.tolist(), h.counts.tolist()
([1.0, 2.0, 3.0], [2, 1])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

THESIS_BIN_WIDTH = 0.05e-3
AUTO_TARGET_BINS = 100
MAX_BINS = 100_000


@dataclass(frozen=True)
class Histogram:
    """Counts of times in ``[edges[i], edges[i+1])`` (seconds)."""

    edges: np.ndarray
    counts: np.ndarray

    @property
    def bin_width(self) -> float:
        return float(self.edges[1] - self.edges[0]) if self.edges.size > 1 else 0.0

    @property
    def total(self) -> int:
        return int(self.counts.sum())

    @classmethod
    def of(cls, times, bin_width: float | None = None) -> Histogram:
        """Bin ``times``; ``bin_width=None`` picks the automatic width."""
        values = np.asarray(times, dtype=float)
        if values.size == 0:
            return cls(np.zeros(1), np.zeros(0, dtype=np.int64))
        low, high = float(values.min()), float(values.max())
        width = bin_width if bin_width else automatic_bin_width(values)
        nbins = max(1, int(np.floor((high - low) / width)) + 1)
        if nbins > MAX_BINS:
            width = (high - low) / (MAX_BINS - 1)
            nbins = MAX_BINS
        edges = low + width * np.arange(nbins + 1)
        index = np.minimum(((values - low) / width).astype(np.int64), nbins - 1)
        counts = np.bincount(index, minlength=nbins).astype(np.int64)
        return cls(edges, counts)


def automatic_bin_width(values, target_bins: int = AUTO_TARGET_BINS) -> float:
    """Bin width giving about ``target_bins`` bins between the minimum and the 99th percentile."""
    values = np.asarray(values, dtype=float)
    spread = float(np.percentile(values, 99)) - float(values.min())
    if spread <= 0.0:
        spread = max(abs(float(values.min())), 1e-9)
    return spread / target_bins
