"""A global clock for MPI ranks: Cristian-style synchronisation with linear drift.

Every rank reads a local nanosecond clock (:class:`LocalClock`).  A
synchronisation measures, for each rank, the offset that turns its local
time into rank 0's time:

* ``pairwise`` (thesis sec. 4.3.2): rank 0 exchanges ping-pongs with one rank
  at a time.  The exchange with the smallest round trip so far fixes the
  offset as ``t_send + rtt/2 - t_receive``; the true offset lies within
  ``rtt/2`` of it.  The loop stops after ``resend_limit`` exchanges without a
  new minimum (thesis default 1000).
* ``hierarchical``: the same exchange on a binary tree in ``ceil(log2 p)``
  rounds, pairs of a round running concurrently (in the spirit of Hunold's
  HCA); a rank is synchronised against a parent that already knows its own
  global offset, so errors add up along the path (at most log2 p links).

Synchronising before and after a test block and interpolating the offset
linearly in local time accounts for drift (:class:`GlobalClock`).

>>> from mpi4py import MPI                                   # doctest: +SKIP
>>> clock = GlobalClock(LocalClock())                        # doctest: +SKIP
>>> clock.add(synchronise(MPI.COMM_WORLD, clock.local))      # doctest: +SKIP
>>> clock.to_global(np.array([clock.local.now()]))           # doctest: +SKIP
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from pevpm.errors import BenchmarkError

SYNC_METHODS = ("pairwise", "hierarchical")
THESIS_RESEND_LIMIT = 1000
_TAG = 7301
_IDLE_POLL_S = 50e-6


class LocalClock:
    """This process's monotonic nanosecond clock (``time.perf_counter_ns``)."""

    name = "perf_counter_ns"

    def now(self) -> int:
        return time.perf_counter_ns()

    @property
    def resolution_ns(self) -> float:
        return max(time.get_clock_info("perf_counter").resolution * 1e9, 1.0)


class WtimeClock(LocalClock):
    """``MPI_Wtime`` in nanoseconds, for machines where it is finer than perf_counter."""

    name = "MPI_Wtime"

    def __init__(self, wtime, wtick: float):
        self._wtime = wtime
        self._tick_ns = wtick * 1e9

    def now(self) -> int:
        return int(self._wtime() * 1e9)

    @property
    def resolution_ns(self) -> float:
        return max(self._tick_ns, 1.0)


def pick_clock(wtime, wtick: float) -> LocalClock:
    """The finer of ``perf_counter_ns`` and ``MPI_Wtime`` (ties go to perf_counter_ns).

    >>> pick_clock(lambda: 0.0, 1e-9).name, pick_clock(lambda: 0.0, 1e-12).name
    ('perf_counter_ns', 'MPI_Wtime')
    """
    local = LocalClock()
    return WtimeClock(wtime, wtick) if wtick * 1e9 < local.resolution_ns else local


class SkewedClock(LocalClock):
    """A local clock that is off by ``offset_ns`` and runs ``1 + drift`` times too fast.

    Used to check that synchronisation recovers a known error:

    >>> c = SkewedClock(offset_ns=5_000_000, drift=1e-4)
    >>> abs(c.now() - (time.perf_counter_ns() * (1 + 1e-4) + 5_000_000)) < 1e7
    True
    """

    name = "perf_counter_ns (skewed)"

    def __init__(self, offset_ns: int = 0, drift: float = 0.0):
        self.offset_ns = offset_ns
        self.drift = drift

    def now(self) -> int:
        true = time.perf_counter_ns()
        return int(true + true * self.drift) + self.offset_ns


@dataclass(frozen=True)
class SyncPoint:
    """One synchronisation of this rank: at local time ``local_ns`` add ``offset_ns``
    to get rank 0's time, within ``error_ns``; ``rtt_ns`` is the best round trip."""

    local_ns: int
    offset_ns: float
    error_ns: float
    rtt_ns: int


class PythonExchange:
    """The synchronisation's ping-pong loops through mpi4py, stamped with ``clock``
    (:class:`pevpm.bench.ccore.CExchange` runs the same exchanges in C)."""

    def __init__(self, clock: LocalClock):
        self.clock = clock

    def pings(self, comm, peer: int, tag: int, resend_limit: int) -> tuple[int, int, int]:
        """Reference side: ping-pong with ``peer`` until ``resend_limit`` exchanges bring
        no new minimum round trip, then stop it; (best round trip, its send time, the
        peer's arrival stamp) in ns."""
        clock = self.clock
        out = np.zeros(2, dtype=np.int64)
        back = np.zeros(1, dtype=np.int64)
        best_rtt, best_send, best_recv, since_best = None, 0, 0, 0
        while since_best < resend_limit:
            out[0] = 1
            t_send = clock.now()
            out[1] = t_send
            comm.Send(out, dest=peer, tag=tag)
            comm.Recv(back, source=peer, tag=tag)
            rtt = clock.now() - t_send
            if best_rtt is None or rtt < best_rtt:
                best_rtt, best_send, best_recv, since_best = rtt, t_send, int(back[0]), 0
            else:
                since_best += 1
        out[0] = 0
        comm.Send(out, dest=peer, tag=tag)
        return best_rtt, best_send, best_recv

    def echo(self, comm, reference: int, tag: int) -> None:
        """Peer side: timestamp every ping on arrival and echo the stamp until stopped."""
        incoming = np.zeros(2, dtype=np.int64)
        stamp = np.zeros(1, dtype=np.int64)
        _idle_until_ready(comm.Irecv(incoming, source=reference, tag=tag))
        while incoming[0] == 1:
            stamp[0] = self.clock.now()
            comm.Send(stamp, dest=reference, tag=tag)
            comm.Recv(incoming, source=reference, tag=tag)


def synchronise(comm, clock: LocalClock, method: str = "pairwise",
                resend_limit: int = THESIS_RESEND_LIMIT, exchange=None) -> SyncPoint:
    """Collective: estimate this rank's offset to rank 0 (rank 0 gets offset 0).

    ``exchange`` runs the ping-pongs (default: :class:`PythonExchange` on ``clock``);
    its stamps must be ``clock``'s."""
    if method not in SYNC_METHODS:
        raise BenchmarkError(f"unknown clock sync method {method!r}; use one of {SYNC_METHODS}")
    exchange = exchange or PythonExchange(clock)
    size, rank = comm.Get_size(), comm.Get_rank()
    here = SyncPoint(clock.now(), 0.0, clock.resolution_ns, 0)
    if method == "pairwise":
        for peer in range(1, size):
            if rank == 0:
                _serve_reference(comm, exchange, peer, here, resend_limit)
            elif rank == peer:
                here = _follow_reference(comm, exchange, 0)
    else:
        for distance in _tree_distances(size):
            if rank % (2 * distance) == 0 and rank + distance < size:
                _serve_reference(comm, exchange, rank + distance, here, resend_limit)
            elif rank % (2 * distance) == distance:
                here = _follow_reference(comm, exchange, rank - distance)
    return here


def _tree_distances(size: int) -> list[int]:
    """Pair distances of the tree rounds, largest first: 4, 2, 1 for 5..8 ranks."""
    rounds = math.ceil(math.log2(size)) if size > 1 else 0
    return [1 << k for k in reversed(range(rounds))]


def _serve_reference(comm, exchange, peer: int, mine: SyncPoint, resend_limit: int) -> None:
    """Reference side: the exchanges, then send the peer the offset, error and round
    trip of the best one."""
    best_rtt, best_send, best_recv = exchange.pings(comm, peer, _TAG, resend_limit)
    global_send = best_send + mine.offset_ns
    offset = global_send + best_rtt / 2.0 - best_recv
    error = mine.error_ns + best_rtt / 2.0
    result = np.array([offset, error, float(best_rtt), float(best_recv)], dtype=np.float64)
    comm.Send(result, dest=peer, tag=_TAG)


def _follow_reference(comm, exchange, reference: int) -> SyncPoint:
    """Peer side: echo the exchanges, then receive the offset the reference found."""
    exchange.echo(comm, reference, _TAG)
    result = np.zeros(4, dtype=np.float64)
    comm.Recv(result, source=reference, tag=_TAG)
    offset, error, rtt, at = result
    return SyncPoint(int(at), float(offset), float(error), int(rtt))


def _idle_until_ready(request) -> None:
    """Wait for our turn without spinning, so idle ranks leave the CPU to the active pair."""
    while not request.Test():
        time.sleep(_IDLE_POLL_S)


class GlobalClock:
    """Local-to-global time conversion from successive :class:`SyncPoint` s.

    Between two sync points the offset is interpolated linearly in local time
    (drift); outside them it is held at the nearest point.

    >>> g = GlobalClock(LocalClock())
    >>> g.add(SyncPoint(0, 100.0, 5.0, 10)); g.add(SyncPoint(1000, 200.0, 5.0, 10))
    >>> g.to_global(np.array([0, 500, 1000])).tolist()
    [100, 650, 1200]
    >>> g.drift
    0.1
    """

    def __init__(self, local: LocalClock):
        self.local = local
        self.points: list[SyncPoint] = []

    def add(self, point: SyncPoint) -> None:
        """Append a sync point; they must come in increasing local time."""
        if self.points and point.local_ns <= self.points[-1].local_ns:
            raise ValueError("sync points must be added in increasing local time")
        self.points.append(point)

    def offset_at(self, local_ns) -> np.ndarray:
        times = np.array([p.local_ns for p in self.points], dtype=np.float64)
        offsets = np.array([p.offset_ns for p in self.points], dtype=np.float64)
        return np.interp(np.asarray(local_ns, dtype=np.float64), times, offsets)

    def to_global(self, local_ns: np.ndarray) -> np.ndarray:
        """int64 local nanoseconds -> int64 global nanoseconds."""
        local_ns = np.asarray(local_ns, dtype=np.int64)
        return local_ns + np.rint(self.offset_at(local_ns)).astype(np.int64)

    def to_local(self, global_ns: int) -> int:
        """Approximate inverse for a time near the latest sync point (start-time waits)."""
        return int(global_ns - self.points[-1].offset_ns)

    @property
    def drift(self) -> float:
        """Offset change per local nanosecond between the first and last sync point."""
        if len(self.points) < 2:
            return 0.0
        first, last = self.points[0], self.points[-1]
        return (last.offset_ns - first.offset_ns) / (last.local_ns - first.local_ns)

    @property
    def drift_residual_ns(self) -> float:
        """Largest distance of an inner sync point from the line through its neighbours:
        how far the offset departs from linear drift between syncs."""
        worst = 0.0
        for before, middle, after in zip(self.points, self.points[1:], self.points[2:]):
            fraction = (middle.local_ns - before.local_ns) / (after.local_ns - before.local_ns)
            line = before.offset_ns + fraction * (after.offset_ns - before.offset_ns)
            worst = max(worst, abs(middle.offset_ns - line) - middle.error_ns)
        return worst

    def error_between(self, first: int, last: int) -> float:
        """Error bound (ns) for times between sync points ``first`` and ``last`` (indices)."""
        span = self.points[first : last + 1]
        return max(p.error_ns for p in span) + self.local.resolution_ns + self.drift_residual_ns

    @property
    def error_ns(self) -> float:
        """Error bound over the whole run."""
        return self.error_between(0, len(self.points) - 1) if self.points else math.inf
