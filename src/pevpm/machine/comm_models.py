"""Communication models: how long one message takes.

All follow :class:`pevpm.machine.transfer.CommModel`:

* :class:`Constant` - every message takes ``latency``;
* :class:`Hockney` - ``T = l + b / W`` (latency ``l``, ``b`` bytes, bandwidth
  ``W`` bytes/s), optionally sharing the bandwidth among contending messages;
* :class:`LogGP` - ``T = o + (b - 1) G + L + o`` (send overhead, gap per byte,
  latency, receive overhead); a non-blocking send returns after ``max(o, g)``;
* :class:`PerSizeDistribution` - a random time drawn from a distribution per
  message size (any object with scipy-like ``rvs(random_state=rng)``),
  interpolated linearly between the sizes given.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> t = Transfer("MPI_Send", size=1001, src=0, dst=1, intra_node=False, contention=1)
>>> Hockney(latency=1e-5, bandwidth=1e8).transfer_time(t, rng)
2.001e-05
>>> round(LogGP(L=5e-6, o=1e-6, g=2e-6, G=1e-9).transfer_time(t, rng), 12)
8e-06
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from pevpm.errors import ModelError
from pevpm.machine.transfer import Bound, Transfer


@dataclass(frozen=True)
class Constant:
    """Every message takes ``latency`` seconds; a non-blocking send returns after ``local``.

    >>> t = Transfer("MPI_Send", size=10**6, src=0, dst=1, intra_node=False, contention=4)
    >>> Constant(latency=5e-5, local=1e-6).transfer_time(t, None)
    5e-05
    """

    latency: float
    local: float = 0.0

    def transfer_time(self, transfer: Transfer, rng: np.random.Generator) -> float:
        """Seconds from the start of the send to the end of the receive."""
        return self.latency

    def local_completion_time(self, transfer: Transfer, rng: np.random.Generator) -> float:
        """Seconds until a non-blocking send returns."""
        return self.local

    def bounded(self, which: Bound) -> Constant:
        """The model itself: it is deterministic already."""
        return self


@dataclass(frozen=True)
class Hockney:
    """``T = latency + size / bandwidth`` (seconds, bytes/s).

    ``intra_latency``/``intra_bandwidth`` apply inside a node when given.  With
    ``share_bandwidth`` a message at contention level c gets ``bandwidth / c``.
    ``local`` is the time a non-blocking send takes to return.
    """

    latency: float
    bandwidth: float
    intra_latency: float | None = None
    intra_bandwidth: float | None = None
    share_bandwidth: bool = False
    local: float = 0.0

    def transfer_time(self, transfer: Transfer, rng: np.random.Generator) -> float:
        """Seconds from the start of the send to the end of the receive."""
        latency, bandwidth = self.latency, self.bandwidth
        if transfer.intra_node:
            if self.intra_latency is not None:
                latency = self.intra_latency
            if self.intra_bandwidth is not None:
                bandwidth = self.intra_bandwidth
        if self.share_bandwidth:
            bandwidth /= transfer.contention
        return latency + transfer.size / bandwidth

    def local_completion_time(self, transfer: Transfer, rng: np.random.Generator) -> float:
        """Seconds until a non-blocking send returns."""
        return self.local

    def bounded(self, which: Bound) -> Hockney:
        """The model itself: it is deterministic already."""
        return self


@dataclass(frozen=True)
class LogGP:
    """The LogGP model: latency ``L``, overhead ``o``, gap ``g`` between messages,
    gap per byte ``G`` (all seconds).  A ``b``-byte message takes
    ``o + (b - 1) G + L + o`` from send start to receive completion; a
    non-blocking send returns after ``max(o, g)``, when the next one may start."""

    L: float
    o: float
    g: float
    G: float

    def transfer_time(self, transfer: Transfer, rng: np.random.Generator) -> float:
        """Seconds from the start of the send to the end of the receive."""
        return 2 * self.o + self.L + max(transfer.size - 1, 0) * self.G

    def local_completion_time(self, transfer: Transfer, rng: np.random.Generator) -> float:
        """Seconds until a non-blocking send returns."""
        return max(self.o, self.g)

    def bounded(self, which: Bound) -> LogGP:
        """The model itself: it is deterministic already."""
        return self


class PointMass:
    """A distribution that always gives ``value`` (what a bounded model samples).

    >>> PointMass(2.5).rvs(random_state=None), PointMass(2.5).ppf(0.99)
    (2.5, 2.5)
    """

    def __init__(self, value: float):
        self.value = float(value)

    def rvs(self, size=None, random_state=None) -> float:
        """A draw: always ``value``."""
        return self.value

    def ppf(self, q) -> float:
        """Any quantile: ``value``."""
        return self.value

    def __repr__(self) -> str:
        return f"PointMass({self.value!r})"


class PerSizeDistribution:
    """Message time drawn from a distribution chosen by message size.

    ``distributions`` maps sizes in bytes to objects with scipy-like
    ``rvs(random_state=rng)``.  Between two sizes the time is interpolated
    linearly between a draw from each; beyond the largest it is extrapolated
    from the two largest (never below 0), below the smallest the smallest's
    draw is used.  ``local`` (seconds, or a distribution) is the time a
    non-blocking send takes to return.  ``bounded`` replaces every
    distribution by its minimum or maximum (``ppf(0)``/``ppf(1)``; for an
    unbounded tail, the ``tail_quantile`` quantile).

    >>> from scipy import stats
    >>> model = PerSizeDistribution({0: PointMass(1.0), 100: PointMass(3.0)})
    >>> t = Transfer("MPI_Send", 50, 0, 1, False, 1)
    >>> model.transfer_time(t, np.random.default_rng(0))
    2.0
    >>> wide = PerSizeDistribution({8: stats.uniform(1.0, 2.0)})
    >>> wide.bounded("max").transfer_time(t, None)
    3.0
    """

    def __init__(self, distributions: Mapping[int, Any], local: Any = 0.0,
                 tail_quantile: float = 1e-3):
        if not distributions:
            raise ModelError("a per-size distribution model needs at least one size")
        for size, dist in distributions.items():
            if size < 0 or not hasattr(dist, "rvs"):
                raise ModelError(f"size {size!r} needs a size >= 0 and an object with rvs(), "
                                 f"got {dist!r}")
        self.sizes = sorted(int(s) for s in distributions)
        self.distributions = [distributions[s] for s in self.sizes]
        self.local = local
        self.tail_quantile = tail_quantile

    def transfer_time(self, transfer: Transfer, rng: np.random.Generator) -> float:
        """Seconds from the start of the send to the end of the receive."""
        sizes, dists, size = self.sizes, self.distributions, transfer.size
        if len(sizes) == 1 or size <= sizes[0]:
            return _draw(dists[0], rng)
        i = min(bisect.bisect_left(sizes, size), len(sizes) - 1)
        lo, hi = sizes[i - 1], sizes[i]
        a, b = _draw(dists[i - 1], rng), _draw(dists[i], rng)
        return max(a + (b - a) * (size - lo) / (hi - lo), 0.0)

    def local_completion_time(self, transfer: Transfer, rng: np.random.Generator) -> float:
        """Seconds until a non-blocking send returns."""
        return _draw(self.local, rng) if hasattr(self.local, "rvs") else float(self.local)

    def bounded(self, which: Bound) -> PerSizeDistribution:
        """Every distribution at its minimum (``"min"``) or maximum (``"max"``)."""
        q = 0.0 if which == "min" else 1.0
        def bound(dist):
            if not hasattr(dist, "ppf"):
                raise ModelError(f"bounding needs distributions with ppf(); {dist!r} has none")
            value = float(dist.ppf(q))
            if not math.isfinite(value):
                value = float(dist.ppf(self.tail_quantile if q == 0.0 else 1 - self.tail_quantile))
            return PointMass(value)
        local = bound(self.local) if hasattr(self.local, "rvs") else self.local
        return PerSizeDistribution({s: bound(d) for s, d in zip(self.sizes, self.distributions)},
                                   local, self.tail_quantile)


def _draw(dist, rng) -> float:
    return float(dist.rvs(random_state=rng))
