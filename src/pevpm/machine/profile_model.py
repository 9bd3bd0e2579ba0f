"""A simulated machine built from a machine profile (MPIBench's SQLite file).

Message times come from :class:`~pevpm.machine.profile_comm.ProfileCommModel`
(the full measured distributions, or one of the thesis's baselines);
collective algorithms are those of the MPI library the profile recorded.
This is where ``--machine machine.db`` on the command line lands.

>>> from pevpm.profile.store import default_profile_path
>>> m = machine_from_profile(default_profile_path(), ppn=4, model="mean2x1")
>>> m.topology.procs_per_node, m.comm.model, m.eager_limit
(4, 'mean2x1', 65536)

A profile measured on one host describes that host: without ``ppn`` or
``nodes`` every rank runs on it, sharing the cores the benchmark could use
(the ``cores`` and ``wait`` its origin records):

>>> here = machine_from_profile("default").topology
>>> here.procs_per_node, here.nodes, here.cores, here.wait
(None, 1, 2, 'poll')

Besides the profile-driven models, ``model="latency-bandwidth"`` costs every
message by a straight line ``latency + size / bandwidth`` fitted to the
two-process ping-pong means (the ``latency-bandwidth`` column of the
README's validation tables):

>>> lb = machine_from_profile("default", model="latency-bandwidth")
>>> type(lb.comm).__name__, f"{lb.comm.latency * 1e6:.1f} us"
('Hockney', '3.9 us')
>>> sorted(COMM_MODELS)
['full', 'latency-bandwidth', 'mean-nxp', 'mean2x1', 'min-nxp', 'min2x1']
"""

from __future__ import annotations

import numpy as np

from pevpm.errors import ProfileError
from pevpm.machine.collectives import CollectiveConfig
from pevpm.machine.comm_models import Hockney
from pevpm.machine.machine import Machine
from pevpm.machine.processor import ProcessorModel
from pevpm.machine.profile_comm import MODEL_NAMES, ProfileCommModel
from pevpm.machine.topology import Topology
from pevpm.profile.builtin import origin_of, resolve_profile
from pevpm.profile.store import TRANSFER_TEST, Profile

#: The model fitted to the profile rather than sampled from it.
LATENCY_BANDWIDTH = "latency-bandwidth"

#: Every communication model a profile machine offers (``PATH:model=NAME``), and what it is.
COMM_MODELS = {
    "full": "PEVPM proper: every message time drawn from the measured distribution of the "
            "block matching its size, placement and contention",
    "min2x1": "the minimum time of the two-process ping-pong (no contention)",
    "mean2x1": "the mean time of the two-process ping-pong (no contention)",
    "min-nxp": "the minimum of the block matching each message's contention",
    "mean-nxp": "the mean of the block matching each message's contention",
    LATENCY_BANDWIDTH: "latency + size / bandwidth, a straight line fitted to the "
                       "two-process ping-pong means (DP*Graph-style, deterministic)",
}
assert set(COMM_MODELS) == {*MODEL_NAMES, LATENCY_BANDWIDTH}

#: Largest blocking send that returns before its receive is posted, for a
#: profile that does not record one (``pevpm bench`` measures it:
#: :mod:`pevpm.bench.eager`, the origin's ``eager``).  MPICH's nominal eager
#: threshold; its shared-memory path was measured to stop at 8,112 bytes here.
MPICH_EAGER_LIMIT = 65536


def machine_from_profile(path: str, ppn: int | None = None, nodes: int | None = None,
                         processor: str | None = None,
                         model: str = "full", collectives: str | None = None,
                         source: str = "empirical", extrapolate: bool = True,
                         eager_limit: int | None = None,
                         node_contention: bool = True, binding: str = "c") -> Machine:
    """The machine of the profile at ``path``.

    ``path`` is a file or a built-in profile's name (``"default"``).
    ``ppn``: processes per node; ``nodes``: how many nodes (with no ``ppn``,
    the ranks spread evenly over them).  With neither, a profile whose blocks
    all ran on one node and that records its host's cores puts every rank on
    that one node; otherwise the default is the profile's own n x p when it
    has one placement, else one rank per node.  Nodes have the cores and the
    MPI wait style the profile's origin records (none recorded: no sharing).
    ``model``: one of :data:`COMM_MODELS`
    (``full``, ``min2x1``, ``mean2x1``, ``min-nxp``, ``mean-nxp``,
    ``latency-bandwidth``); ``collectives``: overrides
    such as ``"alltoall=pairwise"``; ``source``: ``empirical`` histograms or
    ``fitted`` distributions; ``extrapolate``: let sizes beyond the
    benchmarked range extend the nearest two linearly; ``node_contention=False``:
    the restricted PEVPM, every message costed at the lowest contention.
    ``eager_limit``: bytes a send may have and still return before its
    receive is posted (default: what the profile measured, else
    :data:`MPICH_EAGER_LIMIT`).  ``binding``: ``"python"`` for a program calling
    MPI through mpi4py (point-to-point times measured by the C core get the
    binding cost the profile stored, see
    :meth:`~pevpm.machine.profile_comm.ProfileCommModel.from_profile`).
    """
    if model not in COMM_MODELS:
        raise ProfileError(f"unknown communication model {model!r}; choose from "
                           f"{', '.join(COMM_MODELS)}")
    with Profile.open(resolve_profile(path)) as profile:
        if model == LATENCY_BANDWIDTH:
            comm = latency_bandwidth_fit(profile)
        else:
            comm = ProfileCommModel.from_profile(profile, model, source=source,
                                                 extrapolate=extrapolate, binding=binding)
        config = CollectiveConfig.for_profile(profile, collectives or ())
        origin = origin_of(profile)
        placements = {(k.n, k.p) for k in profile.blocks()}
        if ppn is None and nodes is None:
            if origin.cores and placements and all(n == 1 for n, _ in placements):
                nodes = 1
            else:
                ppn = next(iter(placements))[1] if len(placements) == 1 else 1
    topology = Topology(procs_per_node=ppn, nodes=nodes, cores=origin.cores, wait=origin.wait)
    processors = ProcessorModel(name=processor) if processor else None
    if eager_limit is None:
        eager_limit = MPICH_EAGER_LIMIT if origin.eager is None else origin.eager
    return Machine(comm, topology, processors, eager_limit, config, node_contention)


def latency_bandwidth_fit(profile: Profile) -> Hockney:
    """A Hockney model ``T = latency + size / bandwidth`` fitted by least squares to
    the mean times of the profile's two-process ``isend`` blocks (1x2 or 2x1).

    >>> with Profile.open(resolve_profile("default")) as prof:
    ...     fit = latency_bandwidth_fit(prof)
    >>> fit.latency > 0 and fit.bandwidth > 1e8
    True
    """
    keys = [k for k in profile.blocks(test=TRANSFER_TEST) if k.n * k.p == 2]
    sizes = np.array([k.size for k in keys], float)
    if np.unique(sizes).size < 2:
        raise ProfileError(f"the latency-bandwidth model needs two-process {TRANSFER_TEST} "
                           "blocks at two sizes at least", where=profile.path)
    means = np.array([profile.summary(k).mean for k in keys])
    per_byte, latency = np.polyfit(sizes, means, 1)
    bandwidth = 1.0 / per_byte if per_byte > 0 else float("inf")
    return Hockney(latency=max(float(latency), 0.0), bandwidth=float(bandwidth))
