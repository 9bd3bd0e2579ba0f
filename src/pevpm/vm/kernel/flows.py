"""Flow-level sharing of network links (SimGrid's fluid model, reserved in match order).

A synthetic network (a placement with per-link bandwidths) moves a message's
bytes as a *flow* at a rate: at every instant a flow gets what its route's
links have left, the least over its links of a link's bandwidth less the
rates of the flows already on it.  Each link keeps the total rate of its
flows as a step function of time (breakpoints and the rate from each one on;
zero after the last), so a flow's completion is found by walking the
breakpoints of its links from its start: between two breakpoints its rate is
constant, and it ends when its bytes are through.  Its own rate profile is
then added to every link it crosses, and the breakpoints there that no
longer change the rate are dropped (a saturated stretch becomes one
segment, crossed in one step).  Nothing is ever subtracted: a segment's
rate is the sum of the flows on it, and after the last breakpoint it is
exactly zero.

What this is and is not (``docs/engine.md``, "Networks beyond one switch"): the
virtual machine fixes a message's time when it is first drawn, so a flow
cannot slow down the flows drawn before it.  A new flow takes the bandwidth
they leave and speeds up as they end -- re-rated when flows end, not when
they start.  The links stay work-conserving (a link runs at its full
bandwidth whenever a flow on it is not held back by another link), so the
time a link
is busy and the last completion of a set of flows that start together are
those of max-min sharing; the order in which the flows finish is the order
they were drawn instead of all together (n equal flows on one link: k-th at
``k S / B`` instead of all at ``n S / B``).

A link keeps every breakpoint of the run here: the engines draw messages
out of time order (a send posted early may be drawn after later ones), and
a flow must see every reservation it overlaps.  (The compiled core, to
bound its memory on long runs, drops a link's breakpoints before the
earliest time a flow can still start -- the least clock of a running rank
and post of a send not drawn yet -- which changes no result.)  The
compiled core has the same walk in C, with the same arithmetic in the same
order, so both engines agree to the bit.

>>> net = FlowNetwork(bandwidth=[100.0, 50.0])
>>> net.occupy((0,), start=0.0, size=100)       # alone on link 0: 100 B at 100 B/s
1.0
>>> net.occupy((0, 1), start=0.0, size=50)      # waits for link 0, then 50 B/s
2.0
>>> net.occupy((1,), start=0.0, size=50)        # link 1 is free until the second starts
1.0
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from pevpm.errors import SimulationError


class FlowNetwork:
    """The links of a synthetic network and the flows reserved on them."""

    def __init__(self, bandwidth: Sequence[float]):
        self.bandwidth = checked_bandwidth(bandwidth)
        self._times: list[list[float]] = [[] for _ in self.bandwidth]
        self._rates: list[list[float]] = [[] for _ in self.bandwidth]

    def occupy(self, route: Sequence[int], start: float, size: int) -> float:
        """Seconds a flow of ``size`` bytes starting at ``start`` takes on the
        links ``route``, given the flows reserved before it; reserves it."""
        if size <= 0 or not route:
            return 0.0
        at = [bisect.bisect_right(self._times[k], start) - 1 for k in route]
        segments: list[tuple[float, float, float]] = []
        t, left = start, float(size)
        while True:
            rate, until = _free(self, route, at)
            if rate > 0.0:
                if until == float("inf") or left <= rate * (until - t):
                    end = t + left / rate
                    segments.append((t, end, rate))
                    break
                left -= rate * (until - t)
                segments.append((t, until, rate))
            t = until
            for j, link in enumerate(route):
                times = self._times[link]
                if at[j] + 1 < len(times) and times[at[j] + 1] == t:
                    at[j] += 1
        for link in route:
            self._reserve(link, segments)
        return end - start

    def used(self, link: int, at: float) -> float:
        """Bytes/s of ``link`` taken by the reserved flows at time ``at``."""
        i = bisect.bisect_right(self._times[link], at) - 1
        return self._rates[link][i] if i >= 0 else 0.0

    def load(self, link: int, at: float) -> float:
        """How full ``link`` is at time ``at``: the share of its bandwidth reserved."""
        return self.used(link, at) / self.bandwidth[link]

    def _reserve(self, link: int, segments: list[tuple[float, float, float]]) -> None:
        """Add each segment's rate to ``link`` over the segment's span, then
        drop the breakpoints there that no longer change the rate."""
        times, rates = self._times[link], self._rates[link]
        low = -1
        for a, b, rate in segments:
            i = _split(times, rates, a)
            if low < 0:
                low = i
            _split(times, rates, b)
            while i < len(times) and times[i] < b:
                rates[i] += rate
                i += 1
        _merge(times, rates, low, i + 1)


def checked_bandwidth(bandwidth: Sequence[float]) -> list[float]:
    """The links' bandwidths as floats, each > 0 (``inf``: never a bottleneck).

    >>> checked_bandwidth([1, float("inf")])
    [1.0, inf]
    """
    checked = [float(b) for b in bandwidth]
    for link, value in enumerate(checked):
        if not value > 0:
            raise SimulationError(f"link {link} has bandwidth {value!r}: a flow needs "
                                  "bytes/s > 0 on every link")
    return checked


def _free(net: FlowNetwork, route: Sequence[int], at: list[int]) -> tuple[float, float]:
    """The rate the route's links leave at the walk's position ``at`` (the
    segment index per link, -1: before its first breakpoint) and the next
    breakpoint among them."""
    rate, until = float("inf"), float("inf")
    for j, link in enumerate(route):
        times, i = net._times[link], at[j]
        free = net.bandwidth[link] - (net._rates[link][i] if i >= 0 else 0.0)
        rate = min(rate, free)
        if i + 1 < len(times) and times[i + 1] < until:
            until = times[i + 1]
    return rate, until


def _merge(times: list[float], rates: list[float], low: int, high: int) -> None:
    """Drop the breakpoints ``low .. high - 1`` whose rate is the one before
    theirs (0 before the first): a saturated stretch becomes one segment,
    which a flow queued behind it crosses in one step."""
    high = min(high, len(times))
    before = rates[low - 1] if low > 0 else 0.0
    kept_times, kept_rates = [], []
    for i in range(low, high):
        if rates[i] != before:
            kept_times.append(times[i])
            kept_rates.append(rates[i])
            before = rates[i]
    times[low:high] = kept_times
    rates[low:high] = kept_rates


def _split(times: list[float], rates: list[float], x: float) -> int:
    """Make ``x`` a breakpoint (keeping the rate there); its index."""
    i = bisect.bisect_right(times, x) - 1
    if i >= 0 and times[i] == x:
        return i
    times.insert(i + 1, x)
    rates.insert(i + 1, rates[i] if i >= 0 else 0.0)
    return i + 1
