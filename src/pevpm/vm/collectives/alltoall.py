"""MPI_Alltoall: linear, scattered, circular, pairwise, Bruck.

Every rank sends a distinct ``size``-byte block to every other rank.

>>> from pevpm.vm.collectives.call import CollectiveCall
>>> from pevpm.vm.collectives.script import RankScript
>>> s = RankScript(2, -1)
>>> circular(s, CollectiveCall("MPI_Alltoall", 8, root=0, rank=2, numprocs=4), AlgorithmOptions())
>>> [(m.dst.evaluate({}), m.src.evaluate({})) for m in s.statements()]
[(3, 1), (0, 0), (1, 3)]
"""

from __future__ import annotations

from pevpm.machine.collectives import AlgorithmOptions, is_pow2
from pevpm.vm.collectives.call import CollectiveCall
from pevpm.vm.collectives.script import RankScript
from pevpm.vm.collectives.trees import ceil_log2


def _post_all(s: RankScript, call: CollectiveCall, receive_from: list[int],
              send_to: list[int]) -> None:
    for partner in receive_from:
        s.irecv(partner, call.size)
    for partner in send_to:
        s.isend(partner, call.size)
    s.waitall()


def linear(s: RankScript, call: CollectiveCall, opts: AlgorithmOptions) -> None:
    """MPICH 1.2: Irecv from and Isend to ranks 0, 1, ..., n-1, then Waitall:
    every rank hits rank 0 first, then rank 1, ... (the thesis's hot spot)."""
    partners = [r for r in range(call.numprocs) if r != call.rank]
    _post_all(s, call, partners, partners)


def scattered(s: RankScript, call: CollectiveCall, opts: AlgorithmOptions) -> None:
    """MPICH's medium-size alltoall: partners at distance ``d`` = 0, 1, ..., n-1
    in batches of ``opts.alltoall_throttle`` (all at once for 0): Irecv from
    ``r + d``, Isend to ``r - d``, then Waitall, batch after batch (distance 0,
    the rank itself, is a local copy and sends nothing here).

    >>> s = RankScript(1, -1)
    >>> scattered(s, CollectiveCall("MPI_Alltoall", 8, root=0, rank=1, numprocs=5),
    ...           AlgorithmOptions(alltoall_throttle=2))
    >>> [m.op[4:] + (str(m.src) if m.op == "MPI_Irecv" else str(m.dst) if m.dst else "")
    ...  for m in s.statements()]
    ['Irecv2', 'Isend0', 'Waitall', 'Irecv3', 'Irecv4', 'Isend4', 'Isend3', 'Waitall', 'Irecv0', 'Isend2', 'Waitall']
    """
    n, r = call.numprocs, call.rank
    batch = opts.alltoall_throttle or n
    for first in range(0, n, batch):
        distances = [d for d in range(first, min(first + batch, n)) if d]
        _post_all(s, call, [(r + d) % n for d in distances], [(r - d) % n for d in distances])


def circular(s: RankScript, call: CollectiveCall, opts: AlgorithmOptions) -> None:
    """``n - 1`` Sendrecv steps: step ``i`` sends to ``r + i`` and receives from ``r - i``."""
    n, r = call.numprocs, call.rank
    for i in range(1, n):
        s.sendrecv((r + i) % n, call.size, (r - i) % n)


def pairwise(s: RankScript, call: CollectiveCall, opts: AlgorithmOptions) -> None:
    """``n - 1`` Sendrecv steps with partner ``r ^ i`` (each step a perfect
    pairing) for a power-of-two ``n``; the circular schedule otherwise."""
    if not is_pow2(call.numprocs):
        circular(s, call, opts)
        return
    for i in range(1, call.numprocs):
        s.sendrecv(call.rank ^ i, call.size, call.rank ^ i)


def bruck(s: RankScript, call: CollectiveCall, opts: AlgorithmOptions) -> None:
    """Message combining for small blocks: ``ceil(log2 n)`` steps; in step
    ``k`` each rank sends to ``r + 2^k`` (and receives from ``r - 2^k``) every
    block whose distance has bit ``k`` set, about ``n/2`` blocks at once."""
    n, r = call.numprocs, call.rank
    for k in range(ceil_log2(n)):
        step = 1 << k
        blocks = sum(1 for d in range(1, n) if d & step)
        s.sendrecv((r + step) % n, blocks * call.size, (r - step) % n)


ALGORITHMS = {"linear": linear, "scattered": scattered, "circular": circular,
              "pairwise": pairwise, "bruck": bruck}
