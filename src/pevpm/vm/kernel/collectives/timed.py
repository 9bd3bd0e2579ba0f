"""Placing whole-collective times on the ranks' clocks.

A timed collective (hardware, or sampled from measurements: see
:mod:`pevpm.machine.collective_times`) gives each rank a completion time
after a synchronised start; :func:`synchronised_completion` turns those into
completion times on the ranks' clocks given when each rank entered the call.

>>> synchronised_completion("MPI_Barrier", 0, np.array([0.0, 2.0]), np.array([0.5, 0.5]))
array([2.5, 2.5])
"""

from __future__ import annotations

import numpy as np

#: Collectives where data flows out of the root: a rank can finish once the
#: root and itself have arrived.
_FROM_ROOT = frozenset({"MPI_Bcast", "MPI_Scatter", "MPI_Scatterv"})
#: Collectives where data flows into the root: others finish on their own.
_TO_ROOT = frozenset({"MPI_Gather", "MPI_Gatherv", "MPI_Reduce"})


def synchronised_start(op: str, root: int, entries: np.ndarray) -> np.ndarray:
    """When each rank's part of a timed collective starts: the moment the ranks
    it depends on have all entered - the root and itself for a broadcast /
    scatter, itself for a non-root rank of a gather / reduce (the root waits
    for everyone), everyone for the rest.  Before that the rank is waiting.

    >>> synchronised_start("MPI_Gather", 0, np.array([1.0, 0.0, 3.0])).tolist()
    [3.0, 0.0, 3.0]
    """
    entries = np.asarray(entries, dtype=float)
    if op in _FROM_ROOT:
        return np.maximum(entries, entries[root])
    if op in _TO_ROOT:
        start = entries.copy()
        start[root] = entries.max()
        return start
    return np.full_like(entries, entries.max())


def synchronised_completion(op: str, root: int, entries: np.ndarray,
                            offsets: np.ndarray) -> np.ndarray:
    """Completion time of each rank: its :func:`synchronised_start` plus its
    offset (a :class:`CollectiveTimes` sample)."""
    return synchronised_start(op, root, entries) + np.asarray(offsets, dtype=float)
