"""Totals that sibling loops conserve across rank counts: a master's jobs.

A master that primes every worker, answers whichever is done and collects
the last results runs three loops whose counts change with ``numprocs``
(``p - 1``, ``J + 1 - p``, ``p - 1``), while the jobs it hands out (its sends
with one tag in the first two loops) and the results it takes (its receives
with one tag in the last two) are the same ``J`` at every traced count.
Written as fitted, the growing loop would hand out ``p - 1`` jobs beyond
``J + 1`` ranks, more than there are; the program stops at ``J``, and no
trace with more workers than jobs shows it.

:func:`conserved_totals` finds such totals in one level of a program (the
same sibling nodes at each traced count): a point-to-point message kind
(operation and tag) whose loops' passes add up to the same number at every
count, while exactly two of those loops change, one growing and one
shrinking, each with one such message a pass.  Loops linked by totals of the
same size form one :class:`Cap` (a loop in two totals that disagree stays
in the first): its growing loops are to be written
``min(f, J)`` and its shrinking ones ``J - min(g, J)`` (``g`` the growing
partner's count), so the total holds at every count.

>>> from pevpm.trace.extract.tokens import LoopNode, Token
>>> msg = lambda op, tag: Token((op, 8, 0, 1, tag, None, (), None, None), ())
>>> first, answer, last = ([msg("MPI_Send", 1)], [msg("MPI_Recv", 2), msg("MPI_Send", 1)],
...                        [msg("MPI_Recv", 2)])
>>> at = {p: [LoopNode(p - 1, tuple(first)), LoopNode(21 - p, tuple(answer)),
...           LoopNode(p - 1, tuple(last))] for p in (2, 4)}
>>> cap, = conserved_totals(at)
>>> cap.total, sorted(cap.grows), cap.shrinks, cap.kinds
(20, [0, 2], {1: 0}, (('MPI_Send', 1), ('MPI_Recv', 2)))
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from pevpm.trace.extract.compress import POINT_TO_POINT
from pevpm.trace.extract.rank_loops import COUNT
from pevpm.trace.extract.tokens import OP, TAG, LoopNode, Token, is_message


@dataclass(frozen=True)
class Cap:
    """Sibling loops (positions in their level) that conserve ``total`` passes."""

    total: int
    grows: frozenset[int]       # loops whose count grows with numprocs: min(count, total)
    shrinks: dict[int, int]     # loops that shrink, each with its growing partner
    kinds: tuple[tuple[str, int], ...]      # the message kinds (op, tag) conserved


def passes(node: LoopNode, numprocs: int) -> int | None:
    """How many times the loop ran at ``numprocs`` ranks (None: not known)."""
    if isinstance(node.count, int):
        return node.count
    return numprocs - 1 if node.count == COUNT else None


def _kinds(nodes) -> Counter:
    """Point-to-point messages with a tag among ``nodes`` (not inside loops), by
    (op, tag)."""
    return Counter((t.key[OP], t.key[TAG]) for t in nodes
                   if isinstance(t, Token) and is_message(t) and t.key[OP] in POINT_TO_POINT
                   and isinstance(t.key[TAG], int))


def _pairs(nodes_by_p: dict[int, list]) -> list[tuple[tuple[str, int], int, int, int]]:
    """(kind, total, growing loop, shrinking loop) for every conserved kind."""
    ps = sorted(nodes_by_p)
    top = nodes_by_p[ps[-1]]
    counts = {}
    for i, node in enumerate(top):
        if isinstance(node, LoopNode):
            values = [passes(nodes_by_p[p][i], p) for p in ps]
            if None not in values:
                counts[i] = values
    bodies = {i: _kinds(top[i].body) for i in counts}
    straight = _kinds(top)
    out = []
    for kind in dict.fromkeys(k for body in bodies.values() for k in body):
        loops = [i for i in counts if bodies[i][kind]]
        totals = {straight[kind] + sum(bodies[i][kind] * counts[i][j] for i in loops)
                  for j in range(len(ps))}
        varying = [i for i in loops if len(set(counts[i])) > 1]
        if len(loops) < 2 or len(totals) != 1 or len(varying) != 2:
            continue
        grow, shrink = sorted(varying, key=lambda i: counts[i][-1] - counts[i][0], reverse=True)
        if (counts[grow][-1] <= counts[grow][0] or bodies[grow][kind] != 1
                or bodies[shrink][kind] != 1):
            continue
        out.append((kind, counts[grow][0] + counts[shrink][0], grow, shrink))
    return out


def conserved_totals(nodes_by_p: dict[int, list]) -> list[Cap]:
    """The totals conserved by sibling loops of ``nodes_by_p`` (the same level of
    one program at each traced count; two counts or more), loops linked by
    totals of one size joined (see the module's docstring)."""
    if len(nodes_by_p) < 2:
        return []
    caps: list[Cap] = []
    for kind, total, grow, shrink in _pairs(nodes_by_p):
        linked = [c for c in caps if {grow, shrink} & (c.grows | set(c.shrinks))]
        if not linked:
            caps.append(Cap(total, frozenset({grow}), {shrink: grow}, (kind,)))
        elif len(linked) == 1 and linked[0].total == total:
            c = linked[0]
            caps[caps.index(c)] = Cap(total, c.grows | {grow}, {shrink: grow, **c.shrinks},
                                      c.kinds + ((kind,) if kind not in c.kinds else ()))
        # else: a loop in two totals that disagree; the first stands
    return caps
