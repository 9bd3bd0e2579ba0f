"""MPI_Barrier: binomial fan-in + zero-byte broadcast (MPICH 1.x), dissemination.

>>> from pevpm.vm.kernel.collectives.call import CollectiveCall
>>> from pevpm.vm.kernel.collectives.script import RankScript
>>> s = RankScript(0, -1)
>>> dissemination(s, CollectiveCall("MPI_Barrier", 0, root=0, rank=0, numprocs=5),
...               AlgorithmOptions())
>>> [(m.dst.evaluate({}), m.src.evaluate({})) for m in s.statements()]
[(1, 4), (2, 3), (4, 1)]
"""

from __future__ import annotations

from pevpm.machine.collectives import AlgorithmOptions
from pevpm.vm.kernel.collectives.call import CollectiveCall
from pevpm.vm.kernel.collectives.moves import tree_fan_in, tree_fan_out
from pevpm.vm.kernel.collectives.script import RankScript
from pevpm.vm.kernel.collectives.tags import collective_tag
from pevpm.vm.kernel.collectives.trees import ceil_log2


def binomial(s: RankScript, call: CollectiveCall, opts: AlgorithmOptions) -> None:
    """Zero-byte messages up the binomial tree to rank 0 (``ceil(log2 n)``
    levels), then a zero-byte binomial broadcast back down."""
    at_zero = CollectiveCall("MPI_Barrier", 0, root=0, rank=call.rank, numprocs=call.numprocs)
    tree_fan_in(s, at_zero, lambda rel: 0)
    ack = collective_tag("barrier", "ack") if opts.acknowledgements else None
    tree_fan_out(s, at_zero, lambda rel: 0, order=opts.child_order, ack_tag=ack,
                 tag=collective_tag("barrier", "second"))


def dissemination(s: RankScript, call: CollectiveCall, opts: AlgorithmOptions) -> None:
    """``ceil(log2 n)`` rounds; in round ``k`` send to ``r + 2^k`` and receive
    from ``r - 2^k`` (zero bytes)."""
    n, r = call.numprocs, call.rank
    for k in range(ceil_log2(n)):
        s.sendrecv((r + (1 << k)) % n, 0, (r - (1 << k)) % n)


ALGORITHMS = {"binomial": binomial, "dissemination": dissemination}
