"""How long whole collectives take on a machine, when they are not run as messages.

Two cases: hardware collectives (QsNet-style broadcast and barrier, where
messages are a poor model of a switch that copies packets), and collectives
whose algorithm is unknown, for which the measured per-rank distribution of
completion times is sampled instead.  Both are a :class:`CollectiveTimes`:
per-rank completion times measured from a synchronised start; the engine
(:mod:`pevpm.vm.kernel.collectives.timed`) places them on the ranks' clocks.

:class:`ProfileTimes` implements :class:`CollectiveTimes` from the MPIBench
blocks of a machine profile (per-rank resampling, so a root that finishes
first stays first); :class:`DistributionTimes` does it with any scipy-like
distribution.

>>> import numpy as np, scipy.stats as st
>>> times = DistributionTimes({"MPI_Alltoall": st.uniform(1e-3, 1e-3)})
>>> offsets = times.sample("MPI_Alltoall", 64, root=0, numprocs=4,
...                        rng=np.random.default_rng(1))
>>> bool(((offsets >= 1e-3) & (offsets <= 2e-3)).all())
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol, runtime_checkable

import numpy as np

from pevpm.errors import ModelError
from pevpm.machine.transfer import CommModel, Transfer


@runtime_checkable
class CollectiveTimes(Protocol):
    """A source of whole-collective times."""

    def sample(self, op: str, size: int, *, root: int, numprocs: int,
               rng: np.random.Generator) -> np.ndarray:
        """Each rank's completion time (seconds) after a synchronised start of
        one call of ``op`` on ``size`` bytes; shape ``(numprocs,)``."""


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


#: MPI operation -> MPIBench test and variant measuring it.
MPIBENCH_TESTS = {
    "MPI_Barrier": ("barrier", ""), "MPI_Bcast": ("bcast", ""),
    "MPI_Scatter": ("scatter", "each"), "MPI_Scatterv": ("scatter", "each"),
    "MPI_Gather": ("gather", "each"), "MPI_Gatherv": ("gather", "each"),
    "MPI_Allgather": ("allgather", "each"), "MPI_Alltoall": ("alltoall", "each"),
    "MPI_Reduce": ("reduce", ""), "MPI_Allreduce": ("allreduce", ""),
}


class ProfileTimes:
    """Per-rank completion times resampled from a machine profile's MPIBench blocks.

    ``profile`` is a :class:`pevpm.profile.store.Profile` (anything with its
    ``blocks(test=...)`` and ``samples(key, by_rank=True)``); the collective
    blocks are read once, here, so the object is plain data (it pickles to
    worker processes).  Rank ``r`` draws one of the times measured at rank
    ``r`` (relative to the root: MPIBench roots its collectives at rank 0);
    between two measured sizes the draws at both are interpolated linearly,
    beyond them the nearest is used.  Only blocks measured on ``numprocs``
    ranks qualify.
    """

    def __init__(self, profile):
        wanted = set(MPIBENCH_TESTS.values())
        self.blocks: dict[tuple[str, str, int], list[tuple[int, np.ndarray]]] = {}
        for test in sorted({test for test, _ in wanted}):
            for key in profile.blocks(test=test):
                if (key.test, key.variant) in wanted:
                    self.blocks.setdefault((key.test, key.variant, key.n * key.p), []).append(
                        (key.size, np.asarray(profile.samples(key, by_rank=True), dtype=float)))
        for measured in self.blocks.values():
            measured.sort(key=lambda block: block[0])

    def sample(self, op: str, size: int, *, root: int, numprocs: int,
               rng: np.random.Generator) -> np.ndarray:
        if op not in MPIBENCH_TESTS:
            raise ModelError(f"MPIBench does not measure {op}")
        test, variant = MPIBENCH_TESTS[op]
        measured = self.blocks.get((test, variant, numprocs))
        if not measured:
            raise ModelError(f"the profile has no {test} block on {numprocs} ranks to sample "
                             f"{op} from")
        sizes = [s for s, _ in measured]
        upper = min(int(np.searchsorted(sizes, size)), len(sizes) - 1)
        lower = upper - 1 if sizes[upper] > size and upper > 0 else upper
        low = _draw_per_rank(measured[lower][1], rng)
        if lower == upper:
            relative = low
        else:
            weight = (size - sizes[lower]) / (sizes[upper] - sizes[lower])
            relative = (1 - weight) * low + weight * _draw_per_rank(measured[upper][1], rng)
        return np.roll(relative, root)


def _draw_per_rank(per_rank: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One of each rank's measured times (rows: ranks)."""
    picks = rng.integers(0, per_rank.shape[1], size=per_rank.shape[0])
    return per_rank[np.arange(per_rank.shape[0]), picks]
