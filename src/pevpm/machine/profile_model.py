"""A simulated machine built from a machine profile (MPIBench's SQLite file).

Message times come from :class:`~pevpm.machine.profile_comm.ProfileCommModel`
(the full measured distributions, or one of the thesis's baselines);
collective algorithms are those of the MPI library the profile recorded.
This is where ``--machine machine.db`` on the command line lands.

>>> from pevpm.profile.store import default_profile_path
>>> m = machine_from_profile(default_profile_path(), ppn=4, model="mean2x1")
>>> m.topology.procs_per_node, m.comm.model, m.eager_limit
(4, 'mean2x1', 65536)
"""

from __future__ import annotations

from pevpm.machine.collectives import CollectiveConfig
from pevpm.machine.machine import Machine
from pevpm.machine.processor import ProcessorModel
from pevpm.machine.profile_comm import ProfileCommModel
from pevpm.machine.topology import Topology
from pevpm.profile.store import Profile

#: Largest blocking send that returns before its receive is posted.  MPICH
#: sends messages up to 64 KiB eagerly through shared memory and over TCP;
#: a profile measures times, not the protocol, so this is the library's
#: default, overridable per machine.
MPICH_EAGER_LIMIT = 65536


def machine_from_profile(path: str, ppn: int | None = None, processor: str | None = None,
                         model: str = "full", collectives: str | None = None,
                         source: str = "empirical", extrapolate: bool = True,
                         eager_limit: int = MPICH_EAGER_LIMIT,
                         node_contention: bool = True) -> Machine:
    """The machine of the profile at ``path``.

    ``ppn``: processes per node (default: the profile's own n x p when it has
    one placement, else one per node); ``model``: ``full``, ``min2x1``,
    ``mean2x1``, ``min-nxp`` or ``mean-nxp``; ``collectives``: overrides
    such as ``"alltoall=pairwise"``; ``source``: ``empirical`` histograms or
    ``fitted`` distributions; ``extrapolate``: let sizes beyond the
    benchmarked range extend the nearest two linearly; ``node_contention=False``:
    the restricted PEVPM, every message costed at the lowest contention.
    """
    with Profile.open(path) as profile:
        comm = ProfileCommModel.from_profile(profile, model, source=source,
                                             extrapolate=extrapolate)
        config = CollectiveConfig.for_profile(profile, collectives or ())
        if ppn is None:
            placements = {(k.n, k.p) for k in profile.blocks()}
            ppn = next(iter(placements))[1] if len(placements) == 1 else 1
    processors = ProcessorModel(name=processor) if processor else None
    return Machine(comm, Topology(procs_per_node=ppn), processors, eager_limit, config,
                   node_contention)
