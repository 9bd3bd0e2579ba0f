"""The registry of collective algorithms: family -> name -> the function that writes it.

Which algorithm a call uses is configuration (:mod:`pevpm.machine.collectives`);
this module maps each name that configuration may choose to the
point-to-point program that implements it.  To add an algorithm, write its
function beside the family's others and add its name to
:data:`pevpm.machine.collectives.ALGORITHM_NAMES`.

>>> sorted(ALGORITHMS["bcast"])
['binomial', 'linear', 'scatter-allgather']
"""

from __future__ import annotations

from collections.abc import Callable

from pevpm.machine.collectives import ALGORITHM_NAMES
from pevpm.vm.kernel.collectives import allgather, alltoall, barrier, bcast, reduce, scatter_gather

#: family -> algorithm name -> function(script, call, options)
ALGORITHMS: dict[str, dict[str, Callable]] = {
    "barrier": barrier.ALGORITHMS,
    "bcast": bcast.ALGORITHMS,
    "scatter": scatter_gather.SCATTER_ALGORITHMS,
    "gather": scatter_gather.GATHER_ALGORITHMS,
    "allgather": allgather.ALGORITHMS,
    "alltoall": alltoall.ALGORITHMS,
    "reduce": reduce.REDUCE_ALGORITHMS,
    "allreduce": reduce.ALLREDUCE_ALGORITHMS,
    "reduce_scatter": reduce.REDUCE_SCATTER_ALGORITHMS,
    "scan": reduce.SCAN_ALGORITHMS,
}
assert {family: tuple(names) for family, names in ALGORITHMS.items()} == ALGORITHM_NAMES

#: family -> algorithm name -> function(call, options, tag, where) giving the engine code
#: that compiling the algorithm's script would (for algorithms whose scripts are huge).
CODE_WRITERS: dict[str, dict[str, Callable]] = {"alltoall": alltoall.CODE_WRITERS,
                                                 "allgather": allgather.CODE_WRITERS}
