"""Routes from one node to every node at once, built with numpy.

A generator that can route a whole row in array operations fills a
:class:`Rows`: one line per destination, links appended to the lines it names,
each line as long as its own route.  :meth:`Rows.flat` gives what the
compiled core copies into its route table: each destination's route length
and all the links, row after row.

>>> import numpy as np
>>> rows = Rows(3, 2)
>>> rows.append(np.array([0, 2]), np.array([7, 9]))     # routes 0 and 2 cross 7 and 9 first
>>> rows.append(np.array([2]), 4)
>>> lengths, links = rows.flat()
>>> lengths.tolist(), links.tolist()
([1, 0, 2], [7, 9, 4])
"""

from __future__ import annotations

import numpy as np


class Rows:
    """``count`` routes of at most ``longest`` links, filled in crossing order."""

    def __init__(self, count: int, longest: int):
        self.links = np.zeros((count, max(longest, 1)), dtype=np.int32)
        self.lengths = np.zeros(count, dtype=np.int32)

    def append(self, where: np.ndarray, links) -> None:
        """Append ``links`` (one per route named, or one for all) to the routes
        ``where`` (distinct indices)."""
        at = self.lengths[where]
        self.links.reshape(-1)[where * self.links.shape[1] + at] = links
        self.lengths[where] = at + 1

    def flat(self) -> tuple[np.ndarray, np.ndarray]:
        """Each route's length and the links of all of them, one after another."""
        keep = np.arange(self.links.shape[1]) < self.lengths[:, None]
        return self.lengths, self.links[keep]
