"""Loops whose first pass is not like the others: set before the loop.

A program's first pass through a loop often does more (a set-up folded into
it: NPB IS generates its keys in its first ranking) and a loop of two passes
may be two different things that only look alike at a small count (CoMD at 2
ranks exchanges with the same neighbour both ways, so the force computation
before one and nothing before the other fold into one body).  Drawn as one
computation, such passes become a spread that every rank draws on its own,
and every synchronisation waits for the slowest draw.

The decision is one per loop *shape* (:func:`shape`: its body's calls and
tags, no peers and no sizes), made over every rank of every count before the
ranks are grouped, so that ranks and counts keep one program shape: a shape
is set apart where, in more than half of its loops, some computation's first
pass lies more than :data:`FACTOR` times outside the range of the later
passes and that difference is at least :data:`SHARE` of a later pass; and
only where its loops run the same number of passes wherever they are, and
that number is not the rank count or one less where only one count has
them.  A loop whose passes follow the rank count (a receive from every
other rank) is a loop over ranks, whose first pass is one rank's message
like the others: set apart, its count would no longer follow the ranks.

>>> from pevpm.trace.extract.tokens import SERIAL, Token
>>> send = Token(("MPI_Send", 8, 0, 1, 0, None, (), None, None), ())
>>> first = LoopNode(3, (Token(SERIAL, (0.5, 0.01, 0.011)), send))
>>> steady = LoopNode(3, (Token(SERIAL, (0.010, 0.011, 0.0105)), send))
>>> differs(first), differs(steady)
(True, False)
>>> decided({2: [[first], [steady]], 4: [[first]]})[0] == {shape(first.body)}
True
"""

from __future__ import annotations

import statistics

from pevpm.trace.extract.tokens import OP, TAG, LoopNode, is_computation, is_message

#: A first pass differs when it is this many times above the later passes'
#: largest, or below their smallest divided by it.
FACTOR = 2.0

#: ... and when the difference is at least this share of a later pass's
#: computations (their medians, summed): jitter in a tiny gap does not count.
SHARE = 0.25


def shape(body) -> tuple:
    """A loop body's calls and tags, without peers or sizes: one key at every rank
    and count."""
    return tuple(t.key if is_computation(t) else (t.key[OP], t.key[TAG]) if is_message(t)
                 else t.key[:1] for t in body)


def differs(loop: LoopNode) -> bool | None:
    """Whether the loop's first pass differs from the others in a computation
    (None: no computation holds one value a pass)."""
    if not isinstance(loop.count, int) or loop.count < 2:
        return None
    passes = [t.values for t in loop.body
              if is_computation(t) and len(t.values) == loop.count]
    if not passes:
        return None
    typical = sum(statistics.median(v[1:]) for v in passes)
    return any((v[0] > FACTOR * max(v[1:]) or FACTOR * v[0] < min(v[1:]))
               and abs(v[0] - statistics.median(v[1:])) >= SHARE * typical
               for v in passes)


def _loops(nodes):
    for n in nodes:
        if isinstance(n, LoopNode):
            yield n
            yield from _loops(n.body)


def decided(by_count: dict[int, list]) -> tuple[frozenset, list[str]]:
    """The shapes whose first pass is set apart, over every program given (each
    rank's compressed program, by rank count), and a note for each."""
    votes: dict[tuple, list[bool]] = {}
    seen: dict[tuple, set[tuple[int, int]]] = {}
    for numprocs, programs in by_count.items():
        for program in programs:
            for loop in _loops(program):
                verdict = differs(loop)
                if verdict is not None:
                    votes.setdefault(shape(loop.body), []).append(verdict)
                    seen.setdefault(shape(loop.body), set()).add((numprocs, loop.count))
    chosen = frozenset(k for k, v in votes.items() if 2 * sum(v) > len(v)
                       and not _over_ranks(seen[k]))
    notes = [f"the first pass of the loops of {_named(k)} differs from the later ones in "
             f"{sum(votes[k])} of their {len(votes[k])} traced loops (a computation more than "
             f"{FACTOR:g} times outside the later passes' range; {_passes(seen[k])}): taken "
             "before the loop at every rank and count" for k in sorted(chosen, key=str)]
    return chosen, notes


def _over_ranks(seen: set[tuple[int, int]]) -> bool:
    """Whether loops seen as (rank count, passes) may follow the rank count: their
    passes differ, or one count has them and they are that count or one less."""
    if len({c for _, c in seen}) > 1:
        return True
    return len(seen) == 1 and any(c in (n - 1, n) for n, c in seen)


def _passes(seen: set[tuple[int, int]]) -> str:
    counts = sorted({n for n, _ in seen})
    return (f"{next(iter(seen))[1]} passes at " + ", ".join(map(str, counts[:-1]))
            + (" and " if len(counts) > 1 else "") + f"{counts[-1]} ranks")


def _named(key: tuple) -> str:
    calls = [k[0] for k in key if k[0] != "serial"]
    return " ".join(calls) if calls else "computations only"

