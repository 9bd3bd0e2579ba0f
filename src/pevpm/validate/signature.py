"""The broadcast's per-rank completion signature (thesis sec. 5.2).

The thesis measured, for a 16-process 128-byte MPI_Bcast on Perseus,
log2(16)+1 = 5 peaks in the per-process completion times, with areas
1:4:6:4:1 and the root in the first.  :func:`bcast_completion_times`
simulates that broadcast with random point-to-point times (transfer t_s
from a Pearson V distribution, Isend local completion t_lc uniform) under a
given algorithm configuration and send protocol.

>>> times = bcast_completion_times("library=mpich-1.2", EAGER, 16, runs=3, seed=1)
>>> times.shape, bool((times[:, 0] < times[:, 1:].min(axis=1)).all())   # root first
((3, 16), True)
"""

from __future__ import annotations

import numpy as np
import scipy.stats as st

from pevpm.machine.collectives import CollectiveConfig
from pevpm.machine.comm_models import PerSizeDistribution
from pevpm.machine.machine import Machine
from pevpm.machine.topology import Topology
from pevpm.model.builder import ModelBuilder

SIZE = 128
#: t_s: Pearson V (inverse gamma) with mean 60 us, sd ~4 us; t_lc: 15-20 us.
TRANSFER = st.invgamma(8, loc=50e-6, scale=70e-6)
LOCAL = st.uniform(15e-6, 5e-6)
#: Eager limits: every Isend completes locally, or only on delivery.
EAGER, RENDEZVOUS = 1 << 20, 0

#: Configurations compared; only the first reproduces the thesis's signature.
CONFIGURATIONS = {
    "Isend completes locally, largest subtree first (MPICH)":
        ("library=mpich-1.2", EAGER),
    "Isend completes locally, smallest subtree first":
        ("library=mpich-1.2, child-order=smallest-first", EAGER),
    "Isend completes on delivery (no eager buffering)":
        ("library=mpich-1.2", RENDEZVOUS),
    "Isend completes locally + waits for zero-byte acks":
        ("library=mpich-1.2, acks=yes", EAGER),
}


def bcast_completion_times(spec: str, eager_limit: int, numprocs: int, runs: int,
                           seed: int) -> np.ndarray:
    """Per-rank completion times (runs x numprocs) of one broadcast per run."""
    from pevpm.vm.kernel.fastengine import simulate

    builder = ModelBuilder()
    builder.collective("MPI_Bcast", SIZE, root=0)
    model = builder.build()
    machine = Machine(PerSizeDistribution({SIZE: TRANSFER}, local=LOCAL), Topology(),
                      eager_limit=eager_limit, collectives=CollectiveConfig.parse(spec))
    rng = np.random.default_rng(seed)
    return np.array([simulate(model, numprocs, machine, rng=rng).collectives[0].completion
                     for _ in range(runs)])
