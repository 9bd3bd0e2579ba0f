"""Max-min fair sharing of network links, re-rated whenever a flow starts or ends.

SimGrid's fluid model (its LMM solver): at every instant the flows in
transit share each link's bandwidth max-min fairly -- progressive filling:
all rates rise together until a link is full; the flows crossing it keep
that rate, the rest rise on -- and the rates are computed again each time
a flow starts or ends, so a flow that starts slows down the flows already
on its links, and a flow that ends speeds them up.

The engines learn about flows out of time order, so an end time given
here is *provisional*: it holds for the flows known so far.  The engine
tells the network how far time is settled with :meth:`MaxMinNetwork.advance`
(no flow will start before it any more) and asks again, later, for a
message it has not yet delivered; a flow's end is final once nothing
earlier than it can still be added (``docs/engine.md``, "Networks beyond
one switch").

>>> net = MaxMinNetwork([100.0, 50.0])
>>> a = net.add((0,), start=0.0, size=100)
>>> b = net.add((0, 1), start=0.0, size=50)
>>> net.end(a), net.end(b)                     # 50 B/s each on link 0 until b ends
(1.5, 1.0)
>>> c = net.add((1,), start=0.5, size=10)      # c halves b from 0.5 s; a takes the rest
>>> net.end(a), net.end(b), net.end(c)
(1.5, 1.2, 0.9)
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Sequence

from pevpm.errors import SimulationError
from pevpm.vm.kernel.flows import checked_bandwidth


class _Fluid:
    """The flows in transit at ``now`` (bytes left, rates) and those still to
    start; :meth:`step` moves it to the next start or end."""

    __slots__ = ("bandwidth", "left", "now", "pending", "rates", "routes", "weights")

    def __init__(self, bandwidth: list[float], routes: list[tuple[int, ...]],
                 weights: list[float]):
        self.bandwidth, self.routes, self.weights = bandwidth, routes, weights
        self.now = 0.0
        self.left: dict[int, float] = {}      # flow -> bytes left at ``now``
        self.rates: dict[int, float] | None = None   # None: to be computed
        self.pending: list[tuple[float, int, float]] = []   # heap (start, flow, bytes)

    def copy(self) -> _Fluid:
        other = _Fluid(self.bandwidth, self.routes, self.weights)
        other.now, other.left, other.rates = self.now, dict(self.left), self.rates
        other.pending = list(self.pending)
        return other

    def step(self) -> list[int]:
        """Move to the next start or end; the flows that ended there."""
        if self.rates is None:
            self.rates = max_min_rates(self.bandwidth, self.routes, self.left, self.weights)
        left = self.left
        event, finished = flow_until_next(self.rates, left, self.now,
                               self.pending[0][0] if self.pending else float("inf"))
        if event == float("inf"):
            raise SimulationError(f"flows {sorted(left)} get no bandwidth")
        self.now = event
        for flow in finished:
            del left[flow]
        while self.pending and self.pending[0][0] <= event:
            _, flow, size = heapq.heappop(self.pending)
            left[flow] = size
        self.rates = None
        return finished


def flow_until_next(rates: dict[int, float], left: dict[int, float], now: float,
                    start: float) -> tuple[float, list[int]]:
    """The next event -- the first end of a flow at its rate, or ``start`` (the
    next flow to start) if earlier -- and the flows that end there; the bytes
    ``left`` are run on to it (none when no event comes).

    >>> left = {0: 10.0, 1: 30.0}
    >>> flow_until_next({0: 5.0, 1: 5.0}, left, 1.0, float("inf")), left
    ((3.0, [0]), {0: 0.0, 1: 20.0})
    """
    event = start
    for flow, rate in rates.items():
        if rate > 0:
            event = min(event, now + left[flow] / rate)
    if event == float("inf"):
        return event, []
    finished = [flow for flow, rate in rates.items()
                if rate > 0 and now + left[flow] / rate <= event]
    span = event - now
    for flow, rate in rates.items():
        left[flow] -= rate * span
    return event, finished


def max_min_rates(bandwidth: list[float], routes: list[tuple[int, ...]],
                  flows: dict[int, float], weights: list[float]) -> dict[int, float]:
    """Progressive filling: each flow's weighted max-min fair rate (bytes/s):
    on the link that fills first every flow gets its weight times one level,
    the link's spare bandwidth over its flows' total weight (equal weights:
    an equal share).  Fixing them leaves the other links of their routes a
    level no lower than before, so a heap of (level, link) entries, stale
    ones skipped, gives the links in the order they fill."""
    free: dict[int, float] = {}
    users: dict[int, list[int]] = {}
    for flow in flows:
        for link in routes[flow]:
            on = users.get(link)
            if on is None:
                users[link], free[link] = [flow], bandwidth[link]
            else:
                on.append(flow)
    count = {link: len(on) for link, on in users.items()}
    total: dict[int, float] = {}
    for link, on in users.items():
        total[link] = 0.0
        for flow in on:
            total[link] += weights[flow]
    heap = [(free[link] / total[link], link) for link in users]
    heapq.heapify(heap)
    rates: dict[int, float] = {}
    while heap:
        level, link = heapq.heappop(heap)
        if count[link] == 0 or level != free[link] / total[link]:
            continue
        level = max(level, 0.0)
        for flow in users[link]:
            if flow in rates:
                continue
            weight = weights[flow]
            rate = rates[flow] = weight * level
            for other in routes[flow]:
                free[other] -= rate
                total[other] -= weight
                count[other] -= 1
                if other != link and count[other]:
                    heapq.heappush(heap, (free[other] / total[other], other))
    return rates


class MaxMinNetwork:
    """The links of a synthetic network and the flows sharing them max-min fairly.

    With ``weight_s`` (SimGrid's ``network/weight-S``, bytes) a flow's share is
    weighted as SimGrid's CM02 and SMPI network models weigh it: by the
    inverse of its route's latency plus ``weight_s`` over each link's
    bandwidth, so flows over longer routes get less (TCP's round-trip
    unfairness); without, all flows weigh alike.

    The flows known so far are run forward only as far as a question needs
    (:meth:`end`), keeping the state after every start and end; a flow added
    before that frontier rewinds to the last state at or before its start
    (never before the settled time), and the run goes on from there.
    """

    def __init__(self, bandwidth: Sequence[float], latency: Sequence[float] | None = None,
                 weight_s: float | None = None):
        self.bandwidth = checked_bandwidth(bandwidth)
        self.latency = None if latency is None else [float(v) for v in latency]
        self.weight_s = weight_s
        self.routes: list[tuple[int, ...]] = []
        self.weights: list[float] = []
        self.starts: list[float] = []
        self._sizes: list[float] = []        # bytes; 0: ended at its start
        self.now = 0.0                       # settled: no flow starts before it
        self._run = _Fluid(self.bandwidth, self.routes, self.weights)   # the frontier
        self._marks = [self._run.copy()]     # the states after each event, oldest first
        self._times = [0.0]                  # their times
        self._logged = [0]                   # how many ends each had seen
        self._known = [0]                    # how many flows had been added
        self._ends: dict[int, float] = {}
        self._log: list[int] = []            # flows in the order they ended

    def add(self, route: Sequence[int], start: float, size: int) -> int:
        """A flow of ``size`` bytes over the links ``route`` from ``start`` (at
        least the settled time); its number for :meth:`end`.  Links of
        infinite bandwidth never limit it."""
        flow = len(self.routes)
        self.weights.append(self._weight(route))
        route = tuple(link for link in route if self.bandwidth[link] != float("inf"))
        self.routes.append(route)
        start = max(start, self.now)
        self.starts.append(start)
        self._sizes.append(float(size) if size > 0 and route else 0.0)
        if not self._sizes[flow]:
            self._ends[flow] = start
            return flow
        if self._run.now > start:
            self._rewind(start)
        heapq.heappush(self._run.pending, (start, flow, self._sizes[flow]))
        self._run.rates = None
        return flow

    def load(self, link: int, at: float) -> float:
        """How much ``link`` limits a flow (for ``--explain``): the inverse of
        its bandwidth, so a message's waiting is charged to the slowest link
        of its route (max-min keeps no history of the rates)."""
        return 1.0 / self.bandwidth[link]

    def _weight(self, route: Sequence[int]) -> float:
        """1, or (with ``weight_s``) 1 / (the route's latency + weight_s / bandwidth
        of each link); 1 where that sum is 0."""
        if self.weight_s is None:
            return 1.0
        penalty = 0.0
        for link in route:
            penalty += self.latency[link] + self.weight_s / self.bandwidth[link]
        return 1.0 / penalty if penalty > 0 else 1.0

    def end(self, flow: int) -> float:
        """When ``flow`` ends, given the flows added so far."""
        ends = self._ends
        while flow not in ends:
            run = self._run
            for done in run.step():
                ends[done] = run.now
                self._log.append(done)
            self._marks.append(run.copy())
            self._times.append(run.now)
            self._logged.append(len(self._log))
            self._known.append(len(self.routes))
        return ends[flow]

    def advance(self, to: float) -> None:
        """Settle time up to ``to``: no flow will be added that starts earlier."""
        if to <= self.now:
            return
        self.now = to
        keep = bisect.bisect_right(self._times, to) - 1
        if keep > 0:
            del self._marks[:keep], self._times[:keep], self._logged[:keep], self._known[:keep]

    def _rewind(self, to: float) -> None:
        """Go back to the last state at or before ``to``, forgetting the ends
        after it; the flows added since that state start again from there
        (none starts before it)."""
        k = bisect.bisect_right(self._times, to) - 1
        run = self._run = self._marks[k].copy()
        del self._marks[k + 1:], self._times[k + 1:], self._logged[k + 1:]
        while len(self._log) > self._logged[k]:
            del self._ends[self._log.pop()]
        for flow in range(self._known[k], len(self.routes)):
            if self._sizes[flow]:
                heapq.heappush(run.pending, (self.starts[flow], flow, self._sizes[flow]))
        del self._known[k + 1:]


def network_for(machine, placement):
    """The max-min network of a run on ``placement`` (one with link figures)
    when ``machine.flow_sharing`` asks for one, else None: ``"max-min"``
    weighs all flows alike, ``"simgrid"`` as SMPI does
    (:data:`SIMGRID_WEIGHT_S`).  It is the compiled, incremental
    ``fastflows.FluidNetwork`` (both engines take the same one, so they agree
    to the bit); :class:`MaxMinNetwork`, its reference, where that is not built."""
    if placement.link_bandwidth is None or machine.flow_sharing == "reserve":
        return None
    weight_s = SIMGRID_WEIGHT_S if machine.flow_sharing == "simgrid" else None
    return NETWORK(placement.link_bandwidth, placement.link_latency, weight_s)


try:
    from pevpm.vm.kernel.fastflows import FluidNetwork as NETWORK
except ImportError:                     # not compiled: the reference, slower
    NETWORK = MaxMinNetwork

#: SimGrid's ``network/weight-S`` for SMPI's network model (bytes), SimGrid 3.32.
SIMGRID_WEIGHT_S = 8775.0
