"""The ranks of one collective call grouped by the code they run, peers relative.

At a million ranks, expanding every rank's part of an ``MPI_Allreduce``
(:func:`pevpm.vm.kernel.collectives.expand_code`) costs minutes and
gigabytes, yet most algorithms give most ranks the same steps with peers at
the same *relative* place: a binomial tree's interior ranks receive from
``rank - lowbit`` and send to ``rank + 2^j``, a dissemination barrier's
round ``k`` talks to ``rank +- 2^k``, a power-of-two recursive doubling's
round ``k`` to ``rank XOR 2^k``.  :func:`rank_classes` says, for one call,
which class each rank is in (computed for all ranks at once, in numpy) and
names one rank of each: expanding that rank and making its peers relative
gives every rank of its class its code.

Peers are relative in one of two ways (:attr:`RankClasses.xor_extra`):

* a distance: peer ``v`` of rank ``r`` is ``(v - r) mod p`` (every peer when
  ``xor_extra`` is None; the folding steps' sends and receives otherwise);
* for recursive doubling's exchanges (``xor_extra`` the number of ranks
  folded away, ``p`` less the largest power of two): ``virtual(v) XOR
  virtual(r)``, where :func:`virtual` numbers the ranks that take part in
  the exchanges ``0 .. 2^k - 1`` as MPICH does (an odd rank below twice
  ``xor_extra`` is ``r // 2``, a rank above is ``r - xor_extra``).

An algorithm with no rule here (linear fan-outs, whose peers are absolute,
block sizes that vary by rank) gives None: each rank is expanded on its own.

>>> c = rank_classes("allreduce", "recursive-doubling", 0, 6)
>>> c.of.tolist(), c.reps, c.xor_extra
([0, 1, 0, 1, 2, 2], (0, 1, 4), 2)
>>> c = rank_classes("bcast", "binomial", 1, 8)       # the leaves, the root, two inner
>>> c.of.tolist(), c.reps, c.xor_extra
([0, 1, 0, 2, 0, 3, 0, 2], (0, 1, 3, 5), None)
>>> virtual(5, 2), real(virtual(5, 2) ^ 1, 2)
(3, 4)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pevpm.vm.kernel.collectives.trees import ceil_pow2, floor_pow2


@dataclass(frozen=True)
class RankClasses:
    """``of[r]``: rank ``r``'s class (int32); ``reps[k]``: the lowest rank of class
    ``k``; ``xor_extra``: None when every peer is a distance, else exchanges'
    peers are XORs in the folded numbering with this many ranks folded away."""

    of: np.ndarray
    reps: tuple[int, ...]
    xor_extra: int | None = None


def virtual(rank: int, extra: int) -> int:
    """``rank``'s number among the ranks recursive doubling's exchanges run on
    (the odd ones of the first ``2 * extra``, then the rest)."""
    return rank // 2 if rank < 2 * extra else rank - extra


def real(new: int, extra: int) -> int:
    """The rank whose :func:`virtual` number is ``new``."""
    return 2 * new + 1 if new < extra else new + extra


def rank_classes(family: str, algorithm: str, root: int, numprocs: int) -> RankClasses | None:
    """The classes of the ranks of one call of ``family``'s ``algorithm`` (one
    size for every rank) at ``root`` over ``numprocs`` ranks, or None where the
    algorithm has no rule here."""
    rule = _RULES.get((family, algorithm))
    return None if rule is None or numprocs < 2 else rule(root, numprocs)


def _grouped(keys: np.ndarray, xor_extra: int | None = None) -> RankClasses:
    """Classes of equal ``keys``, numbered by their lowest rank."""
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    number = np.empty_like(order)
    number[order] = np.arange(len(order))
    of = number[inverse.reshape(-1)].astype(np.int32)
    return RankClasses(of, tuple(int(r) for r in first[order]), xor_extra)


def _binomial(root: int, n: int) -> RankClasses:
    """A binomial tree at ``root``: a rank's steps follow from its lowest set bit
    (relative to the root; the root's is the ceiling power of two) and how
    many of the children below it exist (``rel + 2^j < n``)."""
    rel = (np.arange(n, dtype=np.int64) - root) % n
    span = np.where(rel == 0, ceil_pow2(n), rel & -rel)
    limit = np.minimum(span, n - rel)
    children = np.frexp((limit - 1).astype(np.float64))[1]      # (limit - 1).bit_length()
    return _grouped(span * 64 + children)


def _one_class(root: int, n: int) -> RankClasses:
    """Every rank runs the same steps at the same distances (a ring, dissemination)."""
    return RankClasses(np.zeros(n, dtype=np.int32), (0,))


def _binomial_at_zero(root: int, n: int) -> RankClasses:
    """Binomial trees at rank 0, whatever the call's root."""
    return _binomial(0, n)


def _recursive_doubling(root: int, n: int) -> RankClasses:
    """MPICH's allreduce: the even ranks below ``2 * extra`` fold into their
    right neighbours, the odd ones there take part for both, the rest as they are."""
    extra = n - floor_pow2(n)
    ranks = np.arange(n, dtype=np.int64)
    keys = np.where(ranks < 2 * extra, ranks % 2, 2)
    return _grouped(keys, extra)


_RULES = {
    ("allreduce", "recursive-doubling"): _recursive_doubling,
    ("allreduce", "reduce-bcast"): _binomial_at_zero,
    ("bcast", "binomial"): _binomial,
    ("reduce", "binomial"): _binomial,
    ("barrier", "binomial"): _binomial_at_zero,
    ("barrier", "dissemination"): _one_class,
    ("allgather", "ring"): _one_class,
}

__all__ = ["RankClasses", "rank_classes", "real", "virtual"]
