"""Collectives timed whole rather than run as point-to-point messages.

Two cases: hardware collectives (QsNet-style broadcast and barrier, where
messages are a poor model of a switch that copies packets), and collectives
whose algorithm is unknown, for which the measured per-rank distribution of
completion times is sampled instead.  Both are a :class:`CollectiveTimes`:
per-rank completion times measured from a synchronised start, which
:func:`synchronised_completion` turns into completion times on the ranks'
clocks given when each rank entered the call.

The profile-driven model implements :class:`CollectiveTimes` from MPIBench
blocks; :class:`DistributionTimes` does it with any scipy-like distribution.

>>> import numpy as np, scipy.stats as st
>>> times = DistributionTimes({"MPI_Alltoall": st.uniform(1e-3, 1e-3)})
>>> offsets = times.sample("MPI_Alltoall", 64, root=0, numprocs=4,
...                        rng=np.random.default_rng(1))
>>> bool(((offsets >= 1e-3) & (offsets <= 2e-3)).all())
True
>>> synchronised_completion("MPI_Barrier", 0, np.array([0.0, 2.0]), np.array([0.5, 0.5]))
array([2.5, 2.5])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol, runtime_checkable

import numpy as np

from pevpm.errors import ModelError
from pevpm.machine.comm_model import CommModel, Transfer

#: Collectives where data flows out of the root: a rank can finish once the
#: root and itself have arrived.
_FROM_ROOT = frozenset({"MPI_Bcast", "MPI_Scatter", "MPI_Scatterv"})
#: Collectives where data flows into the root: others finish on their own.
_TO_ROOT = frozenset({"MPI_Gather", "MPI_Gatherv", "MPI_Reduce"})


@runtime_checkable
class CollectiveTimes(Protocol):
    """A source of whole-collective times."""

    def sample(self, op: str, size: int, *, root: int, numprocs: int,
               rng: np.random.Generator) -> np.ndarray:
        """Each rank's completion time (seconds) after a synchronised start of
        one call of ``op`` on ``size`` bytes; shape ``(numprocs,)``."""


def synchronised_completion(op: str, root: int, entries: np.ndarray,
                            offsets: np.ndarray) -> np.ndarray:
    """Completion time of each rank given its entry time and its offset from
    a synchronised start.

    The start is the moment the ranks the rank depends on have all arrived:
    the root and itself for a broadcast / scatter, itself for a non-root
    rank of a gather / reduce (the root waits for everyone), everyone for
    the rest.
    """
    entries = np.asarray(entries, dtype=float)
    offsets = np.asarray(offsets, dtype=float)
    if op in _FROM_ROOT:
        start = np.maximum(entries, entries[root])
    elif op in _TO_ROOT:
        start = entries.copy()
        start[root] = entries.max()
    else:
        start = np.full_like(entries, entries.max())
    return start + offsets


class DistributionTimes:
    """Per-rank times drawn independently from one distribution per operation.

    ``distributions`` maps an MPI operation to an object with scipy's
    ``rvs(size=..., random_state=...)``, or to a function ``(size, numprocs)``
    returning one (a distribution per message size and rank count).
    """

    def __init__(self, distributions: Mapping[str, object]):
        self.distributions = dict(distributions)

    def sample(self, op: str, size: int, *, root: int, numprocs: int,
               rng: np.random.Generator) -> np.ndarray:
        if op not in self.distributions:
            known = ", ".join(sorted(self.distributions)) or "none"
            raise ModelError(f"no measured distribution for {op} (have: {known})")
        dist = self.distributions[op]
        if callable(dist) and not hasattr(dist, "rvs"):
            dist = dist(size, numprocs)
        return np.asarray(dist.rvs(size=numprocs, random_state=rng), dtype=float)


class HardwareTimes:
    """QsNet-style hardware broadcast and barrier.

    The switch copies one message to every node at once, so every node's
    first rank finishes one point-to-point time (``size`` bytes; zero for a
    barrier) after the start, whatever the node count; further ranks on a
    node take an extra intra-node copy.  A broadcast's root finishes after
    its local completion time and its node-mates after one intra-node copy;
    every rank of a barrier waits for the network.  ``node_of[rank]`` is the rank's node; nodes
    are assumed contiguous (what the hardware needs).
    """

    def __init__(self, comm_model: CommModel, node_of: Callable[[int], int] | None = None):
        self.comm_model = comm_model
        self.node_of = node_of or (lambda rank: rank)

    def sample(self, op: str, size: int, *, root: int, numprocs: int,
               rng: np.random.Generator) -> np.ndarray:
        if op not in ("MPI_Bcast", "MPI_Barrier"):
            raise ModelError(f"{op} has no hardware implementation (only MPI_Bcast, MPI_Barrier)")
        nbytes = size if op == "MPI_Bcast" else 0
        nodes = [self.node_of(rank) for rank in range(numprocs)]
        leader = {node: rank for rank, node in reversed(list(enumerate(nodes)))}
        leader[nodes[root]] = root
        far = next((r for r in range(numprocs) if nodes[r] != nodes[root]), None)
        network = 0.0 if far is None else self.comm_model.transfer_time(
            Transfer(op, nbytes, root, far, intra_node=False, contention=1), rng)
        offsets = np.empty(numprocs)
        for rank, node in enumerate(nodes):
            crosses = op == "MPI_Barrier" or node != nodes[root]
            offsets[rank] = network if crosses else 0.0
            if leader[node] != rank:
                offsets[rank] += self.comm_model.transfer_time(
                    Transfer(op, nbytes, leader[node], rank, intra_node=True, contention=1), rng)
        if op == "MPI_Bcast":
            offsets[root] = self.comm_model.local_completion_time(
                Transfer(op, nbytes, root, far if far is not None else root,
                         intra_node=far is None, contention=1), rng)
        return offsets
