"""One law per computation gap across rank arms that run the same code.

An extracted model has one ``Runon`` arm per rank program (rank 0, the
interior ranks, the last rank...), and the interior arms often exist only at
the larger traced counts.  Fitted arm by arm, one stencil sweep got three
laws in three arms (a constant where two counts could not reject it,
``a + c/p`` where three could).  Here the gaps that sit at the same place of
the program in several arms are found and their samples pooled, so that one
law is fitted on all the evidence and every arm writes it:

* a gap beside a landmark every arm has: the start or the end of a loop's
  body (the loop's back edge: the sweep between one iteration's last
  message and the next one's first), a collective (by its operation and its
  order among the body's collectives) or a loop; its other side may be any
  message (the halo exchanges before it differ between arms).  The
  enclosing loops must be the same ones: their order among the loops of
  each level, and the same counts at the traced counts the arms share;
* any gap of a loop body (or of the whole program) whose operations are the
  same in both arms, by its index there.

Arms whose means at a shared count differ by more than :data:`SAME_CODE_SPREAD`
from the pooled mean are taken as running different code there, and keep
their own samples (noted).

>>> from pevpm.trace.extract.tokens import SERIAL, LoopNode, Token
>>> send, recv = Token(("MPI_Send",), ()), Token(("MPI_Recv",), ())
>>> edge = {2: [LoopNode(9, (Token(SERIAL, (4.0,)), send))]}
>>> inner = {4: [LoopNode(9, (Token(SERIAL, (2.0,)), send, Token(SERIAL, (0.1,)), recv))]}
>>> edge[4] = [LoopNode(9, (Token(SERIAL, (2.2,)), send))]
>>> pools = pooled_gaps([edge, inner], [])
>>> sorted(pools[0][(0, 0)].items()), sorted(pools[1][(0, 0)].items())
([(2, (4.0,)), (4, (2.2, 2.0))], [(2, (4.0,)), (4, (2.2, 2.0))])
>>> (0, 2) in pools[1]          # a gap inside the exchange: the edge has none
False
"""

from __future__ import annotations

import statistics

from pevpm.model.ast import COLLECTIVES
from pevpm.trace.extract.repeats import RepeatNode
from pevpm.trace.extract.tokens import OP, LoopNode, is_computation, is_message

#: The largest relative difference between one arm's mean and the pooled mean,
#: at any traced count, for the gap to count as the same code in both.
SAME_CODE_SPREAD = 0.3

#: (arm number, path of indices into its program) -> samples by rank count.
Pools = list[dict[tuple, dict[int, tuple]]]


def _shape(nodes) -> tuple:
    """The operations of ``nodes`` in order, loops with their bodies'."""
    out = []
    for n in nodes:
        if isinstance(n, LoopNode):
            out.append(("loop", _shape(n.body)))
        elif isinstance(n, RepeatNode):
            out.append(("repeat", _shape(n.prefix), _shape(n.rest)))
        else:
            out.append(n.key[0])
    return tuple(out)


def _anchors(body: list) -> list:
    """What each node of ``body`` is to the gaps beside it: a collective by its
    operation and its order among those in the body, a loop by its order
    among the body's loops, any other message ``None`` (peers differ between
    arms: not a landmark)."""
    out, seen, loops = [], {}, 0
    for n in body:
        if isinstance(n, LoopNode | RepeatNode):
            out.append(("loop", loops))
            loops += 1
        elif is_message(n) and n.key[OP] in COLLECTIVES:
            seen[n.key[OP]] = seen.get(n.key[OP], -1) + 1
            out.append((n.key[OP], seen[n.key[OP]]))
        else:
            out.append(None)
    return out


def _gaps(nodes_by_p: dict[int, list], path: tuple, loops: tuple):
    """``(path, keys, loop counts, samples by count)`` of every computation,
    ``loops`` the enclosing loops as ``(landmark, {count: passes})`` (a
    Repeat's passes are the other side's: no counts)."""
    top = max(nodes_by_p)
    body = nodes_by_p[top]
    shape, marks = _shape(body), _anchors(body)
    where = tuple(k[0] for k in loops)
    for i, node in enumerate(body):
        at = {p: nodes[i] for p, nodes in nodes_by_p.items()}
        if isinstance(node, LoopNode):
            counts = {p: n.count for p, n in at.items()}
            yield from _gaps({p: list(n.body) for p, n in at.items()}, path + (i,),
                             loops + ((marks[i], counts),))
        elif isinstance(node, RepeatNode):
            for part, nodes in ((0, "prefix"), (1, "rest")):
                yield from _gaps({p: list(getattr(n, nodes)) for p, n in at.items()},
                                 path + (i, part), loops + ((("repeat", marks[i], part), {}),))
        elif is_computation(node):
            keys = [(where, node.key, "same", shape, i)]
            before = marks[i - 1] if i else "start"
            after = marks[i + 1] if i + 1 < len(body) else "end"
            if before is not None or after is not None:
                keys.append((where, node.key, before, after))
            yield (path + (i,), keys, [k[1] for k in loops],
                   {p: n.values for p, n in at.items() if n.values})


def _agree(a: list[dict], b: list[dict]) -> bool:
    """Enclosing loops with the same counts wherever both were traced."""
    return len(a) == len(b) and all(
        x[p] == y[p] for x, y in zip(a, b) for p in set(x) & set(y))


def _spread_ok(members: list[dict[int, tuple]], pooled: dict[int, tuple]) -> bool:
    """Every member's mean within :data:`SAME_CODE_SPREAD` of the pooled mean."""
    for samples in members:
        for p, values in samples.items():
            whole = statistics.fmean(pooled[p])
            if whole <= 0 or abs(statistics.fmean(values) / whole - 1) > SAME_CODE_SPREAD:
                return False
    return True


def pooled_gaps(arms: list[dict[int, list]], notes: list[str],
                own: list[bool] | None = None) -> Pools:
    """For each arm (its merged program at each traced count), the samples its
    computations are to be fitted on where they pool with other arms': the
    path of indices to the computation -> samples by rank count.  Each gap
    joins the first pool it qualifies for, landmarks' before same bodies';
    pools of one arm are dropped.  An arm marked in ``own`` (one written for
    one traced count only: ``numprocs == 1``) adds its samples to the pools
    but keeps its own values."""
    found = [list(_gaps(programs, (), ())) for programs in arms]
    groups: dict[tuple, list] = {}
    for arm, gaps in enumerate(found):
        for path, keys, counts, samples in gaps:
            for key in keys:
                groups.setdefault(key, []).append((arm, path, counts, samples))
    out: Pools = [{} for _ in arms]
    # landmarks first: they reach the arms whose bodies differ
    for key, members in sorted(groups.items(), key=lambda kv: kv[0][2] == "same"):
        members = [m for m in members if m[1] not in out[m[0]]]
        arms_in = {m[0] for m in members}
        if len(arms_in) < 2 or len(arms_in) < len(members):
            continue        # one arm only, or an arm with two gaps of this key
        if not all(_agree(members[0][2], m[2]) for m in members[1:]):
            continue
        pooled: dict[int, tuple] = {}
        for m in members:
            for p, values in m[3].items():
                pooled[p] = pooled.get(p, ()) + values
        if not pooled:
            continue
        if not _spread_ok([m[3] for m in members], pooled):
            notes.append(f"a gap at the same place in {len(members)} rank arms differs by more "
                         f"than {SAME_CODE_SPREAD:.0%} between them: fitted arm by arm")
            continue
        for arm, path, _, _ in members:
            out[arm][path] = pooled if not (own and own[arm]) else {}
    return out
