"""MPI_Alltoall: linear, scattered, circular, pairwise, Bruck.

Every rank sends a distinct ``size``-byte block to every other rank.

>>> from pevpm.vm.kernel.collectives.call import CollectiveCall
>>> from pevpm.vm.kernel.collectives.script import RankScript
>>> s = RankScript(2, -1)
>>> circular(s, CollectiveCall("MPI_Alltoall", 8, root=0, rank=2, numprocs=4), AlgorithmOptions())
>>> [(m.dst.evaluate({}), m.src.evaluate({})) for m in s.statements()]
[(3, 1), (0, 0), (1, 3)]
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from pevpm.machine.collectives import AlgorithmOptions, is_pow2
from pevpm.vm.kernel.collectives.call import CollectiveCall
from pevpm.vm.kernel.collectives.compiled import instruction_of
from pevpm.vm.kernel.collectives.script import MESSAGE, REQUEST_PREFIX, WAITALL, RankScript
from pevpm.vm.kernel.collectives.trees import ceil_log2


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


# -- engine code written directly ---------------------------------------------------
# A 1,024-rank alltoall is two million Isends and Irecvs: writing each as a
# script step and compiling it took microseconds apiece.  Every rank's code
# is the same few instructions (an Irecv per source, an Isend per
# destination, the Waitall) in an order given by index arithmetic, so the
# writers below pick them from one table with a numpy index per rank.

def linear_code(call: CollectiveCall, opts: AlgorithmOptions, tag: int,
                where: str) -> tuple[tuple, ...]:
    """The engine code of :func:`linear` (what compiling its script gives).

    >>> code = linear_code(CollectiveCall("MPI_Alltoall", 8, root=0, rank=1, numprocs=3),
    ...                    AlgorithmOptions(), -7, "a.c:1")
    >>> [(ins.call, ins.peer.value) if ins.call != "MPI_Waitall" else ins.call for ins in code]
    [('MPI_Irecv', 0), ('MPI_Irecv', 2), ('MPI_Isend', 0), ('MPI_Isend', 2), 'MPI_Waitall']
    """
    n = call.numprocs
    partners = np.delete(np.arange(n), call.rank)
    return _code(call, tag, where, np.concatenate([partners, n + partners, [2 * n]]))


def scattered_code(call: CollectiveCall, opts: AlgorithmOptions, tag: int,
                   where: str) -> tuple[tuple, ...]:
    """The engine code of :func:`scattered` (what compiling its script gives):
    every rank's slots hold the same signed distances, so its indices are
    ``(rank + distance) mod n`` plus the slot's part of the table.

    >>> code = scattered_code(CollectiveCall("MPI_Alltoall", 8, root=0, rank=1, numprocs=5),
    ...                       AlgorithmOptions(alltoall_throttle=2), -7, "a.c:1")
    >>> [ins.call[4:] + str(ins.peer.value) if ins.call != "MPI_Waitall" else "Waitall"
    ...  for ins in code]
    ['Irecv2', 'Isend0', 'Waitall', 'Irecv3', 'Irecv4', 'Isend4', 'Isend3', 'Waitall', 'Irecv0', 'Isend2', 'Waitall']
    """
    n = call.numprocs
    distance, part = _scattered_slots(n, opts.alltoall_throttle or n)
    return _code(call, tag, where, (call.rank + distance) % n + part)


CODE_WRITERS = {"linear": linear_code, "scattered": scattered_code}


def _code(call: CollectiveCall, tag: int, where: str, index: np.ndarray) -> tuple[tuple, ...]:
    table = _posting_table(call.numprocs, call.size, tag, where)
    return tuple(table[index].tolist())


@lru_cache(maxsize=64)
def _scattered_slots(n: int, batch: int) -> tuple[np.ndarray, np.ndarray]:
    """Per slot of a rank's :func:`scattered` code: the signed distance to its
    partner (0 for a Waitall) and where its part of :func:`_posting_table` starts."""
    distance, part = [], []
    for first in range(0, n, batch):
        distances = [d for d in range(first, min(first + batch, n)) if d]
        if distances:
            distance += distances + [-d for d in distances] + [0]
            part += [0] * len(distances) + [n] * len(distances) + [2 * n]
    return np.array(distance, dtype=np.int64), np.array(part, dtype=np.int64)


@lru_cache(maxsize=64)
def _posting_table(n: int, size: int, tag: int, where: str) -> np.ndarray:
    """The shared instructions (:func:`~pevpm.vm.kernel.collectives.compiled.instruction_of`)
    of an alltoall's posts: index ``p`` the Irecv from rank ``p``, ``n + p`` the
    Isend to ``p``, ``2n`` up to ``3n - 1`` the Waitall.  A message's own rank and
    request do not shape its instruction, so rank 0 and one request name stand
    in for every rank's."""
    request = f"{REQUEST_PREFIX}0"
    receives = [instruction_of((MESSAGE, "MPI_Irecv", size, p, 0, tag, request), where)
                for p in range(n)]
    sends = [instruction_of((MESSAGE, "MPI_Isend", size, 0, p, tag, request), where)
             for p in range(n)]
    waitall = instruction_of((WAITALL, (request,)), where)
    table = np.empty(3 * n, dtype=object)
    for k, ins in enumerate(receives + sends + [waitall] * n):
        table[k] = ins          # one by one: numpy would read a list of tuples as 2-D
    return table
