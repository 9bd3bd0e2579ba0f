"""MPI_Bcast: binomial tree, linear, and scatter + ring allgather.

>>> from pevpm.vm.kernel.collectives.call import CollectiveCall
>>> from pevpm.vm.kernel.collectives.script import RankScript
>>> s = RankScript(0, -1)
>>> binomial(s, CollectiveCall("MPI_Bcast", 8, root=0, rank=0, numprocs=4), AlgorithmOptions())
>>> [(m.op, m.dst.evaluate({})) for m in s.statements()[:2]]
[('MPI_Isend', 2), ('MPI_Isend', 1)]
"""

from __future__ import annotations

from pevpm.machine.collectives import AlgorithmOptions
from pevpm.vm.kernel.collectives.allgather import ring_blocks
from pevpm.vm.kernel.collectives.call import CollectiveCall
from pevpm.vm.kernel.collectives.moves import linear_fan_out, tree_fan_out
from pevpm.vm.kernel.collectives.script import RankScript
from pevpm.vm.kernel.collectives.tags import collective_tag
from pevpm.vm.kernel.collectives.trees import subtree_size


def binomial(s: RankScript, call: CollectiveCall, opts: AlgorithmOptions) -> None:
    """Every tree edge carries the whole buffer; sends are Isends."""
    ack = collective_tag("bcast", "ack") if opts.acknowledgements else None
    tree_fan_out(s, call, lambda rel: call.size, order=opts.child_order, ack_tag=ack)


def linear(s: RankScript, call: CollectiveCall, opts: AlgorithmOptions) -> None:
    """The root Isends the buffer to every rank in turn."""
    linear_fan_out(s, call, lambda rel: call.size)


def scatter_allgather(s: RankScript, call: CollectiveCall, opts: AlgorithmOptions) -> None:
    """Large buffers (van de Geijn): a binomial scatter of ``ceil(size/n)``-byte
    chunks, then a ring allgather of the chunks."""
    n = call.numprocs
    chunk = -(-call.size // n)

    def chunk_bytes(rel: int) -> int:
        return min(chunk, max(call.size - rel * chunk, 0))

    def subtree_bytes(rel: int) -> int:
        return sum(chunk_bytes(r) for r in range(rel, rel + subtree_size(rel, n)))

    tree_fan_out(s, call, subtree_bytes, order=opts.child_order)
    ring_blocks(s, call, chunk_bytes, tag=collective_tag("bcast", "second"))


ALGORITHMS = {"binomial": binomial, "linear": linear, "scatter-allgather": scatter_allgather}
