"""Expressions over ``procnum`` and ``numprocs`` that reproduce traced peers
and rank sets at every traced rank count.

A peer slot is the list of ``(numprocs, procnum, peer)`` seen at one place of
a program; :func:`peer_expression` gives the first candidate (in the order
people write them: the rank itself, a neighbour modulo ``numprocs``,
rank 0, the last rank, a butterfly partner ``xor(procnum, k)``, a Cartesian shift in
the grid MPI_Dims_create picks, with or without periods) that gives every
one of them, or None.  MPICH's ``MPI_PROC_NULL`` (-1) in a trace is the
model's ``MPI_PROC_NULL``.  :func:`rank_predicate` does the same for the set
of ranks that run one program.

>>> peer_expression([(4, r, (r + 1) % 4) for r in range(4)] + [(2, 0, 1), (2, 1, 0)])
'(procnum + 1) % numprocs'
>>> peer_expression([(8, r, r ^ 2) for r in range(8)])
'xor(procnum, 2)'
>>> from pevpm.model.cartesian import cart_shift
>>> peer_expression([(6, r, cart_shift(r, 6, 2, 0, 1, 0)) for r in range(6)])
'cart_shift(procnum, numprocs, 2, 0, 1, 0)'
>>> rank_predicate({4: [1, 2], 8: [1, 2, 3, 4, 5, 6]})
'procnum > 0 && procnum < numprocs - 1'
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from pevpm.errors import ModelError
from pevpm.model.expr import PROC_NULL, Expr

#: MPI_PROC_NULL as MPICH's tracer records it.
TRACED_PROC_NULL = -1


def _peer_candidates(source: bool = False) -> list[str]:
    out = ["procnum"]
    for k in (1, 2, 3):
        out += [f"(procnum + {k}) % numprocs", f"(procnum + numprocs - {k}) % numprocs"]
    out += ["(procnum + numprocs / 2) % numprocs", "0", "numprocs - 1"]
    out += [f"xor(procnum, {1 << j})" for j in range(12)]
    for ndims in (2, 3):
        for dim in range(ndims):
            for disp in ((-1, 1) if source else (1, -1)):
                for periodic in (1, 0):
                    out.append(f"cart_shift(procnum, numprocs, {ndims}, {dim}, {disp}, "
                               f"{periodic})")
    return out


PEER_CANDIDATES = tuple(_peer_candidates())
#: The same for a source: each Cartesian shift by -1 before +1, so that where a
#: dimension of 2 cannot tell them apart (every grid of 4 ranks) a rank that sends
#: by +1 receives by -1, a shift, and not from the rank it sends to (NPB MG's model
#: deadlocked at 16 ranks so).
SOURCE_CANDIDATES = tuple(_peer_candidates(source=True))

RANK_PREDICATES = ("1", "procnum == 0", "procnum == numprocs - 1", "procnum > 0",
                   "procnum < numprocs - 1", "procnum > 0 && procnum < numprocs - 1",
                   "procnum % 2 == 0", "procnum % 2 == 1",
                   "procnum % 2 == 0 && procnum > 0",
                   "procnum % 2 == 0 && procnum < numprocs - 1",
                   "procnum % 2 == 1 && procnum < numprocs - 1",
                   "procnum % 2 == 0 && procnum > 0 && procnum < numprocs - 1")

#: Roots of collectives: a fixed rank is likelier than one relative to procnum.
ROOT_CANDIDATES = ("0", "numprocs - 1", "procnum")


@cache
def _parsed(text: str) -> Expr:
    return Expr.parse(text)


def _value(text: str, numprocs: int, procnum: int):
    try:
        return _parsed(text).evaluate({"numprocs": numprocs, "procnum": procnum})
    except ModelError:
        return None


def fits(text: str, seen: Iterable[tuple[int, int, int]]) -> bool:
    """Whether ``text`` gives every traced ``(numprocs, procnum, peer)``."""
    for numprocs, procnum, peer in seen:
        want = PROC_NULL if peer == TRACED_PROC_NULL else peer
        if _value(text, numprocs, procnum) != want:
            return False
    return True


def peer_expression(seen: list[tuple[int, int, int]], root: bool = False,
                    first: tuple[str, ...] = (), source: bool = False) -> str | None:
    """The first candidate that reproduces every traced peer (``root``: a
    collective's root, where fixed ranks come first; ``first``: candidates
    tried right after ``procnum``, the shifts on the program's own grid;
    ``source``: a receive's source, :data:`SOURCE_CANDIDATES`), else None (a
    literal rank when every one is the same)."""
    candidates = SOURCE_CANDIDATES if source else PEER_CANDIDATES
    for text in (ROOT_CANDIDATES if root else ()) + candidates[:1] + first + candidates[1:]:
        if fits(text, seen):
            return text
    peers = {peer for _, _, peer in seen}
    if len(peers) == 1:
        return str(peers.pop())
    return None


def selected(predicate: str, numprocs: int) -> list[int]:
    """The ranks of ``numprocs`` on which ``predicate`` holds.

    >>> selected("procnum > 0 && procnum < numprocs - 1", 4)
    [1, 2]
    """
    return [r for r in range(numprocs) if _value(predicate, numprocs, r)]


def rank_predicate(ranks: dict[int, list[int]]) -> str | None:
    """The first predicate true exactly on ``ranks[numprocs]`` at each traced count."""
    for text in RANK_PREDICATES:
        if all(selected(text, n) == sorted(chosen) for n, chosen in ranks.items()):
            return text
    return None


def literal_predicate(ranks: list[int]) -> str:
    """``procnum == a || procnum == b ...``: the ranks of one count, as they are.

    >>> literal_predicate([0, 3])
    'procnum == 0 || procnum == 3'
    """
    return " || ".join(f"procnum == {r}" for r in ranks)
