"""Max-min fair sharing of network links, re-rated whenever a flow starts or ends.

SimGrid's fluid model (its LMM solver): at every instant the flows in
transit share each link's bandwidth max-min fairly -- progressive filling:
all rates rise together until a link is full; the flows crossing it keep
that rate, the rest rise on -- and the rates are computed again each time
a flow starts or ends, so a flow that starts slows down the flows already
on its links, and a flow that ends speeds them up.

The network runs in time order and never ahead of the settled time: the
engine says how far time is settled with :meth:`MaxMinNetwork.advance` (no
flow will start before it any more), adds flows from there on, and runs the
network one start or end at a time (:meth:`MaxMinNetwork.step`) up to its
next decision.  A flow's end is final once it has ended; before, the
network says when it would end at the rates now (``docs/engine.md``,
"Networks beyond one switch").

>>> net = MaxMinNetwork([100.0, 50.0])
>>> a = net.add((0,), start=0.0, size=100)
>>> b = net.add((0, 1), start=0.0, size=50)
>>> net.step(), net.end(a), net.end(b)        # 50 B/s each on link 0
([], 2.0, 1.0)
>>> c = net.add((1,), start=0.5, size=10)     # c halves b's 50 B/s from 0.5 s
>>> net.step(), net.now, net.end(a), net.end(b), net.end(c)
([], 0.5, 1.5, 1.5, 0.9)
>>> [net.step() for _ in range(3)], net.end(a), net.end(b), net.end(c)
([[2], [1], [0]], 1.5, 1.2, 0.9)
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from pevpm.errors import SimulationError
from pevpm.vm.kernel.flows import checked_bandwidth


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

    Every flow's rate is computed again over the whole network at every
    start and end (``fastflows.FluidNetwork`` re-rates only what changed).
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
        self._at = 0.0                       # the last start or end run
        self._left: dict[int, float] = {}    # flows in transit -> bytes left at ``_at``
        self._rates: dict[int, float] | None = {}   # None: to be computed
        self._pending: list[tuple[float, int]] = []  # heap (start, flow)
        self._ends: dict[int, float] = {}

    def add(self, route: Sequence[int], start: float, size: int) -> int:
        """A flow of ``size`` bytes over the links ``route`` from ``start`` (at
        least the settled time); its number.  Links of infinite bandwidth
        never limit it."""
        flow = len(self.routes)
        self.weights.append(self._weight(route))
        route = tuple(link for link in route if self.bandwidth[link] != float("inf"))
        self.routes.append(route)
        start = max(start, self.now)
        self.starts.append(start)
        self._sizes.append(float(size) if size > 0 and route else 0.0)
        if not self._sizes[flow]:
            self._ends[flow] = start
        else:
            heapq.heappush(self._pending, (start, flow))
        return flow

    def advance(self, to: float) -> None:
        """Settle time up to ``to``: no flow will be added that starts earlier."""
        self.now = max(self.now, to)

    def next_event(self) -> float:
        """When the next flow starts or ends at the rates now (inf: none)."""
        event = self._pending[0][0] if self._pending else float("inf")
        for flow, rate in self._current_rates().items():
            if rate > 0:
                event = min(event, self._at + self._left[flow] / rate)
        return event

    def step(self) -> list[int]:
        """Run to the next start or end (settling its time); the flows that ended there."""
        left = self._left
        event, finished = flow_until_next(self._current_rates(), left, self._at,
                                          self._pending[0][0] if self._pending
                                          else float("inf"))
        if event == float("inf"):
            if left:
                raise SimulationError(f"flows {sorted(left)} get no bandwidth")
            return []
        self._at = event
        self.now = max(self.now, event)
        for flow in finished:
            del left[flow]
            self._ends[flow] = event
        while self._pending and self._pending[0][0] <= event:
            flow = heapq.heappop(self._pending)[1]
            left[flow] = self._sizes[flow]
        self._rates = None
        return finished

    def ended(self, flow: int) -> bool:
        """Whether ``flow`` has ended (its end is then final)."""
        return flow in self._ends

    def end(self, flow: int) -> float:
        """``flow``'s end once it has ended; before, when it would end at the
        rates now (not started: alone on its links, the soonest it can)."""
        if flow in self._ends:
            return self._ends[flow]
        if flow in self._left:
            rate = self._current_rates()[flow]
            if not rate > 0:
                raise SimulationError(f"flow {flow} gets no bandwidth")
            return self._at + self._left[flow] / rate
        least = min(self.bandwidth[link] for link in self.routes[flow])
        return self.starts[flow] + self._sizes[flow] / least

    def load(self, link: int, at: float) -> float:
        """How much ``link`` limits a flow (for ``--explain``): the inverse of
        its bandwidth, so a message's waiting is charged to the slowest link
        of its route (max-min keeps no history of the rates)."""
        return 1.0 / self.bandwidth[link]

    def _current_rates(self) -> dict[int, float]:
        if self._rates is None:
            self._rates = max_min_rates(self.bandwidth, self.routes, self._left, self.weights)
        return self._rates

    def _weight(self, route: Sequence[int]) -> float:
        """1, or (with ``weight_s``) 1 / (the route's latency + weight_s / bandwidth
        of each link); 1 where that sum is 0."""
        if self.weight_s is None:
            return 1.0
        penalty = 0.0
        for link in route:
            penalty += self.latency[link] + self.weight_s / self.bandwidth[link]
        return 1.0 / penalty if penalty > 0 else 1.0


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
