"""The contention scoreboard: how many messages are on each network link.

The thesis's semantics: a message's contention is estimated once, when the
virtual machine matches it.  At that moment messages that have completed by
the new message's start are taken off every link it crosses, and the
contention level it sees is the busiest of those links, itself included,
divided by the link's capacity (rounded up).  When the match is made, the
message is put on its links until its arrival time.

Links are full duplex: between two ranks a message each way is one unit of
load, not two.  A link's load is the sum over rank pairs of the larger of
the two directions' counts, so the two opposite messages of a 2-rank
``MPI_Sendrecv`` meet contention 1 (as in MPIBench's 1x2 ``sendrecv``
test), while two messages from different pairs sharing a node's memory (or
the backplane) meet 2.  :meth:`ContentionScoreboard.opposite` says whether a
message meets one going the other way between the same ranks: a
bidirectional exchange, which a profile may cost from a duplex measurement.

>>> board = ContentionScoreboard([1, 1, 2])
>>> board.contention((0, 2), at=0.0, src=0, dst=1)
1
>>> board.add((0, 2), end=5.0, src=0, dst=1); board.add((1, 2), end=3.0, src=2, dst=3)
>>> board.contention((0, 2), at=1.0, src=4, dst=5), board.in_transit(2)
(2, 2)
>>> board.contention((0, 2), at=4.0, src=4, dst=5), board.in_transit(2)
(2, 1)
>>> board.contention((0,), at=4.0, src=1, dst=0), board.opposite((0,), src=1, dst=0)
(1, True)
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence


class ContentionScoreboard:
    """Messages in transit per link: a heap of (end, src, dst) per link, the
    count per direction of each rank pair and the link's load (sum over pairs
    of the busier direction)."""

    def __init__(self, capacities: Sequence[int]):
        self.capacities = list(capacities)
        self._ends: list[list[tuple[float, int, int]]] = [[] for _ in self.capacities]
        self._counts: list[dict[tuple[int, int], int]] = [{} for _ in self.capacities]
        self._load = [0] * len(self.capacities)

    def _expire(self, link: int, at: float) -> None:
        ends, counts = self._ends[link], self._counts[link]
        while ends and ends[0][0] <= at:
            _, src, dst = heapq.heappop(ends)
            left = counts[(src, dst)] - 1
            if left:
                counts[(src, dst)] = left
            else:
                del counts[(src, dst)]
            if left >= counts.get((dst, src), 0):
                self._load[link] -= 1

    def contention(self, links: Sequence[int], at: float, src: int, dst: int) -> int:
        """Contention level a message from ``src`` to ``dst`` starting at ``at``
        on ``links`` meets (>= 1); messages that ended by ``at`` leave the
        scoreboard."""
        level = 1
        for link in links:
            self._expire(link, at)
            counts = self._counts[link]
            adds = counts.get((src, dst), 0) >= counts.get((dst, src), 0)
            capacity = self.capacities[link]
            level = max(level, -(-(self._load[link] + adds) // capacity))
        return level

    def opposite(self, links: Sequence[int], src: int, dst: int) -> bool:
        """Whether a message from ``dst`` to ``src`` is in transit on ``links``
        (as of the last :meth:`contention` query)."""
        return any(self._counts[link].get((dst, src), 0) > 0 for link in links)

    def add(self, links: Sequence[int], end: float, src: int, dst: int) -> None:
        """Put a matched message from ``src`` to ``dst`` on ``links`` until ``end``."""
        for link in links:
            counts = self._counts[link]
            mine = counts.get((src, dst), 0)
            if mine >= counts.get((dst, src), 0):
                self._load[link] += 1
            counts[(src, dst)] = mine + 1
            heapq.heappush(self._ends[link], (end, src, dst))

    def busiest(self, links: Sequence[int]) -> int:
        """The link of ``links`` with the most load per unit of capacity (as of
        the last :meth:`contention` query; the first of equals)."""
        return max(links, key=lambda link: self._load[link] / self.capacities[link])

    def in_transit(self, link: int) -> int:
        """Messages currently counted on ``link``."""
        return len(self._ends[link])
