"""Reductions: MPI_Reduce, MPI_Allreduce, MPI_Reduce_scatter, MPI_Scan.

The data movement of a gather (and broadcast or scatter), full-size
messages instead of blocks, plus the operator's cost
(``reduce_cost_per_byte`` x bytes combined) after each receive.

>>> from pevpm.vm.kernel.collectives.call import CollectiveCall
>>> from pevpm.vm.kernel.collectives.script import RankScript
>>> s = RankScript(0, -1)
>>> reduce_binomial(s, CollectiveCall("MPI_Reduce", 100, root=0, rank=0, numprocs=4),
...                 AlgorithmOptions(reduce_cost_per_byte=1e-9))
>>> [type(m).__name__ for m in s.statements()]
['Message', 'Serial', 'Message', 'Serial']
"""

from __future__ import annotations

from pevpm.machine.collectives import AlgorithmOptions
from pevpm.vm.kernel.collectives.call import CollectiveCall
from pevpm.vm.kernel.collectives.moves import (
    linear_fan_in,
    linear_fan_out,
    tree_fan_in,
    tree_fan_out,
)
from pevpm.vm.kernel.collectives.script import RankScript
from pevpm.vm.kernel.collectives.tags import collective_tag
from pevpm.vm.kernel.collectives.trees import floor_pow2


def _at(call: CollectiveCall, root: int, size: int) -> CollectiveCall:
    return CollectiveCall("MPI_Reduce", size, root=root, rank=call.rank, numprocs=call.numprocs)


def reduce_binomial(s: RankScript, call: CollectiveCall, opts: AlgorithmOptions) -> None:
    """Partial results climb the binomial tree (smallest subtree first)."""
    tree_fan_in(s, call, lambda rel: call.size,
                combine_seconds=lambda rel: opts.combine(call.size))


def reduce_linear(s: RankScript, call: CollectiveCall, opts: AlgorithmOptions) -> None:
    """The root receives every buffer in rank order and combines each."""
    linear_fan_in(s, call, lambda rel: call.size,
                  combine_seconds=lambda rel: opts.combine(call.size))


def allreduce_reduce_bcast(s: RankScript, call: CollectiveCall, opts: AlgorithmOptions) -> None:
    """MPICH 1.x: binomial reduce to rank 0, then binomial broadcast."""
    at_zero = _at(call, 0, call.size)
    reduce_binomial(s, at_zero, opts)
    tree_fan_out(s, at_zero, lambda rel: call.size, order=opts.child_order,
                 tag=collective_tag("allreduce", "second"))


def allreduce_recursive_doubling(s: RankScript, call: CollectiveCall,
                                 opts: AlgorithmOptions) -> None:
    """MPICH: fold the ranks beyond the largest power of two ``p`` into their
    neighbours, exchange-and-combine with ``rank ^ 2^k`` among ``p`` ranks,
    then hand the result back to the folded ranks."""
    n, rank, size = call.numprocs, call.rank, call.size
    pof2 = floor_pow2(n)
    extra = n - pof2
    result_tag = collective_tag("allreduce", "second")
    if rank < 2 * extra:
        if rank % 2 == 0:                      # folded out: give data, wait for result
            s.isend(rank + 1, size)
            s.waitall()
            s.recv(rank + 1, size, tag=result_tag)
            return
        s.recv(rank - 1, size)
        s.compute(opts.combine(size))
        newrank = rank // 2
    else:
        newrank = rank - extra

    def real(new: int) -> int:
        return 2 * new + 1 if new < extra else new + extra

    mask = 1
    while mask < pof2:
        partner = real(newrank ^ mask)
        s.sendrecv(partner, size, partner)
        s.compute(opts.combine(size))
        mask <<= 1
    if rank < 2 * extra:
        s.isend(rank - 1, size, tag=result_tag)
    s.waitall()


def reduce_scatter_reduce_scatterv(s: RankScript, call: CollectiveCall,
                                   opts: AlgorithmOptions) -> None:
    """MPICH 1.x: reduce all ``n`` blocks to rank 0, then scatter them linearly."""
    total = call.size * call.numprocs
    reduce_binomial(s, _at(call, 0, total), opts)
    linear_fan_out(s, _at(call, 0, total), lambda rel: call.size,
                   tag=collective_tag("reduce_scatter", "second"))


def reduce_scatter_pairwise(s: RankScript, call: CollectiveCall,
                            opts: AlgorithmOptions) -> None:
    """``n - 1`` steps: send the block for ``r + i`` there, receive this rank's
    block from ``r - i`` and combine it."""
    n, r = call.numprocs, call.rank
    for i in range(1, n):
        s.sendrecv((r + i) % n, call.size, (r - i) % n)
        s.compute(opts.combine(call.size))


def scan_linear(s: RankScript, call: CollectiveCall, opts: AlgorithmOptions) -> None:
    """A chain: receive the prefix from ``r - 1``, combine, pass it to ``r + 1``."""
    r = call.rank
    if r > 0:
        s.recv(r - 1, call.size)
        s.compute(opts.combine(call.size))
    if r < call.numprocs - 1:
        s.isend(r + 1, call.size)
    s.waitall()


def scan_recursive_doubling(s: RankScript, call: CollectiveCall, opts: AlgorithmOptions) -> None:
    """MPICH: exchange partial sums with ``rank ^ 2^k`` and combine, ``ceil(log2 n)`` steps."""
    mask = 1
    while mask < call.numprocs:
        partner = call.rank ^ mask
        if partner < call.numprocs:
            s.sendrecv(partner, call.size, partner)
            s.compute(opts.combine(call.size))
        mask <<= 1


REDUCE_ALGORITHMS = {"binomial": reduce_binomial, "linear": reduce_linear}
ALLREDUCE_ALGORITHMS = {"reduce-bcast": allreduce_reduce_bcast,
                        "recursive-doubling": allreduce_recursive_doubling}
REDUCE_SCATTER_ALGORITHMS = {"reduce-scatterv": reduce_scatter_reduce_scatterv,
                             "pairwise": reduce_scatter_pairwise}
SCAN_ALGORITHMS = {"linear": scan_linear, "recursive-doubling": scan_recursive_doubling}
