"""Extract a readable PEVPM model (Python) from traces of one program at one
or more rank counts.

Each rank's replay program (:mod:`pevpm.trace.replay.replay`) becomes a token
stream: a message with its peers' ranks and its requests renamed by slot
(``r0``, ``r1``... the lowest free slot when posted), or a computation with
its seconds.  The stream is compressed: the longest run of a repeated
subsequence (period up to :data:`MAX_PERIOD` tokens, at least two repeats)
becomes a loop, and the parts before and after are compressed the same way.
Ranks of one count whose compressed programs have the same shape (peers
aside) form a group; its peers become expressions of ``procnum`` and
``numprocs`` (:mod:`pevpm.trace.extract.peers`) and its ranks a ``Runon`` condition
that holds at every count.  Groups are matched across counts, and their loop
counts, sizes and mean computations fitted over ``numprocs``
(:mod:`pevpm.trace.extract.scaling`); computations are ``gamma(mean, sd)`` draws.
Every fit and everything not generalised is listed in the notes (the file's
docstring and, from ``pevpm extract``, stderr).

>>> from pevpm.trace.events import Call, Send, Recv, Trace
>>> calls = lambda peer: ((Call("MPI_Init", 0, 0),)
...     + tuple(Call("MPI_Send", 2 * i + 1, 2 * i + 1, (Send(peer, 0, 8),)) for i in range(5))
...     + (Call("MPI_Finalize", 11, 11),))
>>> x = extract(Trace((calls(1), calls(0))))
>>> x.events, x.merged, "with b.loop('parameter loop1'):" in x.text, "'loop1': 5" in x.text
(14, True, True, True)
"""

from __future__ import annotations

import statistics
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field

from pevpm.errors import EventLimitError, PevpmError, WallClockLimitError
from pevpm.machine.comm_models import Constant
from pevpm.machine.machine import Machine
from pevpm.model.ast import Model
from pevpm.model.cartesian import grid as cartesian_grid
from pevpm.model.expr import Expr
from pevpm.trace.events import Collective, Trace
from pevpm.trace.extract.any_source import any_source, any_source_passes, single_passes
from pevpm.trace.extract.compress import POINT_TO_POINT, best_repeat, compressed, is_loose
from pevpm.trace.extract.computations import TIMES_P, argument, evidence, law_of, seconds_source
from pevpm.trace.extract.conservation import Cap, conserved_totals, passes
from pevpm.trace.extract.edges import every_neighbour, grid_sides, united
from pevpm.trace.extract.faces import FaceLaw, face_law, shift_of
from pevpm.trace.extract.first_pass import decided as first_passes
from pevpm.trace.extract.grids import GridRule, NeighbourRule, grid_rule, world_grids
from pevpm.trace.extract.peers import (
    RANK_PREDICATES,
    literal_predicate,
    peer_expression,
    rank_predicate,
    selected,
)
from pevpm.trace.extract.pooling import pooled_gaps
from pevpm.trace.extract.rank_loops import INDEX, rank_loops, signature
from pevpm.trace.extract.repeats import RepeatNode, receive_until_tag
from pevpm.trace.extract.scaling import (
    DISTURBED_NOISE,
    MIN_NOISE,
    NOISE_WIDTH,
    TERMS,
    fit,
)
from pevpm.trace.extract.tokens import (
    DST,
    OP,
    PEER_FIELDS,
    RECV_SIZE,
    REQ,
    REQS,
    ROOT,
    SIZE,
    SLEEP,
    SRC,
    TAG,
    LoopNode,
    Token,
    is_computation,
    is_message,
    launch_skew,
    rank_tokens,
    uses_cpu,
)
from pevpm.trace.extract.trees import Tree, find_trees, model_lines
from pevpm.trace.replay.delays import ready_times
from pevpm.trace.replay.subcomm import TAG as SUBCOMM_TAG
from pevpm.vm.kernel import fastengine
from pevpm.vm.kernel.engine import Limits

#: The width comments in a model file are wrapped to.
MODEL_WIDTH = 100


def _skeleton(nodes, numbers: bool = True) -> tuple:
    """The program's shape without its peers; without loop counts and sizes too
    unless ``numbers``: ranks of one count group by the first, counts match by
    the second."""
    out = []
    for n in nodes:
        if isinstance(n, LoopNode):
            out.append(("loop", n.count if numbers else None, _skeleton(n.body, numbers)))
        elif isinstance(n, RepeatNode):
            out.append(("repeat", n.stop, n.status, _skeleton(n.prefix, numbers),
                        _skeleton(n.rest, numbers)))
        elif is_computation(n):
            out.append(n.key)
        elif not is_message(n):         # a tree: its sizes are numbers
            out.append(n.key if numbers else n.key[:-1])
        else:
            k = n.key
            out.append((k[OP], k[SIZE] if numbers else None, k[SRC] is None,
                        k[DST] is None, k[TAG], k[REQ], k[REQS], k[ROOT] is None,
                        k[RECV_SIZE] if numbers else None))
    return tuple(out)


def _tokens_in_order(nodes):
    for n in nodes:
        if isinstance(n, LoopNode):
            yield from _tokens_in_order(n.body)
        elif isinstance(n, RepeatNode):
            yield from _tokens_in_order(n.prefix + n.rest)
        elif is_message(n):
            yield n


def _peer_values(program) -> list:
    """Every peer field of every message, in program order (None where absent)."""
    return [t.key[f] for t in _tokens_in_order(program) for f in PEER_FIELDS]


def _merge(programs: list[list]) -> list:
    """Programs of the same shape as one, computations pooled position by position."""
    first = programs[0]
    out = []
    for i, node in enumerate(first):
        if isinstance(node, LoopNode):
            out.append(LoopNode(node.count, tuple(_merge([list(p[i].body) for p in programs]))))
        elif isinstance(node, RepeatNode):
            out.append(RepeatNode(tuple(_merge([list(p[i].prefix) for p in programs])),
                                  tuple(_merge([list(p[i].rest) for p in programs])),
                                  node.stop, node.status, sum(p[i].passes for p in programs)))
        else:
            out.append(Token(node.key, tuple(v for p in programs for v in p[i].values)))
    return out


@dataclass
class _Group:
    """Ranks of one trace that run one program (peers aside)."""

    numprocs: int
    ranks: list[int]
    programs: list[list]
    united: bool = False    # the union of programs that differed in their neighbours

    def peer_slots(self) -> list[list[tuple[int, int, int]]]:
        values = [_peer_values(p) for p in self.programs]
        return [[(self.numprocs, r, v[i]) for r, v in zip(self.ranks, values)]
                for i in range(len(values[0]))]



@dataclass
class _Hints:
    """What each rank's program had at the larger counts, for the smaller ones:
    tags received from any source and replies (by rank), loops over every
    other rank and loops of any-source receives (their signatures), which one
    worker at 2 ranks cannot show."""

    any_source: dict = field(default_factory=dict)
    rank_loops: set = field(default_factory=set)
    passes: set = field(default_factory=set)
    firsts: frozenset = frozenset()     # loop shapes whose first pass is set apart
    # whether the largest count with a long program set its sizes aside (None: none
    # had one): a smaller count sets them aside only where it did, so that the
    # counts' loops are cut alike
    loose: bool | None = None
    kept: set = field(default_factory=set)  # counts that kept sizes only for that

    def program(self, tokens: list[Token], rank: int, numprocs: int, found: _Hints) -> list:
        """The rank's compressed program; what it had goes into ``found``."""
        tokens, tags = any_source(tokens, self.any_source.get(rank))
        program, halves = compressed(rank_loops(tokens, rank, numprocs,
                                                frozenset(self.rank_loops)),
                                     self.firsts, loosen=self.loose is not False)
        if halves is not None:
            found.loose = bool(found.loose) or (halves and self.loose is not False)
        if halves and self.loose is False:
            found.kept.add(numprocs)
        program = single_passes(receive_until_tag(program), self.passes)
        if tags[0]:
            found.any_source[rank] = tags
        found.rank_loops |= {signature(n.body) for n in program
                             if isinstance(n, LoopNode) and isinstance(n.count, str)}
        found.passes |= any_source_passes(program)
        return program

    def joined(self, other: _Hints) -> _Hints:
        return _Hints({**other.any_source, **self.any_source},
                      self.rank_loops | other.rank_loops, self.passes | other.passes,
                      self.firsts, other.loose if self.loose is None else self.loose,
                      self.kept | other.kept)


#: What a program's peers are written on: its Cartesian communicator's grid, or
#: the grid its ranks were united on.
Rule = GridRule | NeighbourRule


def _first(grid: Rule | None, slot: int) -> tuple[str, ...]:
    """The peer candidates the program's grid offers the ``slot``-th peer field
    of a program (its sources and destinations; none for roots)."""
    field = PEER_FIELDS[slot % len(PEER_FIELDS)]
    return () if grid is None or field == ROOT else grid.candidates(source=field == SRC)


def _expressible(group: _Group, grid: Rule | None) -> bool:
    """Whether an expression of procnum and numprocs gives each of the group's peers."""
    return all(peer_expression(slot, first=_first(grid, i)) is not None
               for i, slot in enumerate(group.peer_slots()) if isinstance(slot[0][2], int))


def _united(by_count: dict[int, list[_Group]], grid: GridRule | None,
            notes: list[str]) -> Rule | None:
    """The largest count's groups as one (:mod:`pevpm.trace.extract.edges`: the
    messages a rank did not make are made to MPI_PROC_NULL), noted, where some
    of them match no other count's and the union's peers are expressions: by
    the peers' offsets, else (no Cartesian communicator) by the directions on
    a 3-D, then a 2-D grid of MPI_Dims_create's.  The rule the peers are
    written on from then on (``grid``, or the :class:`NeighbourRule` that
    united them)."""
    top = max(by_count)
    groups = by_count[top]
    matched = [len(by_count) > 1 and len(_best_match(g, by_count)[1]) > 1 for g in groups]
    if len(groups) < 2 or all(matched):
        return grid
    programs = {r: p for g in groups for r, p in zip(g.ranks, g.programs)}
    ranks = sorted(programs)
    tries: list[tuple[Rule | None, Callable | None]] = [(grid, None)]
    # on a small grid every rank is some neighbour of every other (on 2 x 2 x 2, all
    # seven): directions only where no program of the count is one a smaller count has
    # and each rank exchanges with all of its neighbours on the grid (LULESH's 26)
    if grid is None and not any(matched):
        tries += [(NeighbourRule(d), grid_sides(top, d)) for d in (3, 2)
                  if every_neighbour([programs[r] for r in ranks], ranks, top, d)]
    for rule, side in tries:
        padded = united([programs[r] for r in ranks], ranks, *([side] if side else []))
        group = padded and _Group(top, ranks, padded, united=True)
        if group and _expressible(group, rule):
            break
    else:
        return grid
    by_count[top] = [_folded(group)]
    how = ("" if side is None else f", diagonal ones too, each side named by its direction "
           f"on the {rule.ndims}-D grid of MPI_Dims_create({top}): "
           f"{' x '.join(map(str, cartesian_grid(top, rule.ndims)))}")
    notes.append(f"the {len(groups)} programs of the {top}-rank trace differ only in which "
                 f"neighbours they exchange with (a grid without periods{how}): they are one, "
                 "each message a rank did not make made to or from MPI_PROC_NULL there, its "
                 "peers guarded by whether the neighbour exists (inferred: the traced count's "
                 "pattern at every count past the traced ones)")
    if by_count[top][0] is not group:
        notes.append(f"the united program of the {top}-rank trace repeats: its repeats are "
                     f"loops (up to {UNITED_PERIOD} statements a pass, longer than one rank's "
                     "programs were searched for)")
    return rule


#: Longest cycle looked for in a united program, in statements: one rank's
#: period (compress.MAX_PERIOD tokens) is too short for a cycle that exchanges
#: with every one of 26 neighbours several times (LULESH's corners).
UNITED_PERIOD = 1024


def _exact(node) -> tuple:
    """A statement's key, peers, counts and sizes included: repetitions with the
    same are one statement run again."""
    if isinstance(node, LoopNode):
        return ("loop", node.count, tuple(map(_exact, node.body)))
    if isinstance(node, RepeatNode):
        return ("repeat", node.stop, node.status, tuple(map(_exact, node.prefix)),
                tuple(map(_exact, node.rest)))
    return node.key


def _cycles(program: list) -> list:
    """``program``'s longest repeat of statements (loops among them) as a loop,
    its passes merged, and the parts around it the same way."""
    index: dict[tuple, int] = {}
    found = best_repeat([index.setdefault(_exact(n), len(index)) for n in program],
                        UNITED_PERIOD)
    if found is None:
        return list(program)
    start, period, count = found
    passes = [list(program[start + k * period:start + (k + 1) * period]) for k in range(count)]
    return (_cycles(program[:start]) + [LoopNode(count, tuple(_merge(passes)))]
            + _cycles(program[start + count * period:]))


def _folded(group: _Group) -> _Group:
    """The united group with the cycles of its padded programs as loops, where
    every rank's fold alike (else the group as it was): a union is longer than
    any one rank's program, so its cycles were not found rank by rank."""
    programs = [_cycles(p) for p in group.programs]
    if len({_skeleton(p) for p in programs}) > 1:
        return group
    return _Group(group.numprocs, group.ranks, programs, united=True)


def _groups(numprocs: int, streams: list[list[Token]], hints: _Hints | None = None,
            found: _Hints | None = None, grid: GridRule | None = None) -> list[_Group]:
    """Ranks grouped by program; a group whose peers no expression gives is split
    by the peers' offsets from procnum."""
    n = numprocs
    hints, found = hints or _Hints(), found if found is not None else _Hints()
    programs = [hints.program(tokens, r, n, found) for r, tokens in enumerate(streams)]
    by_shape: dict[tuple, list[int]] = {}
    for r, program in enumerate(programs):
        by_shape.setdefault(_skeleton(program), []).append(r)
    by_shape, programs = _sizes_aside(by_shape, programs)
    out = []
    for ranks in by_shape.values():
        group = _Group(n, ranks, [programs[r] for r in ranks])
        if _expressible(group, grid):
            out.append(group)
        else:
            out += _split_by_offsets(group)
    return out


def _grouped(streams_at: dict[int, list[list[Token]]], grid: GridRule | None,
             firsts: frozenset) -> tuple[dict[int, list[_Group]], list[str]]:
    """Each count's groups, the largest count first (what it had hints the smaller
    ones' programs), the loops of the ``firsts`` shapes with their first pass apart;
    and a note where a count kept its sizes because the largest count did."""
    by_count: dict[int, list[_Group]] = {}
    hints = _Hints(firsts=firsts)
    for n in sorted(streams_at, reverse=True):
        found = _Hints()
        by_count[n] = _groups(n, streams_at[n], hints, found, grid)
        hints = hints.joined(found)
    notes = [f"the {n}-rank programs keep their message sizes, though setting them aside "
             "would halve them, as the larger count's long programs kept theirs: so that "
             "the counts' loops are cut alike" for n in sorted(hints.kept)]
    return by_count, notes


def _loop_counts(nodes) -> tuple:
    """Every loop's count, in program order."""
    out: list = []
    for n in nodes:
        if isinstance(n, LoopNode):
            out += [n.count, *_loop_counts(n.body)]
        elif isinstance(n, RepeatNode):
            out += [*_loop_counts(n.prefix), *_loop_counts(n.rest)]
    return tuple(out)


def _loosened(programs: list[list]) -> list[list] | None:
    """Programs of one shape and loop counts whose point-to-point sizes differ
    between them, each with those messages loose (their sizes as values, as
    :func:`pevpm.trace.extract.compress.loose` sets them aside); None where
    something else differs (a collective's size, a tree)."""
    first = programs[0]
    out: list[list] = [[] for _ in programs]
    for i, node in enumerate(first):
        at = [p[i] for p in programs]
        if isinstance(node, LoopNode | RepeatNode):
            parts = ([list(n.body) for n in at],) if isinstance(node, LoopNode) else (
                [list(n.prefix) for n in at], [list(n.rest) for n in at])
            inner = [_loosened(part) for part in parts]
            if any(x is None for x in inner):
                return None
            for k, n in enumerate(at):
                out[k].append(LoopNode(n.count, tuple(inner[0][k])) if isinstance(n, LoopNode)
                              else RepeatNode(tuple(inner[0][k]), tuple(inner[1][k]), n.stop,
                                              n.status, n.passes))
        elif all(n.key == node.key for n in at) or is_computation(node):
            for k, n in enumerate(at):
                out[k].append(n)
        elif is_message(node) and node.key[OP] in POINT_TO_POINT:
            for k, n in enumerate(at):
                out[k].append(n if is_loose(n) else Token(
                    n.key[:SIZE] + (None,) + n.key[SIZE + 1:RECV_SIZE] + (None,),
                    (n.key[SIZE],), n.any_source))
        else:
            return None
    return out


def _sizes_aside(by_shape: dict[tuple, list[int]], programs: list[list]
                 ) -> tuple[dict[tuple, list[int]], list[list]]:
    """Shapes that differ only in point-to-point sizes (a domain cut in unequal
    parts: LAMMPS's atoms per rank) joined, those messages made loose
    (:func:`_loosened`); the groups by their new shapes, and every program."""
    joined: dict[tuple, list[int]] = {}
    for ranks in by_shape.values():
        key = (_skeleton(programs[ranks[0]], numbers=False), _loop_counts(programs[ranks[0]]))
        joined.setdefault(key, []).extend(ranks)
    if len(joined) == len(by_shape):
        return by_shape, programs
    programs = list(programs)
    out: dict[tuple, list[int]] = {}
    for ranks in joined.values():
        ranks.sort()
        loosened = _loosened([programs[r] for r in ranks]) if len(ranks) > 1 else None
        if loosened is None:    # something else differs: the shapes stay apart
            for r in ranks:
                out.setdefault(_skeleton(programs[r]), []).append(r)
            continue
        for r, program in zip(ranks, loosened):
            programs[r] = program
        out.setdefault(_skeleton(programs[ranks[0]]), []).extend(ranks)
    return out, programs


def _split_by_offsets(group: _Group) -> list[_Group]:
    """``group`` split into ranks whose peers are the same offsets from procnum."""
    n, by_offset = group.numprocs, {}
    for r, program in zip(group.ranks, group.programs):
        offsets = tuple((v - r) % n if isinstance(v, int) else v for v in _peer_values(program))
        by_offset.setdefault(offsets, []).append((r, program))
    return [_Group(n, [r for r, _ in members], [p for _, p in members])
            for members in by_offset.values()]


def _fitted(values: dict[int, float], whole: bool, notes: list, what: str,
            laws: set[str] | None = None) -> str:
    """The fitted expression text for a quantity measured at several counts
    (noted); an exact one-term law goes into ``laws``, with its per-rank total's."""
    ps = sorted(values)
    result = fit(ps, [values[p] for p in ps], whole)
    law = law_of(result.form)
    if laws is not None and law and result.generalised and result.error == 0:
        laws.update({law, TIMES_P.get(law, law)})
    if len(ps) > 1 and not result.generalised:
        notes.append(f"{what} = {result.text}, the value at {max(ps)} ranks: no term of "
                     f"the family fits (the best is off by {result.error:.1%}); not "
                     "generalised")
    elif len(ps) > 1 and result.form != "c":
        notes.append(f"{what} = {result.text} (fitted {result.form}, largest error "
                     f"{result.error:.1%} at {', '.join(map(str, ps))} ranks; traced "
                     f"{evidence(values)})")
    return result.text


def _one_per_rank(counts: dict[int, int]) -> str | None:
    """``max(a - numprocs, 0)`` or ``a + numprocs`` when the loop counts at two
    counts or more lie on that line exactly and no one-term law gives them
    exactly (a master's answers: the jobs less the first one per worker).

    >>> _one_per_rank({2: 199, 4: 197}), _one_per_rank({2: 4, 4: 8}), _one_per_rank({2: 5})
    ('max(201 - numprocs, 0)', None, None)
    """
    ps = sorted(counts)
    if len(ps) < 2 or fit(ps, [counts[p] for p in ps], True).error == 0:
        return None
    for slope in (-1, 1):
        base = counts[ps[0]] - slope * ps[0]
        if all(counts[p] == base + slope * p for p in ps):
            return f"max({base} - numprocs, 0)" if slope < 0 else f"{base} + numprocs"
    return None


def _count_rule(at: dict[int, LoopNode]) -> tuple[str, str] | None:
    """A loop's count by rule, with the reason, or None: a loop of receives from
    any source that ran once per other rank at every count (3 ranks or more)
    takes one message from each, ``numprocs - 1``; counts one apart per rank
    (:func:`_one_per_rank`)."""
    first = next(_tokens_in_order(at[max(at)].body), None)
    counts = {p: n.count for p, n in at.items()}
    if (first is not None and first.key[SRC] == "MPI_ANY_SOURCE" and max(at) >= 3
            and all(c == p - 1 for p, c in counts.items())):
        return "numprocs - 1", "receives from any source, one per other rank"
    line = _one_per_rank(counts)
    if line is not None:
        return line, "one pass fewer or more for each rank, exactly,"
    return None


def _exact_count(at: dict[int, LoopNode]) -> str | None:
    """The count :meth:`_Writer.count` writes for a loop, when it gives every
    traced count exactly (None otherwise); a loop over the other ranks' own."""
    node = at[max(at)]
    if isinstance(node.count, str):
        return node.count
    rule = _count_rule(at)
    if rule is not None:
        return rule[0]
    ps = sorted(at)
    result = fit(ps, [at[p].count for p in ps], True)
    return result.text if result.generalised and result.error == 0 else None


class _Writer:
    """Writes one rank group's program, fitting every number across the counts."""

    def __init__(self, peers: list[str], notes: list[str], laws: set[str],
                 loop_laws: dict[int, set[str]], parameters: dict[str, int],
                 sizes: dict[str, set[str]] | None = None):
        self.peers = iter(peers)
        # exact laws of message sizes fitted over two counts or more, by operation: for
        # the sizes of programs seen at one count only (interior ranks at 4 ranks)
        self.sizes = sizes if sizes is not None else {}
        self.notes = notes
        self.parameters = parameters    # loop counts made parameters, shared by the groups
        self.disturbed: tuple[int, ...] = ()    # counts traced with more ranks than cores
        self.largest: dict[int, int] = {}       # the largest message at each count
        # the largest point-to-point message at each count and the laws it gives the
        # grids' faces (pevpm.trace.extract.faces), by (dimensions, ascending)
        self.largest_p2p: dict[int, int] = {}
        self.faces: dict[tuple[int, bool], FaceLaw | None] = {}
        self.laws = laws        # the program's own laws: found here, used for computations
        self.loop_laws = loop_laws      # those of each loop's own sizes, by loop number
        self.open: list[int] = []       # the loops being written, innermost last
        self.loops = 0
        self.trees = 0
        self.depth = 0
        self.totals: dict[int, str] = {}       # the parameters of this level's conserved totals
        self.counts: tuple[int, ...] = ()      # the traced counts the model is fitted over
        self.path: list = []            # indices down to the level being written
        # computations whose samples are pooled with other arms' (pooling.pooled_gaps)
        self.pooled: dict[tuple, dict[int, tuple]] = {}

    def fitted(self, values: dict[int, float], what: str) -> str:
        """A whole number fitted (:func:`_fitted`); its exact law joins the
        program's laws and those of the innermost loop being written."""
        found: set[str] = set()
        text = _fitted(values, True, self.notes, what, found)
        self.laws.update(found)
        if self.open:
            self.loop_laws.setdefault(self.open[-1], set()).update(found)
        return text

    def lines(self, nodes_by_p: dict[int, list], indent: int) -> list[str]:
        """The model's lines for one level of the programs (by rank count), never
        none: each opens a block or is the body of one."""
        pad = " " * indent
        out = []
        top = max(nodes_by_p)
        caps = self.conserved(nodes_by_p)
        role = {i: k for k, cap in enumerate(caps) for i in (*cap.grows, *cap.shrinks)}
        numbers: dict[int, int] = {}        # loop positions of this level: their numbers
        for i, node in enumerate(nodes_by_p[top]):
            at = {p: nodes[i] for p, nodes in nodes_by_p.items()}
            mark, start = len(self.notes), len(out)
            if isinstance(node, LoopNode):
                self.loops += 1
                numbers[i] = self.loops
                cap = caps[role[i]] if i in role else None
                if cap is not None and i in cap.shrinks:
                    partner = {p: nodes[cap.shrinks[i]] for p, nodes in nodes_by_p.items()}
                    count = self.capped(role[i], cap.total, _exact_count(partner), True)
                else:
                    count = node.count if isinstance(node.count, str) else self.count(at)
                    if cap is not None:
                        count = self.capped(role[i], cap.total, count)
                if cap is not None:
                    out.append(f"{pad}# {self.totals[role[i]]}: a total these loops "
                               "conserve (see the notes above)")
                out[start:] = self.comments(mark, pad) + out[start:]
                if isinstance(node.count, str):     # over every other rank
                    out.append(f"{pad}with b.loop({count!r}, index={INDEX!r}):")
                else:
                    out.append(f"{pad}with b.loop({self.parameter(count)!r}):")
                self.depth += 1
                self.open.append(self.loops)
                self.path.append(i)
                out += self.lines({p: list(n.body) for p, n in at.items()}, indent + 4)
                self.path.pop()
                self.open.pop()
                self.depth -= 1
            elif isinstance(node, RepeatNode):
                self.path.append(i)
                out += self.repeat(at, indent)
                self.path.pop()
            elif is_computation(node):
                own = self.loop_laws.get(self.open[-1], set()) if self.open else set()
                samples = self.pooled.get((*self.path, i)) or {p: n.values for p, n in at.items()}
                seconds = seconds_source(samples, self.notes,
                                   self.place(), tuple(sorted(self.laws)), self.disturbed,
                                   tuple(sorted(own)))
                sleep = ", sleep=True" if node.key == SLEEP else ""
                law = self.comments(mark, pad) if "numprocs" in seconds else []
                out += law + [f"{pad}b.serial({seconds}{sleep})"]
            elif is_message(node):
                line = self.message(at)
                out += self.comments(mark, pad) + [pad + line]
            else:
                lines = self.tree(at)
                out += self.comments(mark, pad) + [pad + line for line in lines]
        for k, cap in enumerate(caps):
            self.note_total(cap, self.totals.pop(k), numbers, nodes_by_p)
        # a level with nothing to write (a rank that computed nothing and made no call
        # between MPI_Init and MPI_Finalize) is still a block: Python needs a statement
        return out or [f"{pad}pass  # no MPI call and no computation here"]

    def comments(self, mark: int, pad: str) -> list[str]:
        """The notes written since ``mark`` (the generalisations of the statement
        that follows, with their evidence) as comments, when fitted over two
        counts or more."""
        if len(self.counts) < 2:
            return []
        return [f"{pad}# {line}" for note in self.notes[mark:]
                for line in textwrap.wrap(note, max(40, MODEL_WIDTH - len(pad) - 2))]

    def conserved(self, nodes_by_p: dict[int, list]) -> list[Cap]:
        """The totals this level's loops conserve (:func:`conserved_totals`) whose
        growing loops' counts are exact laws (else noted, and left as fitted)."""
        caps = []
        for cap in conserved_totals(nodes_by_p):
            loose = [i for i in cap.grows
                     if _exact_count({p: nodes[i] for p, nodes in nodes_by_p.items()}) is None]
            if loose:
                self.notes.append(f"{self.place()}: loops conserve {cap.total} passes at every "
                                  "traced count, but the growing one's count is no exact law: "
                                  "not capped")
            else:
                caps.append(cap)
        return caps

    def note_total(self, cap: Cap, name: str, numbers: dict[int, int],
                   nodes_by_p: dict[int, list]) -> None:
        """Says what a conserved total made of its loops."""
        def loops(positions) -> str:
            return ", ".join(f"loop {numbers[i]} (" + ", ".join(
                f"{passes(nodes[i], p)}" for p, nodes in sorted(nodes_by_p.items())) + ")"
                             for i in sorted(positions))

        kinds = ", ".join(f"{op} tag {tag}" for op, tag in cap.kinds)
        counts = ", ".join(map(str, sorted(nodes_by_p)))
        what = (f"the parameter {name} = {cap.total} (pevpm predict -D {name}=N)"
                if self.parameters.get(name) == cap.total else f"{cap.total}")
        self.notes.append(
            f"{kinds}: as many at every traced count, while the passes of "
            f"{loops(cap.grows)} grew with numprocs and those of {loops(cap.shrinks)} "
            f"shrank, a growing loop's and its shrinking partner's adding up to {cap.total} "
            f"at {counts} ranks: a conserved total, {what}; the growing loops stop at it "
            "(min) and the shrinking run the rest, so it holds at every count (inferred: no "
            "trace had more ranks to share it out to than the total)")

    def count(self, at: dict[int, LoopNode]) -> str:
        """A loop's count: its rule's (:func:`_count_rule`, noted), else fitted."""
        rule = _count_rule(at)
        if rule is not None:
            self.notes.append(f"loop {self.loops}: count = {rule[0]} ({rule[1]} at "
                              f"{', '.join(map(str, at))} ranks)")
            return rule[0]
        return self.fitted({p: n.count for p, n in at.items()}, f"loop {self.loops}: count")

    def capped(self, cap: int, total: int, count: str, shrinks: bool = False) -> str:
        """A count of loops that conserve ``total`` passes (cap number ``cap`` of
        this level, :mod:`pevpm.trace.extract.conservation`): a growing one stops at the
        total, a shrinking one is the rest of it; the total is a parameter
        ``totalK`` (K the first of its loops), shared as loop counts are."""
        name = self.totals.setdefault(cap, f"total{self.loops}")
        bound = (f"parameter {name}" if self.parameters.setdefault(name, total) == total
                 else str(total))
        return f"{bound} - min({count}, {bound})" if shrinks else f"min({count}, {bound})"

    def repeat(self, at: dict[int, RepeatNode], indent: int) -> list[str]:
        """Receive until the tag says stop (:mod:`pevpm.trace.extract.repeats`)."""
        pad = " " * indent
        node = at[max(at)]
        self.notes.append(f"{self.place()}: a loop of receives that ended on tag {node.stop} "
                          f"is a Repeat until {node.until} (its passes, "
                          + ", ".join(f"{n.passes} at {p} ranks" for p, n in sorted(at.items()))
                          + ", are the other side's to decide)")
        out = [f"{pad}with b.repeat({node.until!r}):"]
        self.path.append(0)
        out += self.lines({p: list(n.prefix) for p, n in at.items()}, indent + 4)
        self.path[-1] = 1
        out.append(f"{pad}    with b.on_ranks({node.goes_on!r}):")
        out += self.lines({p: list(n.rest) for p, n in at.items()}, indent + 8)
        self.path.pop()
        return out

    def tree(self, at: dict[int, Token]) -> list[str]:
        """A tree of messages (:mod:`pevpm.trace.extract.trees`), its sizes fitted."""
        self.trees += 1
        trees = {p: Tree.of(t.key) for p, t in at.items()}
        top = trees[max(trees)]
        sizes = [argument(self.fitted({p: t.sizes[u] for p, t in trees.items()},
                                       f"tree {self.trees} {self.place()}: size"))
                 for u in range(top.unit)]
        self.notes.append(f"tree {self.trees} {self.place()}: point-to-point messages "
                          f"recognised as a {top.describe()}; written as a loop over "
                          "log2(numprocs) steps")
        comment = f"# tree {self.trees}: {top.template} (see the notes above)"
        return [comment] + model_lines(top, sizes, f"step{self.trees}")

    def size(self, op: str, values: dict[int, int]) -> str:
        """A message's size fitted over the counts (an exact law found is kept for
        ``op``); a size seen at one count only takes a law another rank group's
        ``op`` follows exactly if one gives it there (noted), else stays literal."""
        what = f"{op} {self.place()}: size"
        if len(values) == 1:
            (p, value), = values.items()
            laws = sorted(law for law in self.sizes.get(op, ())
                          if Expr.parse(law).evaluate({"numprocs": p}) == value)
            if laws:
                self.notes.append(f"{what} = {laws[0]}: seen at {p} ranks only, where it is "
                                  f"{value}, as other ranks' {op} follows (fitted over more "
                                  "counts)")
                return laws[0]
        text = self.fitted(values, what)
        if len(values) > 1 and not text.isdigit() and all(
                Expr.parse(text).evaluate({"numprocs": p}) == v for p, v in values.items()):
            self.sizes.setdefault(op, set()).add(text)
        return text

    def parameter(self, count: str) -> str:
        """A constant loop count as a parameter ``loopK`` (``pevpm predict -D
        loop1=100``), the same name in every group; an expression as it is."""
        name = f"loop{self.loops}"
        if not count.isdigit() or self.parameters.setdefault(name, int(count)) != int(count):
            return count
        return f"parameter {name}"

    def on_faces(self, op: str, size: str, at: dict, src, dst) -> str:
        """``size`` (a number seen at one count only) scaled with the face of the
        grid its message crosses where the program's largest messages shrink
        with the grid's largest face (:mod:`pevpm.trace.extract.faces`), noted."""
        shifts = {shift_of(v) for v in (src, dst)} - {None}
        if len(at) > 1 or len(shifts) != 1 or op not in POINT_TO_POINT:
            return size
        try:
            value = float(size)
        except ValueError:
            return size
        (ndims, ascending, dim), = shifts
        if (ndims, ascending) not in self.faces:
            law = face_law(self.largest_p2p, ndims, ascending)
            self.faces[ndims, ascending] = law
            if law is not None:
                self.notes.append(
                    "the largest point-to-point message is " + ", ".join(
                        f"{v} B at {p}" for p, v in sorted(self.largest_p2p.items()) if v)
                    + f" ranks: {law.describe()} fits it, so the messages seen at the largest "
                    "count only, along a grid dimension, scale with the face they cross "
                    "(inferred: a strong-scaling grid; pevpm.trace.extract.faces)")
        law = self.faces[ndims, ascending]
        return size if law is None else law.size(value, dim, max(at))

    def buffer(self, size: str) -> str:
        """A receive's size where some rank's sizes were set aside (written as their
        mean): at least the largest of those, so that a mean never overruns a
        receive that kept its traced size (CoMD's neighbours on the node)."""
        largest = max(self.largest.values(), default=0)
        if not largest:
            return size
        try:
            return str(max(int(float(size)), largest))
        except ValueError:
            return f"max({size}, {largest})"

    def place(self) -> str:
        if not self.loops:
            return "before the first loop"
        return f"{'in' if self.depth else 'after'} loop {self.loops}"

    def message(self, at: dict[int, Token]) -> str:
        key = at[max(at)].key
        src, dst, root = (next(self.peers) for _ in PEER_FIELDS)
        op = key[OP]
        if is_loose(at[max(at)]):
            # sizes of their own every time are drawn, not scaled: one for every count,
            # the mean of them all (a receive: a buffer for any message)
            receive = op in ("MPI_Recv", "MPI_Irecv")
            pooled = [v for t in at.values() for v in (t.values if is_loose(t) else (t.key[SIZE],))]
            size = str(max(self.largest.get(p, 0) for p in at) if receive
                       else round(statistics.fmean(pooled)))
            self.notes.append(f"{op} {self.place()}: sizes vary from repetition to repetition "
                              f"({min(pooled)}..{max(pooled)} bytes at {', '.join(map(str, at))}"
                              f" ranks); their {'largest anywhere (a buffer)' if receive else 'mean'}"
                              " is written, at every count (approximate)")
        else:
            size = self.size(op, {p: t.key[SIZE] for p, t in at.items()})
        size = self.on_faces(op, size, at, src, dst)
        if op in ("MPI_Recv", "MPI_Irecv") and not is_loose(at[max(at)]):
            size = self.buffer(size)
        args = [repr(op), argument(size)]
        tags = {t.key[TAG] for t in at.values()}
        if len(tags) > 1:
            self.notes.append(f"{op} {self.place()}: tag differs between rank counts "
                              f"({sorted(tags)}); the largest count's is used")
        for name, value in (("source", src), ("dest", dst), ("tag", key[TAG]),
                            ("request", key[REQ]), ("root", root)):
            if value is not None:
                args.append(f"{name}={value!r}")
        recv = None
        if is_loose(at[max(at)]) and op == "MPI_Sendrecv":     # its receive: a buffer too
            recv = self.on_faces(op, str(max(self.largest.get(p, 0) for p in at)), at, src,
                                 dst)
        elif key[RECV_SIZE] is not None:
            recv = self.buffer(self.on_faces(op, _fitted(
                {p: t.key[RECV_SIZE] for p, t in at.items()}, True, self.notes,
                f"{op} {self.place()}: recv_size"), at, src, dst))
        elif op == "MPI_Sendrecv" and self.buffer(size) != size:
            recv = self.buffer(size)
        if recv is not None:
            args.append(f"recv_size={argument(recv)}")
        if key[REQS]:
            args.append(f"requests={list(key[REQS])!r}")
        return f"b.message({', '.join(args)})"


@dataclass(frozen=True)
class Extracted:
    text: str         # the model file
    events: int       # MPI calls in the traces
    lines: int        # lines of model code written
    merged: bool      # every rank shares one program
    notes: tuple[str, ...]
    counts: tuple[int, ...] = ()    # the traced rank counts


def _matches(pred: str, top: _Group, by_count: dict[int, list[_Group]]) -> dict:
    """The group ``pred`` selects at each count where its ranks all run ``top``'s
    program (the counts where they do not are left out)."""
    want = _skeleton(top.programs[0], numbers=False)
    chosen = {}
    for n, groups in by_count.items():
        ranks = selected(pred, n)
        if not ranks:
            continue
        match = [g for g in groups if set(ranks) <= set(g.ranks)
                 and _skeleton(g.programs[0], numbers=False) == want]
        if len(match) != 1:
            continue
        programs = dict(zip(match[0].ranks, match[0].programs))
        chosen[n] = _Group(n, ranks, [programs[r] for r in ranks])
    return chosen


def _best_match(group: _Group, by_count: dict[int, list[_Group]]) -> tuple[str, dict]:
    """The rank predicate that selects ``group`` at the largest count and matches
    its program at the most counts, with the group at each (:func:`_matches`);
    the ranks as they are where no predicate selects them."""
    top = max(by_count)
    exact = [p for p in RANK_PREDICATES if selected(p, top) == sorted(group.ranks)]
    found = [(guard, _matches(guard, group, by_count)) for guard in exact]
    best = max((len(chosen) for _, chosen in found), default=0)
    if best:
        return next((g, c) for g, c in found if len(c) == best)
    return literal_predicate(group.ranks), {top: group}


def _plan(by_count: dict[int, list[_Group]], notes: list[str]) -> list[tuple[str, dict]]:
    """(predicate, group at each count) for every group of the largest count."""
    top = max(by_count)
    plan = []
    pending = list(by_count[top])
    while pending:
        group = pending.pop(0)
        guard, chosen = _best_match(group, by_count)
        if len(chosen) < 2 and len(by_count) > 1 and not group.united:
            pieces = _split_by_offsets(group)
            # peers that fit by coincidence at this count: split, where a piece then
            # matches at more counts (not ranks seen at this count only, whose peers
            # are one rank, rank 0, whatever their offsets)
            if len(pieces) > 1 and any(len(_best_match(piece, by_count)[1]) > 1
                                       for piece in pieces):
                pending[:0] = pieces
                continue
        if len(chosen) == 1 and len(by_count) > 1:
            notes.append(f"ranks {group.ranks} of {top}: their program is not matched at "
                         "the other rank counts; its values are the largest count's")
        plan.append((guard, chosen))
    return _exceptions(by_count, plan, notes) + plan


def _exceptions(by_count: dict[int, list[_Group]], plan: list[tuple[str, dict]],
                notes: list[str]) -> list[tuple[str, dict]]:
    """Arms for the ranks of smaller counts whose program the general arms do not
    describe (``numprocs == 2 && procnum == 0``): they come first, so the model
    still runs every traced count as traced."""
    out = []
    for n, groups in sorted(by_count.items()):
        covered = {r for _, chosen in plan if n in chosen for r in chosen[n].ranks}
        for group in groups:
            ranks = [r for r in group.ranks if r not in covered]
            if not ranks:
                continue
            programs = dict(zip(group.ranks, group.programs))
            guard = rank_predicate({n: ranks}) or literal_predicate(ranks)
            out.append((f"numprocs == {n}" if guard == "1" else f"numprocs == {n} && ({guard})",
                        {n: _Group(n, ranks, [programs[r] for r in ranks])}))
            notes.append(f"ranks {ranks} of {n}: a program of their own at {n} ranks only")
    return out


def _group_lines(chosen: dict[int, _Group], indent: int, notes: list[str],
                 laws: set[str], loop_laws: dict[int, set[str]], parameters: dict[str, int],
                 disturbed: tuple[int, ...] = (),
                 by_count: dict[int, list[_Group]] | None = None,
                 sizes: dict[str, set[str]] | None = None,
                 grid: Rule | None = None,
                 pooled: dict[tuple, dict[int, tuple]] | None = None) -> list[str]:
    slots: list[list] = []
    for group in chosen.values():
        for i, slot in enumerate(group.peer_slots()):
            if len(slots) <= i:
                slots.append([])
            slots[i] += slot
    peers = []
    for i, slot in enumerate(slots):
        if slot[0][2] is None:
            peers.append(None)
            continue
        if isinstance(slot[0][2], str):     # a symbol: MPI_ANY_SOURCE, a status, an index
            symbols = {v for _, _, v in slot}
            if len(symbols) > 1:
                notes.append(f"a peer is {' or '.join(sorted(map(str, symbols)))} on "
                             "different ranks or counts; the first is used")
            peers.append(slot[0][2])
            continue
        root = PEER_FIELDS[i % len(PEER_FIELDS)] == ROOT
        source = PEER_FIELDS[i % len(PEER_FIELDS)] == SRC
        text = peer_expression(slot, root, _first(grid, i), source)
        if text is None:        # consistent within each count, not across them
            top = max(n for n, _, _ in slot)
            text = peer_expression([s for s in slot if s[0] == top], root, _first(grid, i),
                                   source)
            notes.append(f"a peer ({text} at {top} ranks) does not fit every rank count")
        peers.append(text)
    merged = {n: _merge(g.programs) for n, g in chosen.items()}
    writer = _Writer(peers, notes, laws, loop_laws, parameters, sizes)
    writer.disturbed = disturbed
    writer.pooled = pooled or {}
    writer.counts = tuple(by_count or ())
    writer.largest = {n: max((v for g in groups for program in g.programs
                              for t in _tokens_in_order(program) if is_loose(t)
                              for v in t.values), default=0)
                      for n, groups in (by_count or {}).items()}
    writer.largest_p2p = {n: max((v for g in groups for program in g.programs
                                  for t in _tokens_in_order(program) if t.key[OP] in POINT_TO_POINT
                                  for v in (t.values if is_loose(t) else (t.key[SIZE],))),
                                 default=0)
                          for n, groups in (by_count or {}).items()}
    return writer.lines(merged, indent)


def extract(traces: Trace | list[Trace], source: str = "trace", wall: bool = False
            ) -> Extracted:
    """The traces (of one program at one or more rank counts) as a model file's
    text (a ``model()`` returning a ModelBuilder); with ``wall``, computations in
    wall seconds at every count, even where a count shared its cores (to see
    what the CPU seconds leave out: benchmarks/apps/seconds.py)."""
    traces = [traces] if isinstance(traces, Trace) else list(traces)
    grid_notes: list[str] = []
    grid = grid_rule(world_grids(traces), grid_notes)
    # one kind of seconds across the counts: CPU seconds wherever a trace has them once
    # one count shared its cores (wall seconds beside them would fit the sharing as scaling)
    shared = not wall and any(uses_cpu(t) for t in traces)
    streams_at: dict[int, list[list[Token]]] = {}
    known: set[Tree] | None = None      # trees of the larger counts
    for t in sorted(traces, key=lambda t: -t.numprocs):
        ready = ready_times(t)          # for the lateness of completions polls found
        cpu = shared and t.has_cpu
        streams_at[t.numprocs], trees = find_trees([rank_tokens(t, r, ready[r], cpu)
                                                    for r in range(t.numprocs)], known)
        known = (known or set()) | set(trees)
    by_count, kept_notes = _grouped(streams_at, grid, frozenset())
    firsts, first_notes = first_passes({n: [p for g in gs for p in g.programs]
                                        for n, gs in by_count.items()},
                                       {t.numprocs for t in traces if t.oversubscribed})
    if firsts:      # decided once, from every rank and count: the same shapes everywhere
        by_count, kept_notes = _grouped(streams_at, grid, firsts)
    grid_notes += first_notes + kept_notes
    if len(streams_at) != len(traces):
        raise PevpmError("two traces have the same number of ranks; give one per count",
                         source)
    grid = _united(by_count, grid, grid_notes)
    counts = sorted(by_count)
    events = sum(t.call_count() for t in traces)
    notes = [f"extracted from {source}: "
             + ", ".join(f"{t.numprocs} ranks ({t.call_count()} MPI calls)"
                         for t in sorted(traces, key=lambda t: t.numprocs))]
    for t in sorted(traces, key=lambda t: t.numprocs):
        if wall:
            notes.append(f"the {t.numprocs}-rank trace's computations are taken in wall "
                         "seconds, as asked")
        elif uses_cpu(t):
            notes.append(f"the {t.numprocs}-rank trace ran on {t.cores} cores: its "
                         "computations are the CPU seconds each rank used between its calls "
                         "(the virtual machine adds the sharing itself), and what it slept "
                         "(sleep, nanosleep) is written as sleeps")
        elif shared and t.has_cpu:
            notes.append(f"the {t.numprocs}-rank trace had a core per rank, but its "
                         "computations are taken in CPU seconds too, as at the counts that "
                         "shared cores, so that every count's are the same kind of time")
        elif t.oversubscribed:
            notes.append(f"the {t.numprocs}-rank trace ran on {t.cores} cores and has no CPU "
                         "times: its computations include the sharing")
    subs = sorted({(c.op, len(c.members)) for t in traces for calls in t.ranks for call in calls
                   for c in call.events if isinstance(c, Collective)
                   and 1 < len(c.members) < t.numprocs})
    if subs:
        notes.append("collectives on sub-communicators (" + ", ".join(
            f"{op} of {m}" for op, m in subs) + " ranks) are exchanges among their members "
                     f"(tag {SUBCOMM_TAG}), as pevpm replay writes them: the virtual machine "
                     "has one communicator (pevpm.trace.replay.subcomm)")
    skews = {t.numprocs: max(launch_skew(t, r) for r in range(t.numprocs)) for t in traces}
    if any(skews.values()):
        notes.append("the ranks left MPI_Init up to " + ", ".join(
            f"{s * 1e3:.3g} ms apart at {p}" for p, s in sorted(skews.items()) if s)
                     + " ranks: the launcher's, left out (the model's ranks start together; "
                     "pevpm replay keeps it)")
    if len(counts) == 1:
        notes.append("peers are expressions of procnum and numprocs; loop counts, sizes and "
                     "tags are the traced values (one trace cannot tell how they scale)")
    else:
        notes.append(f"loop counts, sizes and computations are fitted across {counts} ranks "
                     f"(terms {', '.join(name for name, _, _ in TERMS)}; a + c*f(p) from "
                     "three counts; smallest largest relative error, the simpler within 1%)")
    notes += grid_notes
    fitted: list[str] = []
    plan = _plan(by_count, fitted)
    laws: set[str] = set()
    loop_laws: dict[int, set[str]] = {}
    sizes: dict[str, set[str]] = {}
    pools = pooled_gaps([{n: _merge(g.programs) for n, g in chosen.items()}
                         for _, chosen in plan], fitted,
                        [guard.startswith("numprocs == ") for guard, _ in plan])
    for (_, chosen), pooled in zip(plan, pools):    # a first pass: the laws of sizes, counts
        _group_lines(chosen, 0, [], laws, loop_laws, {}, (), by_count, sizes, grid, pooled)
    if laws and len(counts) > 1:
        notes.append("computations: the constant unless a traced mean contradicts it (misses "
                     f"by more than {NOISE_WIDTH:g} standard errors, at least "
                     f"{MIN_NOISE:.0%}); else of the one-term laws p^i log2(p)^j not so "
                     "contradicted, the one that predicts each count best from the others "
                     "(leave-one-out), the laws of the sizes moved in the same loop, then the "
                     "program's own laws (" + ", ".join(sorted(laws)) + ": its sizes and "
                     "counts, and their per-rank totals) winning ties; no growing law where "
                     "fewer than two counts had a core per rank")
    body: list[str] = []
    parameters: dict[str, int] = {}
    disturbed = tuple(t.numprocs for t in traces if t.oversubscribed)
    if disturbed and len(counts) > 1:
        notes.append(f"traced with more ranks than cores at {', '.join(map(str, disturbed))} "
                     f"ranks: computations there are taken as uncertain by "
                     f"+-{DISTURBED_NOISE:.0%} at least")
    if len(plan) == 1 and plan[0][0] == "1":
        body += _group_lines(plan[0][1], 4, fitted, laws, loop_laws, parameters, disturbed,
                             by_count, sizes, grid)
    else:
        body.append("    with b.runon() as ranks:")
        for (guard, chosen), pooled in zip(plan, pools):
            body.append(f"        with ranks.case({guard!r}):")
            body += _group_lines(chosen, 12, fitted, laws, loop_laws, parameters,
                                 disturbed, by_count, sizes, grid, pooled)
        notes.append(f"{len(plan)} different rank programs: one Runon arm each")
    if any(is_loose(t) for g in plan for group in g[1].values() for program in group.programs
           for t in _tokens_in_order(program)):
        notes.append("APPROXIMATE: some ranks repeat the same messages with different sizes "
                     "each time; their loops were found with the sizes set aside, and each "
                     "size is the mean of those it stands for; every receive's buffer is at "
                     "least the largest of them, so that a mean sent never overruns a receive "
                     "that kept its traced size")
    if any(k.startswith("loop") for k in parameters):
        notes.append("constant loop counts are parameters (" + ", ".join(
            f"{k} = {v}" for k, v in parameters.items() if k.startswith("loop"))
                     + "): pevpm predict -D loop1=N")
    notes += dict.fromkeys(fitted)      # each group writes the same tree's note
    header = ['"""PEVPM model extracted by `pevpm extract`.', ""]
    header += [f"* {note}" for note in notes] + ['"""', "",
                                                 "from pevpm.model.builder import ModelBuilder",
                                                 "", "", "def model():",
                                                 ("    b = ModelBuilder(parameters="
                                                  f"{parameters!r}, lines=True)")]
    text = "\n".join(header + body + ["    return b", ""])
    return Extracted(text, events, len(body) + 2, len(plan) == 1, tuple(notes), tuple(counts))


#: Events a trial run of an extracted model may take (:func:`trial_run`), at least,
#: and per rank: 10 million at 1,024 ranks.
TRIAL_EVENTS = 5_000_000
TRIAL_EVENTS_PER_RANK = 10_000
#: Passes a trial run gives each loop of a constant count (a ``loopK`` parameter).
TRIAL_PASSES = 3


def _shortened(model: Model) -> dict[str, int]:
    """The loop-count parameters of ``model`` cut to :data:`TRIAL_PASSES`."""
    return {k: TRIAL_PASSES for k, v in model.parameters.items()
            if k.startswith("loop") and isinstance(v, int) and v > TRIAL_PASSES}


def trial_run(model: Model, numprocs: int) -> PevpmError | None:
    """Why ``model`` does not run at ``numprocs`` ranks (on a machine where every
    message takes a microsecond), or None when it does: a check that a model
    fitted at a few rank counts still describes a program at more.  Its
    constant loops run :data:`TRIAL_PASSES` times first (their passes repeat
    one pattern: a 149-iteration solver at 1,024 ranks took more than 5
    million events); where that run fails, the whole model is run, and its
    answer counts (a loop's passes may have to match another rank's) unless
    it passed the events limit: then the short run's fault is the answer.

    >>> from pevpm.model.builder import ModelBuilder
    >>> b = ModelBuilder()
    >>> b.message("MPI_Recv", 8, source="(procnum + 1) % numprocs")
    >>> trial_run(b.build(), 4).message         # doctest: +ELLIPSIS
    'deadlock: rank 0 blocked in MPI_Recv from 1...'
    """
    limits = Limits(max_events=max(TRIAL_EVENTS, TRIAL_EVENTS_PER_RANK * numprocs))

    def run(params: dict) -> PevpmError | None:
        try:
            fastengine.simulate(model, numprocs, Machine(Constant(1e-6)), params=params,
                                limits=limits)
        except PevpmError as err:
            return err
        return None

    short = _shortened(model)
    failed = run(short) if short else None
    if short and failed is None:
        return None
    whole = run({})
    if failed is not None and isinstance(whole, (EventLimitError, WallClockLimitError)):
        failed.message += (f" (with its constant loops cut to {TRIAL_PASSES} passes; the "
                           "whole model ran past the check's events without deciding)")
        return failed
    return whole


#: The rank counts past the traced ones that :func:`self_check` runs a model at.
CHECK_COUNTS = (8, 64, 1024)


def self_check(model: Model, counts) -> list[tuple[int, str, bool]]:
    """``(rank count, why, fatal)`` for each of ``counts`` and :data:`CHECK_COUNTS`
    at which ``model`` does not run (:func:`trial_run`: a deadlock, a truncated
    message, a collective the ranks do not all make, with the ranks and the
    model's line); a run that passed its events (:data:`TRIAL_EVENTS`) is not fatal (it
    ran that far without a fault: a long run, checked no further).

    >>> from pevpm.model.builder import ModelBuilder
    >>> b = ModelBuilder()
    >>> with b.on_ranks("procnum == 0"):
    ...     b.collective("MPI_Barrier")
    >>> [(n, why[:9], fatal) for n, why, fatal in self_check(b.build(), [1])]
    [(8, 'deadlock:', True), (64, 'deadlock:', True), (1024, 'deadlock:', True)]
    """
    out = []
    for numprocs in sorted(set(counts) | set(CHECK_COUNTS)):
        err = trial_run(model, numprocs)
        if err is not None:
            long_run = isinstance(err, (EventLimitError, WallClockLimitError))
            out.append((numprocs, err.message, not long_run))
    return out
