"""Collective operations as point-to-point algorithms run by the virtual machine.

At a ``Message`` whose op is a collective the engine asks :func:`expand`
for the statements the calling rank runs (Isends, receives, Sendrecvs,
Waitalls, an operator's ``Serial`` cost) and runs them like the user's own,
so contention, local completion and matching apply to them unchanged.
Expansions depend only on their arguments and are memoised.

Collective messages use tags at or below :data:`COLLECTIVE_TAG_BASE` (never
matched by a user's ``MPI_ANY_TAG``) and request ids starting ``__coll``.

When :func:`is_timed` says the chosen algorithm is ``hardware`` or
``measured``, there are no statements: the engine waits until every rank
has entered the call and asks :func:`timed_completion` for each rank's
completion time (:func:`synchronised_start` says how much of the wait was
waiting for other ranks).

>>> cfg = CollectiveConfig.parse("library=mpich-1.2")
>>> [m.op for m in expand("MPI_Bcast", 1024, 0, 1, 4, cfg)]
['MPI_Recv']
>>> [m.op for m in expand("MPI_Bcast", 1024, 0, 0, 4, cfg)]
['MPI_Isend', 'MPI_Isend', 'MPI_Waitall']
>>> is_timed("MPI_Barrier", 0, 4, CollectiveConfig(hardware=True))
True
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from pevpm.errors import ModelError
from pevpm.machine.collective_times import (
    CollectiveTimes,
    DistributionTimes,
    HardwareTimes,
    ProfileTimes,
)
from pevpm.machine.collectives import (
    DEFAULT_THRESHOLDS,
    HARDWARE,
    LIBRARIES,
    MEASURED,
    TIMED_ALGORITHMS,
    AlgorithmOptions,
    CollectiveConfig,
)
from pevpm.model.ast import Statement
from pevpm.vm.kernel.collectives.call import FAMILY_OF, CollectiveCall, normalise_size
from pevpm.vm.kernel.collectives.classes import RankClasses
from pevpm.vm.kernel.collectives.classes import rank_classes as _rank_classes
from pevpm.vm.kernel.collectives.compiled import compile_script
from pevpm.vm.kernel.collectives.script import REQUEST_PREFIX, RankScript
from pevpm.vm.kernel.collectives.selection import ALGORITHMS, CODE_WRITERS
from pevpm.vm.kernel.collectives.tags import COLLECTIVE_TAG_BASE, collective_tag, is_collective_tag
from pevpm.vm.kernel.collectives.timed import synchronised_completion, synchronised_start

DEFAULT_CONFIG = CollectiveConfig()


def _nbytes(op: str, size, numprocs: int) -> int:
    size = normalise_size(op, size, numprocs)
    return max(size) if isinstance(size, tuple) else size


def algorithm_for(op: str, size, numprocs: int,
                  config: CollectiveConfig | None = DEFAULT_CONFIG) -> str:
    """Name of the algorithm ``config`` (None: the default) picks for this call."""
    if op not in FAMILY_OF:
        raise ModelError(f"{op} is not a collective operation")
    return (config or DEFAULT_CONFIG).algorithm(op, _nbytes(op, size, numprocs), numprocs)


def is_timed(op: str, size, numprocs: int,
             config: CollectiveConfig | None = DEFAULT_CONFIG) -> bool:
    """True when the call is timed whole (hardware or measured), not expanded."""
    return _is_timed(op, tuple(size) if isinstance(size, list) else size, numprocs,
                     config or DEFAULT_CONFIG)


@lru_cache(maxsize=4096)
def _is_timed(op, size, numprocs, config) -> bool:
    return algorithm_for(op, size, numprocs, config) in TIMED_ALGORITHMS


def expand(op: str, size, root: int | None, rank: int, numprocs: int,
           config: CollectiveConfig | None = DEFAULT_CONFIG) -> tuple[Statement, ...]:
    """The statements ``rank`` runs for one call of collective ``op``.

    ``config`` None means the default (``mpich``) configuration.
    ``size`` follows :mod:`pevpm.vm.kernel.collectives.call` (a list of block
    sizes for the v-variants); ``root`` is ignored by unrooted collectives.
    """
    if isinstance(size, list):
        size = tuple(size)
    return _expand(op, size, root or 0, rank, numprocs, config or DEFAULT_CONFIG)


def expand_code(op: str, size, root: int | None, rank: int, numprocs: int,
                config: CollectiveConfig | None, where: str) -> tuple[tuple, ...]:
    """What :func:`expand` gives, as the engines' compact code for the call at ``where``
    (see :mod:`pevpm.vm.kernel.collectives.compiled`)."""
    if isinstance(size, list):
        size = tuple(size)
    config = config or DEFAULT_CONFIG
    call, name = _call(op, size, root or 0, rank, numprocs, config)
    writer = CODE_WRITERS.get(call.family, {}).get(name)
    if writer is not None and numprocs > 1:
        return writer(call, config.options, collective_tag(call.family), where)
    return compile_script(_run(call, name, config).finish(), where)


def rank_classes(op: str, size, root: int | None, numprocs: int,
                 config: CollectiveConfig | None = DEFAULT_CONFIG) -> RankClasses | None:
    """Which ranks of a call of ``op`` run the same code, peers relative
    (:mod:`pevpm.vm.kernel.collectives.classes`); None where each rank's is its own
    (an algorithm without a rule there, a counts array, a call timed whole).

    >>> rank_classes("MPI_Allreduce", 8, None, 4).of.tolist()
    [0, 0, 0, 0]
    """
    if not isinstance(size, int):
        return None
    name = algorithm_for(op, size, numprocs, config)
    return _rank_classes(FAMILY_OF[op], name, root or 0, numprocs)


@lru_cache(maxsize=65536)
def _expand(op, size, root, rank, numprocs, config) -> tuple[Statement, ...]:
    return _script(op, size, root, rank, numprocs, config).statements()


def _call(op, size, root, rank, numprocs, config) -> tuple[CollectiveCall, str]:
    """The call and the name of the (expanded) algorithm that runs it."""
    call = CollectiveCall(op, size, root=root, rank=rank, numprocs=numprocs)
    name = config.algorithm(op, call.nbytes, numprocs)
    if name in TIMED_ALGORITHMS:
        raise ModelError(f"{op} uses the {name} algorithm, which is timed whole, not expanded")
    return call, name


def _script(op, size, root, rank, numprocs, config) -> RankScript:
    return _run(*_call(op, size, root, rank, numprocs, config), config)


def _run(call: CollectiveCall, name: str, config) -> RankScript:
    """The script algorithm ``name`` writes for ``call``."""
    script = RankScript(call.rank, collective_tag(call.family))
    if call.numprocs > 1:
        ALGORITHMS[call.family][name](script, call, config.options)
    return script


def timed_completion(op: str, size, root: int | None, entries,
                     config: CollectiveConfig | None, rng: np.random.Generator, *, comm_model=None, node_of=None) -> np.ndarray:
    """Completion time of every rank of a timed collective that the ranks
    entered at ``entries`` (one time per rank, on the virtual clock).

    ``hardware`` needs the engine's ``comm_model`` (and ``node_of(rank)``
    when ranks share nodes); ``measured`` needs ``config.measured``.
    """
    entries = np.asarray(entries, dtype=float)
    numprocs = len(entries)
    config = config or DEFAULT_CONFIG
    root = root or 0
    name = algorithm_for(op, size, numprocs, config)
    if name == HARDWARE:
        if comm_model is None:
            raise ModelError(f"hardware {op} needs the machine's communication model")
        source: CollectiveTimes = HardwareTimes(comm_model, node_of)
    elif name == MEASURED:
        if config.measured is None:
            raise ModelError(f"{op} has no known algorithm here and no measured "
                             "distribution was given (add the collective to the profile)")
        source = config.measured
    else:
        raise ModelError(f"{op} uses the {name} algorithm, which is expanded, not timed")
    offsets = source.sample(op, _nbytes(op, size, numprocs), root=root, numprocs=numprocs,
                            rng=rng)
    return synchronised_completion(op, root, entries, offsets)

__all__ = [
    "ALGORITHMS",
    "COLLECTIVE_TAG_BASE",
    "DEFAULT_THRESHOLDS",
    "LIBRARIES",
    "REQUEST_PREFIX",
    "AlgorithmOptions",
    "CollectiveConfig",
    "CollectiveTimes",
    "DistributionTimes",
    "HardwareTimes",
    "ProfileTimes",
    "RankClasses",
    "algorithm_for",
    "collective_tag",
    "expand",
    "expand_code",
    "is_collective_tag",
    "is_timed",
    "rank_classes",
    "synchronised_completion",
    "synchronised_start",
    "timed_completion",
]
