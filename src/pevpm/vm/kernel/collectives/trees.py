"""Binomial trees over ranks relative to a root, as MPICH builds them.

Relative rank ``r`` (``(rank - root) mod n``) receives from ``r`` with its
lowest set bit cleared and is the parent of ``r + 2^j`` for every ``2^j``
below that bit (the root: every ``2^j < n``), as long as the child is below
``n``.  The tree is built by program for any ``n``; for powers of two it is
the thesis's Figure 46 tree up to relabelling (mirror the bits).

The child at ``r + 2^j`` heads a subtree of ``2^j`` ranks (fewer at the
right edge), so sending to the largest ``j`` first serves the largest
subtree first, as MPICH does.

>>> binomial_children(0, 16)
[8, 4, 2, 1]
>>> binomial_children(0, 16, "smallest-first")
[1, 2, 4, 8]
>>> binomial_parent(14), binomial_children(12, 16), subtree_size(12, 16)
(12, [14, 13], 4)
>>> binomial_children(4, 6), subtree_size(4, 6)
([5], 2)
"""

from __future__ import annotations

from pevpm.errors import ModelError
from pevpm.machine.collectives import CHILD_ORDERS


def lowest_bit(r: int) -> int:
    return r & -r


def ceil_pow2(n: int) -> int:
    """Smallest power of two >= n (n >= 1)."""
    return 1 << (n - 1).bit_length()


def floor_pow2(n: int) -> int:
    """Largest power of two <= n (n >= 1)."""
    return 1 << (n.bit_length() - 1)


def ceil_log2(n: int) -> int:
    return (n - 1).bit_length()


def relative(rank: int, root: int, n: int) -> int:
    return (rank - root) % n


def absolute(rel: int, root: int, n: int) -> int:
    return (rel + root) % n


def binomial_parent(rel: int) -> int | None:
    """Parent of relative rank ``rel`` (None for the root)."""
    return None if rel == 0 else rel - lowest_bit(rel)


def _span(rel: int, n: int) -> int:
    """Power of two above this rank's children: its lowest bit, or the root's ceiling."""
    return ceil_pow2(n) if rel == 0 else lowest_bit(rel)


def binomial_children(rel: int, n: int, order: str = "largest-first") -> list[int]:
    """Children of ``rel`` in the order its sends go out."""
    if order not in CHILD_ORDERS:
        raise ModelError(f"unknown child order {order!r} (choose from {', '.join(CHILD_ORDERS)})")
    children = []
    mask = _span(rel, n) >> 1
    while mask:
        if rel + mask < n:
            children.append(rel + mask)
        mask >>= 1
    return children if order == "largest-first" else children[::-1]


def subtree_size(rel: int, n: int) -> int:
    """Number of ranks in the subtree headed by ``rel`` (itself included)."""
    return min(_span(rel, n), n - rel)
