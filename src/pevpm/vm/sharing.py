"""Ranks sharing a node's cores: how long a serial segment takes when they compete.

When a node has more ranks than cores (``Topology(cores=...)``), the ranks
that want a core at the same time share the node's cores equally (processor
sharing).  A rank wants a core while it computes (a ``Serial`` segment),
while it copies a message, and while it is blocked in an MPI call if the MPI
library busy-polls (``wait="poll"``, MPICH's default); it does not while it
sleeps (``Serial`` with ``sleep``), while it is blocked in a library that
sleeps (``wait="sleep"``), or after it has ended.

With ``R(t)`` ranks of the node wanting a core at time ``t`` (the computing
rank included) and ``C`` cores, a segment of ``w`` CPU-seconds starting at
``t0`` ends at the ``t1`` where

    integral from t0 to t1 of min(1, C / R(t)) dt = w.

The engines do not run in global time order (a rank runs ahead until it
blocks), so ``R`` is what is known when the segment starts: every other rank
of the node has a record of when it did not want a core (its sleeps, its
blocked periods in a sleeping library, its end) up to its own clock; past
its clock a rank is assumed to go on as it is (a runnable or busy-polling
rank keeps wanting a core, a sleeping-blocked or ended one does not).  Both
engines call this one object at the same points, so their results agree to
the bit.

>>> share = CpuSharing([0, 0, 0, 0], cores=2, poll=True)
>>> [share.run_for(r, 0.0, 1.0) for r in range(4)]     # 4 ranks, 2 cores: 2 s each
[2.0, 2.0, 2.0, 2.0]
>>> share.finish(0, 2.0); share.finish(1, 2.0)
>>> share.run_for(2, 2.0, 1.0)                          # alone with rank 3 now
1.0
>>> three = CpuSharing([0, 0, 0], cores=2, poll=True)
>>> three.run_for(0, 0.0, 1.0)                          # 3 ranks on 2 cores
1.5
>>> three.sleep(2, 0.0, 5.0)                            # a sleeping rank leaves its core
>>> three.run_for(1, 0.0, 1.0)
1.0
"""

from __future__ import annotations

from bisect import bisect_right

_NEVER = float("inf")
#: Idle periods kept per rank before the ones no rank can ask about are dropped.
_KEEP = 64


class CpuSharing:
    """Idle periods of every rank on an oversubscribed node, and the time a
    segment takes among them.

    ``node_of``: node of each rank; ``cores``: cores per node; ``poll``: a
    rank blocked in an MPI call keeps its core busy.  Ranks on nodes with no
    more ranks than cores are never stretched (``shared[rank]`` is False).
    """

    def __init__(self, node_of: list[int], cores: int, poll: bool):
        self.cores = cores
        self.poll = poll
        members: dict[int, list[int]] = {}
        for rank, node in enumerate(node_of):
            members.setdefault(node, []).append(rank)
        self.shared = [len(members[node]) > cores for node in node_of]
        self.peers = [[q for q in members[node] if q != rank]
                      for rank, node in enumerate(node_of)]
        n = len(node_of)
        self.starts: list[list[float]] = [[] for _ in range(n)]
        self.ends: list[list[float]] = [[] for _ in range(n)]
        self.seen = [0.0] * n          # a time no later than each rank's clock
        self.ended = [False] * n
        self.keep = [_KEEP] * n

    # ------------------------------------------------------------ what ranks do
    def sleep(self, rank: int, start: float, seconds: float) -> None:
        """``rank`` sleeps (wants no core) for ``seconds`` from ``start``."""
        if self.shared[rank] and seconds > 0:
            self.seen[rank] = start
            self._idle(rank, start, start + seconds)

    def block(self, rank: int, at: float) -> None:
        """``rank`` blocks in an MPI call at ``at``."""
        if self.shared[rank]:
            self.seen[rank] = at
            if not self.poll:
                self._idle(rank, at, _NEVER)

    def resume(self, rank: int, at: float) -> None:
        """``rank``'s blocking call returned at ``at``."""
        if self.shared[rank]:
            self.seen[rank] = at
            if not self.poll:
                starts, ends = self.starts[rank], self.ends[rank]
                if starts[-1] < at:
                    ends[-1] = at
                else:
                    starts.pop()
                    ends.pop()

    def finish(self, rank: int, at: float) -> None:
        """``rank`` ended at ``at``."""
        if self.shared[rank]:
            self.ended[rank] = True
            self._idle(rank, at, _NEVER)

    def _idle(self, rank: int, start: float, end: float) -> None:
        starts, ends = self.starts[rank], self.ends[rank]
        starts.append(start)
        ends.append(end)
        if len(starts) > self.keep[rank]:
            self._forget(rank)

    def _forget(self, rank: int) -> None:
        """Drop the idle periods that ended before any rank of the node can
        still start a segment (the least clock of the node's live ranks)."""
        live = [self.seen[q] for q in [rank, *self.peers[rank]] if not self.ended[q]]
        floor = min(live) if live else _NEVER
        ends = self.ends[rank]
        drop = bisect_right(ends, floor)
        drop = min(drop, len(ends) - 1)        # the last period stays
        del self.starts[rank][:drop], ends[:drop]
        self.keep[rank] = max(_KEEP, 2 * len(ends))

    # --------------------------------------------------------------- stretching
    def run_for(self, rank: int, start: float, work: float) -> float:
        """Wall-clock seconds ``work`` CPU-seconds of ``rank`` take from ``start``."""
        if not self.shared[rank] or work <= 0:
            return work
        self.seen[rank] = start
        peers = self.peers[rank]
        cores = self.cores
        horizon = start + work * (len(peers) + 1) / cores     # the slowest it can go
        wanting = 1
        changes: list[tuple[float, int]] = []
        for q in peers:
            starts, ends = self.starts[q], self.ends[q]
            idle_now = False
            for j in range(bisect_right(ends, start), len(ends)):
                s = starts[j]
                if s >= horizon:
                    break
                if s <= start:
                    idle_now = True
                else:
                    changes.append((s, -1))
                if ends[j] < horizon:
                    changes.append((ends[j], 1))
            if not idle_now:
                wanting += 1
        if wanting <= cores and not changes:
            return work
        changes.sort()
        now, left, stretched = start, work, False
        for at, delta in changes:
            rate = 1.0 if wanting <= cores else cores / wanting
            if (at - now) * rate >= left:
                break
            left -= (at - now) * rate
            stretched = stretched or rate < 1.0
            now = at
            wanting += delta
        rate = 1.0 if wanting <= cores else cores / wanting
        if rate == 1.0 and not stretched:
            return work
        return now + left / rate - start
