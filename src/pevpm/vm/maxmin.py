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

import heapq
from collections.abc import Sequence

from pevpm.errors import SimulationError


class _Fluid:
    """The flows in transit at ``now`` and those still to start; steps to the
    next start or end, recording ends."""

    __slots__ = ("bandwidth", "ends", "left", "now", "pending", "rates", "routes")

    def __init__(self, bandwidth: list[float], routes: list[tuple[int, ...]]):
        self.bandwidth, self.routes = bandwidth, routes
        self.now = 0.0
        self.left: dict[int, float] = {}      # flow -> bytes left at ``now``
        self.rates: dict[int, float] | None = None   # None: to be computed
        self.pending: list[tuple[float, int, float]] = []   # heap (start, flow, bytes)
        self.ends: dict[int, float] = {}

    def copy(self) -> _Fluid:
        other = _Fluid(self.bandwidth, self.routes)
        other.now, other.left, other.rates = self.now, dict(self.left), self.rates
        other.pending, other.ends = list(self.pending), dict(self.ends)
        return other

    def step(self, until: float) -> bool:
        """Move to the next start or end if it is no later than ``until``
        (else to ``until``); False when nothing happens before ``until``."""
        if self.rates is None:
            self.rates = _max_min(self.bandwidth, self.routes, self.left)
        rates, left = self.rates, self.left
        event = self.pending[0][0] if self.pending else float("inf")
        for flow, rate in rates.items():
            if rate > 0:
                event = min(event, self.now + left[flow] / rate)
        if event > until or event == float("inf"):
            self._flow(until)
            return False
        finished = [flow for flow, rate in rates.items()
                    if rate > 0 and self.now + left[flow] / rate <= event]
        self._flow(event)
        for flow in finished:
            del left[flow]
            self.ends[flow] = event
        while self.pending and self.pending[0][0] <= event:
            _, flow, size = heapq.heappop(self.pending)
            left[flow] = size
        self.rates = None
        return True

    def _flow(self, to: float) -> None:
        """Let the flows run at their rates from ``now`` to ``to``."""
        span = to - self.now
        if span > 0:
            for flow, rate in self.rates.items():
                self.left[flow] -= rate * span
            self.now = to


def _max_min(bandwidth: list[float], routes: list[tuple[int, ...]],
             flows: dict[int, float]) -> dict[int, float]:
    """Progressive filling: each flow's max-min fair rate (bytes/s).  The
    link whose equal share is least fills first; its flows keep that share,
    which leaves the other links of their routes an equal share no smaller
    than before, so a heap of (share, link) entries, stale ones skipped,
    gives the links in the order they fill."""
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
    heap = [(free[link] / n, link) for link, n in count.items()]
    heapq.heapify(heap)
    rates: dict[int, float] = {}
    while heap:
        share, link = heapq.heappop(heap)
        n = count[link]
        if n == 0 or share != free[link] / n:
            continue
        share = max(share, 0.0)
        for flow in users[link]:
            if flow in rates:
                continue
            rates[flow] = share
            for other in routes[flow]:
                free[other] -= share
                count[other] -= 1
                if other != link and count[other]:
                    heapq.heappush(heap, (free[other] / count[other], other))
    return rates


class MaxMinNetwork:
    """The links of a synthetic network and the flows sharing them max-min fairly."""

    def __init__(self, bandwidth: Sequence[float]):
        self.bandwidth = [float(b) for b in bandwidth]
        for link, value in enumerate(self.bandwidth):
            if not value > 0:
                raise SimulationError(f"link {link} has bandwidth {value!r}: a flow needs "
                                      "bytes/s > 0 on every link")
        self.routes: list[tuple[int, ...]] = []
        self.starts: list[float] = []
        self._settled = _Fluid(self.bandwidth, self.routes)
        self._guess: _Fluid | None = None     # the settled state run on, for end()

    @property
    def now(self) -> float:
        """The settled time: no flow starts before it."""
        return self._settled.now

    def add(self, route: Sequence[int], start: float, size: int) -> int:
        """A flow of ``size`` bytes over the links ``route`` from ``start`` (at
        least the settled time); its number for :meth:`end`.  Links of
        infinite bandwidth never limit it."""
        flow = len(self.routes)
        route = tuple(link for link in route if self.bandwidth[link] != float("inf"))
        self.routes.append(route)
        start = max(start, self._settled.now)
        self.starts.append(start)
        if size <= 0 or not route:
            self._settled.ends[flow] = start
        else:
            heapq.heappush(self._settled.pending, (start, flow, float(size)))
            self._settled.rates = None
        self._guess = None
        return flow

    def end(self, flow: int) -> float:
        """When ``flow`` ends, given the flows added so far."""
        done = self._settled.ends.get(flow)
        if done is not None:
            return done
        if self._guess is None:
            self._guess = self._settled.copy()
        guess = self._guess
        while flow not in guess.ends:
            if not guess.step(float("inf")):
                raise SimulationError(f"flow {flow} gets no bandwidth on links {self.routes[flow]}")
        return guess.ends[flow]

    def advance(self, to: float) -> None:
        """Settle time up to ``to``: no flow will be added that starts earlier."""
        settled = self._settled
        if to <= settled.now:
            return
        while settled.step(to):
            pass
        if self._guess is not None and self._guess.now < to:
            self._guess = None
