"""The contention scoreboard: how many messages are on each network link.

The thesis's semantics: a message's contention is estimated once, when the
virtual machine matches it.  At that moment messages that have completed by
the new message's start are taken off every link it crosses, and the
contention level it sees is the busiest of those links, itself included,
divided by the link's capacity (rounded up).  When the match is made, the
message is put on its links until its arrival time.

>>> board = ContentionScoreboard([1, 1, 2])
>>> board.contention((0, 2), at=0.0)
1
>>> board.add((0, 2), end=5.0); board.add((1, 2), end=3.0)
>>> board.contention((0, 2), at=1.0), board.in_transit(2)
(2, 2)
>>> board.contention((0, 2), at=4.0), board.in_transit(2)
(2, 1)
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence


class ContentionScoreboard:
    """Messages in transit per link (a heap of their end times per link)."""

    def __init__(self, capacities: Sequence[int]):
        self.capacities = list(capacities)
        self._ends: list[list[float]] = [[] for _ in self.capacities]

    def contention(self, links: Sequence[int], at: float) -> int:
        """Contention level a message starting at ``at`` on ``links`` meets
        (>= 1); messages that ended by ``at`` leave the scoreboard."""
        level = 1
        for link in links:
            ends = self._ends[link]
            while ends and ends[0] <= at:
                heapq.heappop(ends)
            capacity = self.capacities[link]
            level = max(level, -(-(len(ends) + 1) // capacity))
        return level

    def add(self, links: Sequence[int], end: float) -> None:
        """Put a matched message on ``links`` until ``end``."""
        for link in links:
            heapq.heappush(self._ends[link], end)

    def in_transit(self, link: int) -> int:
        """Messages currently counted on ``link``."""
        return len(self._ends[link])
