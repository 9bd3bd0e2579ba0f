"""MPI_Allgather: gather + bcast, ring, recursive doubling, Bruck.

Every rank contributes a ``size``-byte block and ends with all ``n`` blocks.

>>> from pevpm.vm.kernel.collectives.call import CollectiveCall
>>> from pevpm.vm.kernel.collectives.script import RankScript
>>> s = RankScript(1, -1)
>>> ring(s, CollectiveCall("MPI_Allgather", 8, root=0, rank=1, numprocs=3), AlgorithmOptions())
>>> [(m.op, m.dst.evaluate({}), m.src.evaluate({})) for m in s.statements()]
[('MPI_Sendrecv', 2, 0), ('MPI_Sendrecv', 2, 0)]
"""

from __future__ import annotations

from collections.abc import Callable

from pevpm.errors import ModelError
from pevpm.machine.collectives import AlgorithmOptions, is_pow2
from pevpm.vm.kernel.collectives.call import CollectiveCall
from pevpm.vm.kernel.collectives.compiled import instruction_of
from pevpm.vm.kernel.collectives.moves import linear_fan_in, tree_fan_out
from pevpm.vm.kernel.collectives.script import EXCHANGE, RankScript
from pevpm.vm.kernel.collectives.tags import collective_tag


def ring_blocks(s: RankScript, call: CollectiveCall, block_bytes: Callable[[int], int],
                tag: int | None = None) -> None:
    """``n - 1`` steps; in step ``i`` relative rank ``r`` passes block ``r - i``
    to its right neighbour and receives block ``r - i - 1`` from its left."""
    n, rel = call.numprocs, call.rel
    right, left = call.absolute((rel + 1) % n), call.absolute((rel - 1) % n)
    for i in range(n - 1):
        s.sendrecv(right, block_bytes((rel - i) % n), left,
                   recv_size=block_bytes((rel - i - 1) % n), tag=tag)


def ring(s: RankScript, call: CollectiveCall, opts: AlgorithmOptions) -> None:
    ring_blocks(s, call, lambda rel: call.size)


def ring_code(call: CollectiveCall, opts: AlgorithmOptions, tag: int,
              where: str) -> tuple[tuple, ...]:
    """The engine code of :func:`ring` (what compiling its script gives): its
    ``n - 1`` steps are one instruction, written once.

    >>> code = ring_code(CollectiveCall("MPI_Allgather", 8, root=0, rank=1, numprocs=4),
    ...                  AlgorithmOptions(), -7, "a.c:1")
    >>> len(code), code[0] is code[2], code[0][2].value, code[0][4].value
    (3, True, 2, 0)
    """
    n, rel = call.numprocs, call.rel
    left, right = call.absolute((rel - 1) % n), call.absolute((rel + 1) % n)
    step = (EXCHANGE, call.size, left, right, tag, call.size)
    return (instruction_of(step, where),) * (n - 1)


CODE_WRITERS = {"ring": ring_code}


def gather_bcast(s: RankScript, call: CollectiveCall, opts: AlgorithmOptions) -> None:
    """MPICH 1.x: gather every block to rank 0 in rank order, then broadcast
    all ``n`` blocks from rank 0 down the binomial tree."""
    at_zero = CollectiveCall(call.op, call.size, root=0, rank=call.rank, numprocs=call.numprocs)
    linear_fan_in(s, at_zero, lambda rel: call.size)
    total = call.size * call.numprocs
    tree_fan_out(s, at_zero, lambda rel: total, order=opts.child_order,
                 tag=collective_tag("allgather", "second"))


def recursive_doubling(s: RankScript, call: CollectiveCall, opts: AlgorithmOptions) -> None:
    """Power-of-two ``n`` only: in step ``k`` exchange ``2^k`` blocks with ``rank ^ 2^k``."""
    n = call.numprocs
    if not is_pow2(n):
        raise ModelError(f"recursive-doubling allgather needs a power-of-two number of "
                         f"ranks, not {n} (use ring or bruck)")
    mask = 1
    while mask < n:
        s.sendrecv(call.rank ^ mask, mask * call.size, call.rank ^ mask)
        mask <<= 1


def bruck(s: RankScript, call: CollectiveCall, opts: AlgorithmOptions) -> None:
    """Any ``n``: in step ``k`` send the blocks held so far (at most ``2^k``,
    fewer in the last step) to ``rank - 2^k`` and receive from ``rank + 2^k``."""
    n, rank = call.numprocs, call.rank
    held = 1
    while held < n:
        count = min(held, n - held)
        s.sendrecv((rank - held) % n, count * call.size, (rank + held) % n)
        held += count


ALGORITHMS = {"gather-bcast": gather_bcast, "ring": ring,
              "recursive-doubling": recursive_doubling, "bruck": bruck}
