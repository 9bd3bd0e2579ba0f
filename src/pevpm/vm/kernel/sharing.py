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
rank keeps wanting a core, a sleeping-blocked or ended one does not).  The
reference engine calls this object and the compiled core its mirror in C
arrays (``pevpm.vm.kernel.fastcore.Sharing``: the same changes, folds and arithmetic
in the same order) at the same points, so their results agree to the bit.  Each node keeps one time-ordered list of the changes in how many
of its ranks are idle, so a segment's cost does not grow with the node's
rank count, only with the changes it spans.

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

from bisect import bisect_left, bisect_right

#: Changes kept per node before those no rank can ask about any more are folded.
_KEEP = 256


class _Node:
    """The idle-count changes of one oversubscribed node: ``times`` ascending,
    ``deltas`` +1 (a rank stops wanting a core) or -1 (it wants one again),
    ``base`` the idle count before ``times[0]``."""

    __slots__ = ("base", "deltas", "keep", "ranks", "times")

    def __init__(self, ranks: list[int]):
        self.ranks = ranks
        self.times: list[float] = []
        self.deltas: list[int] = []
        self.base = 0
        self.keep = _KEEP

    def change(self, at: float, delta: int) -> None:
        i = bisect_right(self.times, at)
        self.times.insert(i, at)
        self.deltas.insert(i, delta)


class CpuSharing:
    """When the ranks of oversubscribed nodes want a core, and the time a
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
        nodes = {node: _Node(ranks) for node, ranks in members.items() if len(ranks) > cores}
        self.node = [nodes.get(node) for node in node_of]
        self.shared = [node is not None for node in self.node]
        self.seen = [0.0] * len(node_of)    # a time no later than each rank's clock
        self.ended = [False] * len(node_of)

    # ------------------------------------------------------------ what ranks do
    def sleep(self, rank: int, start: float, seconds: float) -> None:
        """``rank`` sleeps (wants no core) for ``seconds`` from ``start``."""
        node = self.node[rank]
        if node is not None and seconds > 0:
            self.seen[rank] = start
            node.change(start, 1)
            node.change(start + seconds, -1)
            self._fold(node)

    def block(self, rank: int, at: float) -> None:
        """``rank`` blocks in an MPI call at ``at``."""
        node = self.node[rank]
        if node is not None:
            self.seen[rank] = at
            if not self.poll:
                node.change(at, 1)

    def resume(self, rank: int, at: float) -> None:
        """``rank``'s blocking call returned at ``at``."""
        node = self.node[rank]
        if node is not None:
            self.seen[rank] = at
            if not self.poll:
                node.change(at, -1)
                self._fold(node)

    def finish(self, rank: int, at: float) -> None:
        """``rank`` ended at ``at``."""
        node = self.node[rank]
        if node is not None:
            self.ended[rank] = True
            node.change(at, 1)
            self._fold(node)

    def _fold(self, node: _Node) -> None:
        """Fold the changes no rank of the node can still ask about (those up
        to the least clock of its live ranks) into ``base``."""
        if len(node.times) <= node.keep:
            return
        live = [self.seen[q] for q in node.ranks if not self.ended[q]]
        if live:
            k = bisect_right(node.times, min(live))
            node.base += sum(node.deltas[:k])
            del node.times[:k], node.deltas[:k]
        node.keep = max(_KEEP, 2 * len(node.times))

    # --------------------------------------------------------------- stretching
    def run_for(self, rank: int, start: float, work: float) -> float:
        """Wall-clock seconds ``work`` CPU-seconds of ``rank`` take from ``start``."""
        node = self.node[rank]
        if node is None or work <= 0:
            return work
        self.seen[rank] = start
        times, deltas, cores = node.times, node.deltas, self.cores
        size = len(node.ranks)
        first = bisect_right(times, start)
        last = bisect_left(times, start + work * size / cores, first)   # the slowest it can go
        wanting = size - node.base - sum(deltas[:first])
        if wanting <= cores and first == last:
            return work
        now, left, stretched = start, work, False
        for k in range(first, last):
            at = times[k]
            rate = 1.0 if wanting <= cores else cores / wanting
            if (at - now) * rate >= left:
                break
            left -= (at - now) * rate
            stretched = stretched or rate < 1.0
            now = at
            wanting -= deltas[k]
        rate = 1.0 if wanting <= cores else cores / wanting
        if rate == 1.0 and not stretched:
            return work
        return now + left / rate - start
