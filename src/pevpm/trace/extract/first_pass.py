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
pass lies more than :data:`FACTOR` times outside the later passes' range
(:func:`later_range`: without their outlying :data:`OUTLYING` on each side,
so that one pass a shared core slowed does not widen it) and that
difference is at least :data:`SHARE` of a later pass.  Only the loops of
counts traced with a core per rank vote where a shape has any (a count with
more ranks than cores times the sharing too); and only where its loops run
the same number of passes wherever they are, and that number is not the
rank count or one less where only one count has them.  A loop whose passes
follow the rank count (a receive from every other rank) is a loop over
ranks, whose first pass is one rank's message like the others: set apart,
its count would no longer follow the ranks.

>>> from pevpm.trace.extract.tokens import SERIAL, Token
>>> send = Token(("MPI_Send", 8, 0, 1, 0, None, (), None, None), ())
>>> first = LoopNode(3, (Token(SERIAL, (0.5, 0.01, 0.011)), send))
>>> steady = LoopNode(3, (Token(SERIAL, (0.010, 0.011, 0.0105)), send))
>>> differs(first), differs(steady)
(True, False)
>>> decided({2: [[first], [steady]], 4: [[first]]})[0] == {shape(first.body)}
True
>>> decided({2: [[first], [steady]], 4: [[first]]}, shared={4})[0]   # 1 of 2 at 2 ranks
frozenset()
"""

from __future__ import annotations

import statistics
from collections.abc import Collection

from pevpm.trace.extract.tokens import OP, TAG, LoopNode, is_computation, is_message

#: A first pass differs when it is this many times above the top of the later
#: passes' range, or below its bottom divided by it.
FACTOR = 2.0

#: ... and when the difference is at least this share of a later pass's
#: computations (their medians, summed): jitter in a tiny gap does not count.
SHARE = 0.25

#: The later passes' range leaves out this share of them at each end, rounded
#: down: from 5 later passes on, the largest and the smallest pass do not count
#: (from 10 on, two at each end).  Fewer passes keep their whole range: too few
#: to tell one outlying pass from the spread.
OUTLYING = 0.2


def shape(body) -> tuple:
    """A loop body's calls and tags, without peers or sizes: one key at every rank
    and count."""
    return tuple(t.key if is_computation(t) else (t.key[OP], t.key[TAG]) if is_message(t)
                 else t.key[:1] for t in body)


def later_range(values) -> tuple[float, float]:
    """The smallest and the largest of the later passes (``values[1:]``) once
    their outlying :data:`OUTLYING` at each end is left out.

    >>> later_range([9.0, 1.0, 1.1, 5.8, 0.9, 1.0]), later_range([9.0, 1.0, 5.8])
    ((1.0, 1.1), (1.0, 5.8))
    """
    later = sorted(values[1:])
    out = int(OUTLYING * len(later))
    return later[out], later[-1 - out]


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
    return any(_outside(v[0], *later_range(v))
               and abs(v[0] - statistics.median(v[1:])) >= SHARE * typical
               for v in passes)


def _outside(first: float, low: float, high: float) -> bool:
    return first > FACTOR * high or FACTOR * first < low


def _loops(nodes):
    for n in nodes:
        if isinstance(n, LoopNode):
            yield n
            yield from _loops(n.body)


def decided(by_count: dict[int, list], shared: Collection[int] = frozenset()
            ) -> tuple[frozenset, list[str]]:
    """The shapes whose first pass is set apart, over every program given (each
    rank's compressed program, by rank count; ``shared``: the counts traced
    with more ranks than cores), and a note for each, and for each shape that
    would have been set apart had the shared counts' loops been counted."""
    votes: dict[tuple, dict[int, list[bool]]] = {}
    seen: dict[tuple, set[tuple[int, int]]] = {}
    for numprocs, programs in by_count.items():
        for program in programs:
            for loop in _loops(program):
                verdict = differs(loop)
                if verdict is not None:
                    key = shape(loop.body)
                    votes.setdefault(key, {}).setdefault(numprocs, []).append(verdict)
                    seen.setdefault(key, set()).add((numprocs, loop.count))
    chosen, notes = set(), []
    for key in sorted(votes, key=str):
        if _over_ranks(seen[key]):
            continue
        counts = sorted(n for n in votes[key] if n not in shared) or sorted(votes[key])
        left = sorted(set(votes[key]) - set(counts))
        counted = [v for n in counts for v in votes[key][n]]
        dropped = [v for n in left for v in votes[key][n]]
        if 2 * sum(counted) > len(counted):
            chosen.add(key)
            notes.append(f"the first pass of the loops of {_named(key)} differs from the later "
                         f"ones in {sum(counted)} of their {len(counted)} traced loops (a "
                         f"computation more than {FACTOR:g} times outside the later passes' "
                         f"range, their top and bottom {OUTLYING:.0%} left out; "
                         f"{_passes(seen[key])}{_left(left, dropped)}): taken before the loop "
                         "at every rank and count")
        elif 2 * sum(counted + dropped) > len(counted + dropped):
            notes.append(f"the first pass of the loops of {_named(key)} stays in the loop: it "
                         f"differs in {sum(counted)} of the {len(counted)} loops traced with a "
                         f"core per rank{_left(left, dropped)}")
    return frozenset(chosen), notes


def _left(counts: list[int], verdicts: list[bool]) -> str:
    """What the note says of the loops of the counts left out of the vote."""
    if not counts:
        return ""
    return (f"; the {len(verdicts)} loops at {_listed(counts)} ranks, traced with more ranks "
            f"than cores ({sum(verdicts)} differing), not counted")


def _over_ranks(seen: set[tuple[int, int]]) -> bool:
    """Whether loops seen as (rank count, passes) may follow the rank count: their
    passes differ, or one count has them and they are that count or one less."""
    if len({c for _, c in seen}) > 1:
        return True
    return len(seen) == 1 and any(c in (n - 1, n) for n, c in seen)


def _passes(seen: set[tuple[int, int]]) -> str:
    return f"{next(iter(seen))[1]} passes at {_listed(sorted({n for n, _ in seen}))} ranks"


def _listed(counts: list[int]) -> str:
    return ", ".join(map(str, counts[:-1])) + (" and " if len(counts) > 1 else "") \
        + str(counts[-1])


def _named(key: tuple) -> str:
    calls = [k[0] for k in key if k[0] != "serial"]
    return " ".join(calls) if calls else "computations only"

