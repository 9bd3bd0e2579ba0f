"""The ranks of one count as one program where they differ only in which
neighbours they exchange with: a grid that is not periodic, whose edge and
corner ranks skip the messages to the sides they have no neighbour on.

Each rank's compressed program is aligned with the others' (loops with loops
of the same count, their bodies aligned in turn): a point-to-point message
matches one with the same operation, tag, size and offsets of its peers from
the rank (the same side of the grid), an ``MPI_Wait`` one that waits for such
a match, an ``MPI_Waitall`` or ``MPI_Test`` one with the same operation,
anything else only its equal.  :func:`united` gives every rank the union of
those programs: a message the rank did not make is made to or from
``MPI_PROC_NULL`` (the tracer's -1), which the virtual machine completes at
once, a computation it did not have is 0 seconds there (its samples pooled
with the others'), and requests are renamed by slot in the union, each completion
waiting for what any rank waited for there (the first of them, where ranks
waited for one request at different places).  Every rank must make some
message to the same side as another rank: a ping-pong's two ranks stay
apart.  Collectives, trees, loops and repeats must be in every rank's
program; where they are not, or a request cannot be followed, the ranks
stay apart (None).  Whether the union's peers are expressions of
``procnum`` (``cart_shift`` without periods) is the caller's to check.

A side is the peer's offset from the rank by default.  On a grid of
``MPI_Dims_create``'s where a dimension is 2 the offsets do not name the
direction (on 2 x 2 x 2, +2 is one step along the second dimension from rank
0 and one forward along the first and back along the second from rank 2):
:func:`grid_sides` gives the difference of the two ranks' grid coordinates
instead, which does, so the corners of a 26-neighbour exchange line up.

Entries every rank must have (collectives, loops, trees) split each level
into blocks: they are matched in order (each rank has them all, so the
``k``-th of one with the ``k``-th of another), and only the blocks of
messages and computations between them are aligned, each alone, so a
program of many exchanges compares each exchange's calls with the same
exchange's only (:data:`MAX_PAIRS` holds per block).

>>> from pevpm.trace.extract.tokens import LoopNode, Token
>>> def send(rank, peer):
...     return Token(("MPI_Send", 8, rank, peer, 1, None, (), None, None), ())
>>> ends = united([[send(0, 1)], [send(1, 0), send(1, 2)], [send(2, 1)]], [0, 1, 2])
>>> [[t.key[2:4] for t in program] for program in ends]    # (source, dest)
[[(0, -1), (0, 1)], [(1, 0), (1, 2)], [(2, 1), (2, -1)]]
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass

from pevpm.model.ast import COMPLETIONS
from pevpm.model.cartesian import cart_coord
from pevpm.trace.extract.compress import POINT_TO_POINT
from pevpm.trace.extract.peers import TRACED_PROC_NULL
from pevpm.trace.extract.tokens import DST, OP, REQ, REQS, SIZE, SRC, TAG, LoopNode, Token

#: The most pairs of entries one alignment compares (a block of ``n`` entries
#: against one of ``m``: ``n * m``).  Before blocks, LULESH's 8 corners (about
#: 1,300 entries each at the top level, a union of 3,700) took 2-4 minutes, so
#: larger blocks stay apart.
MAX_PAIRS = 1_500_000

#: Operations that post a request a completion later names.
POSTS = ("MPI_Isend", "MPI_Issend", "MPI_Irecv")
COMPLETION_OPS = tuple(sorted(COMPLETIONS))


@dataclass
class _Loop:
    """A loop of the union: its count and its body's entries."""

    count: int
    body: list


def _offset(rank: int, peer):
    """Which side ``peer`` lies on from ``rank``: its offset (a symbol as it is)."""
    if not isinstance(peer, int) or peer == TRACED_PROC_NULL:
        return peer
    return peer - rank


def grid_sides(numprocs: int, ndims: int) -> Callable[[int, object], object]:
    """Sides as differences of coordinates on the ``ndims``-D grid of
    ``MPI_Dims_create(numprocs)`` (ranks row-major, the last dimension fastest).

    >>> side = grid_sides(8, 3)
    >>> side(0, 2), side(2, 4), _offset(0, 2) == _offset(2, 4)
    ((0, 1, 0), (1, -1, 0), True)
    """
    def side(rank: int, peer):
        if not isinstance(peer, int) or peer == TRACED_PROC_NULL:
            return peer
        return tuple(cart_coord(peer, numprocs, ndims, d) - cart_coord(rank, numprocs, ndims, d)
                     for d in range(ndims))
    return side


def _peers(nodes) -> set:
    """The ranks the point-to-point messages among ``nodes`` go to or come from."""
    out = set()
    for node in nodes:
        if isinstance(node, LoopNode):
            out |= _peers(node.body)
        elif isinstance(node, Token) and node.key[0] != "serial" and node.key[OP] in POINT_TO_POINT:
            out |= {v for v in (node.key[SRC], node.key[DST]) if isinstance(v, int) and v >= 0}
    return out


def every_neighbour(programs: list[list], ranks: list[int], numprocs: int, ndims: int) -> bool:
    """Whether each of ``ranks`` exchanges with every rank next to it on the
    ``ndims``-D grid of ``MPI_Dims_create(numprocs)``, diagonally too, and with
    no other: where :func:`grid_sides` may name its sides (on a small grid every
    rank is next to every other in some direction, so a chain of 4 ranks would
    pass for a 2 x 2 grid with two diagonals).

    >>> from pevpm.trace.extract.tokens import Token
    >>> def sends(rank, peers):
    ...     return [Token(("MPI_Send", 8, rank, p, 0, None, (), None, None), ()) for p in peers]
    >>> every_neighbour([sends(r, [p for p in range(4) if p != r]) for r in range(4)],
    ...                 [0, 1, 2, 3], 4, 2)
    True
    >>> every_neighbour([sends(0, [1]), sends(1, [0, 2]), sends(2, [1, 3]), sends(3, [2])],
    ...                 [0, 1, 2, 3], 4, 2)
    False
    """
    def coords(rank):
        return [cart_coord(rank, numprocs, ndims, d) for d in range(ndims)]

    def near(a, b):
        return a != b and all(abs(x - y) <= 1 for x, y in zip(coords(a), coords(b)))

    return all(_peers(program) - {rank} == {r for r in range(numprocs) if near(rank, r)}
               for program, rank in zip(programs, ranks))


def _leaf(node, rank: int, posts: dict, side: Callable) -> tuple | None:
    """What a token matches by (None: a repeat, which is never aligned); a Wait
    by the message it waits for (``posts``: the rank's requests, by name); the
    sides of peers by ``side`` (:func:`_offset` or :func:`grid_sides`)."""
    if isinstance(node, LoopNode) or not isinstance(node, Token):
        return None
    key = node.key
    if key[0] in ("serial", "tree") or key[OP] not in POINT_TO_POINT + COMPLETION_OPS:
        return ("fixed", key)
    if key[OP] in COMPLETION_OPS:
        return ("done", key[OP], posts.pop(key[REQ], None) if key[OP] == "MPI_Wait" else None)
    sides = tuple(side(rank, v) for v in (key[SRC], key[DST]))
    out = ("p2p", key[OP], key[TAG], key[SIZE], sides, key[REQ] is not None)
    if key[OP] in POSTS and key[REQ] is not None:
        posts[key[REQ]] = out
    return out


def _optional(entry) -> bool:
    """Whether a rank may lack ``entry`` (a message to a side it has no neighbour
    on, its completion, a computation)."""
    return not isinstance(entry, _Loop) and (entry[0] in ("p2p", "done") or (
        entry[0] == "fixed" and entry[1][0] == "serial"))


def _entries(program: list, rank: int, posts: dict, side: Callable) -> list | None:
    out = []
    for node in program:
        if isinstance(node, LoopNode):
            body = _entries(list(node.body), rank, posts, side)
            if body is None:
                return None
            out.append(_Loop(node.count, body))
        else:
            leaf = _leaf(node, rank, posts, side)
            if leaf is None:
                return None
            out.append(leaf)
    return out


def _weight(a, b) -> int:
    """How much matching ``a`` with ``b`` is worth: 0 where they differ; a
    computation less than anything else, so that messages line up first."""
    if isinstance(a, _Loop) or isinstance(b, _Loop):
        return 4 if isinstance(a, _Loop) and isinstance(b, _Loop) and a.count == b.count else 0
    if a != b:
        return 0
    return 1 if a[0] == "fixed" and a[1][0] == "serial" else 4


Pairs = list[tuple[int | None, int | None]]


def _pairs(a: list, b: list) -> Pairs | None:
    """The heaviest common alignment of ``a`` and ``b`` (:func:`_weight`) that
    matches every entry neither may lack (see the module's text: blocks
    between them aligned alone) as (index in a, index in b) in order, None
    where one side has nothing there (a's first); None where those entries
    differ or a block passes :data:`MAX_PAIRS`."""
    anchors = _anchors([a, b])
    if anchors is None:
        return None
    fixed_a, fixed_b = anchors
    out: Pairs = []
    start_a = start_b = 0
    for i, j in [*zip(fixed_a, fixed_b), (len(a), len(b))]:
        if (i - start_a) * (j - start_b) > MAX_PAIRS:
            return None
        out += [(None if x is None else x + start_a, None if y is None else y + start_b)
                for x, y in _block_pairs(a[start_a:i], b[start_b:j])]
        if i < len(a):
            out.append((i, j))
        start_a, start_b = i + 1, j + 1
    return out


def _anchors(levels: list[list]) -> list[list[int]] | None:
    """Per level, the positions of the entries no rank may lack (not
    :func:`_optional`: loops, collectives), or None where the levels do not
    have the same such entries in the same order."""
    fixed = [[i for i, e in enumerate(level) if not _optional(e)] for level in levels]
    if any(len(f) != len(fixed[0]) for f in fixed) or not all(
            _weight(levels[0][i], level[j])
            for f, level in zip(fixed[1:], levels[1:]) for i, j in zip(fixed[0], f)):
        return None
    return fixed


def _block_pairs(a: list, b: list) -> Pairs:
    """:func:`_pairs` of one block (nothing in it that must be matched)."""
    n, m = len(a), len(b)
    best = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            w = _weight(a[i], b[j])
            best[i][j] = max(best[i + 1][j], best[i][j + 1],
                             best[i + 1][j + 1] + w if w else 0)
    out: Pairs = []
    i = j = 0
    while i < n or j < m:
        w = _weight(a[i], b[j]) if i < n and j < m else 0
        if w and best[i][j] == best[i + 1][j + 1] + w:
            out.append((i, j))
            i, j = i + 1, j + 1
        elif i < n and (j == m or best[i + 1][j] >= best[i][j + 1]):
            out.append((i, None))
            i += 1
        else:
            out.append((None, j))
            j += 1
    return out


def _messages(entries: list) -> set:
    """The point-to-point messages among ``entries``, loops' bodies included."""
    out = set()
    for e in entries:
        if isinstance(e, _Loop):
            out |= _messages(e.body)
        elif e[0] == "p2p":
            out.add(e)
    return out


def _neighbours(entries: list[list]) -> bool:
    """Whether every rank makes some message to the same side as another rank
    does: ranks of one grid that lack some sides, not ranks in roles of their
    own (a ping-pong's sender and receiver, whose union would be a grid
    nobody laid out)."""
    sets = [_messages(e) for e in entries]
    return all(any(mine & other for k, other in enumerate(sets) if k != i)
               for i, mine in enumerate(sets))


def _union(a: list, b: list) -> list | None:
    """The shortest program both ``a`` and ``b`` are in, or None where one has
    a loop, a collective or a tree the other lacks, or where aligning a block
    would compare more than :data:`MAX_PAIRS` pairs."""
    pairs = _pairs(a, b)
    if pairs is None:
        return None
    out = []
    for i, j in pairs:
        entry = a[i] if i is not None else b[j]
        if i is None or j is None:
            if not _optional(entry):
                return None
            out.append(entry)
        elif isinstance(entry, _Loop):
            body = _union(a[i].body, b[j].body)
            if body is None:
                return None
            out.append(_Loop(entry.count, body))
        else:
            out.append(entry)
    return out


def _union_all(levels: list[list]) -> list | None:
    """The shortest program every one of ``levels`` (one level of each rank's
    entries) is in: the entries each must have matched in order, each block
    between them merged at once (:func:`_merged_block`), else rank by rank
    (:func:`_union`); None where those entries differ."""
    fixed = _anchors(levels)
    if fixed is None:
        return None
    out: list = []
    starts = [0] * len(levels)
    for k in range(len(fixed[0]) + 1):
        ends = [f[k] if k < len(f) else len(level) for f, level in zip(fixed, levels)]
        blocks = [level[a:b] for level, a, b in zip(levels, starts, ends)]
        merged = _merged_block(blocks)
        if merged is None:      # orders that disagree: the heaviest alignment, rank by rank
            merged = blocks[0]
            for other in blocks[1:]:
                merged = _union(merged, other)
                if merged is None:
                    return None
        out += merged
        if k < len(fixed[0]):
            anchor = levels[0][fixed[0][k]]
            if isinstance(anchor, _Loop):
                body = _union_all([level[f[k]].body for level, f in zip(levels, fixed)])
                if body is None:
                    return None
                anchor = _Loop(anchor.count, body)
            out.append(anchor)
        starts = [b + 1 for b in ends]
    return out


def _merged_block(blocks: list[list]) -> list | None:
    """One block of every rank (messages, completions, computations) as the
    shortest sequence that keeps each rank's order, or None where two ranks
    make two of its entries in opposite orders.  An entry is known by what it
    is and how many equal ones the rank made before it in the block, a
    computation by the kinds of statement either side of it where they
    differ (:func:`_computation`), else by the entry it follows, where the
    former gives two ranks opposite orders; a completion of several requests
    (a Waitall) by how many the rank made before it, else, where that gives
    opposite orders (ranks that only receive in one exchange make no Waitall
    of their sends: LULESH), by the operation and tag of the message posted
    last before it.  Where the ranks' orders leave a choice, the entry
    earliest in some rank's block (as a fraction of it) comes first.

    >>> a, b, c, d = (("p2p", "MPI_Isend", 0, 8, x, True) for x in "abcd")
    >>> _merged_block([[a, c], [b, c, d], [a, d]]) == [a, b, c, d]
    True
    >>> _merged_block([[a, b], [b, a]]) is None
    True
    """
    for by_kinds in (True, False):
        for by_post in (False, True):
            out = _in_order(blocks, by_post, by_kinds)
            if out is not None:
                return out
    return None


def _kind(entry):
    """What ``entry`` is, whichever side its messages go to."""
    if entry is None or entry[0] == "fixed":
        return entry
    if entry[0] == "p2p":
        return entry[:4] + entry[5:]
    return entry[:2] + (_kind(entry[2]),)


def _computation(block: list, position: int, last) -> tuple:
    """What the computation at ``position`` of ``block`` is known by: where
    the statements either side of it differ in kind (one exchange's Waits
    and the next one's receives; the block's end), those kinds, so that the
    ranks' longest computations, after each its own last message, are one
    (LULESH's corners: eight positions of the union, one per last Wait, each
    drawn from one rank's samples and seven zeros, predicted its 8 ranks at
    +37%); else the statement it follows (``last``, its name), as packing a
    buffer follows the message to that side."""
    before = block[position - 1] if position else None
    after = block[position + 1] if position + 1 < len(block) else None
    if before is not None and _kind(before) != _kind(after):
        return ("between", _kind(before), _kind(after))
    return ("after", last)


def _in_order(blocks: list[list], by_post: bool, by_kinds: bool) -> list | None:
    """:func:`_merged_block` with the completions of several requests known by
    the message posted before them (``by_post``) or by their count, and
    computations by the kinds either side (``by_kinds``,
    :func:`_computation`) or by the statement they follow."""
    entry: dict = {}
    after: dict = {}
    early: dict = {}
    for block in blocks:
        seen: dict = {}
        last = previous = post = None
        for position, e in enumerate(block):
            if e[0] == "fixed":
                base = _computation(block, position, last) if by_kinds else ("after", last)
            elif by_post and e[0] == "done" and e[2] is None:
                base = (e[1], post)
            else:
                base = e
            name = (base, seen.get(base, 0))
            seen[base] = name[1] + 1
            if e[0] != "fixed":
                last = name
            if e[0] == "p2p":
                post = e[1:3]
            entry.setdefault(name, e)
            after.setdefault(name, set())
            early[name] = min(early.get(name, 1.0), position / len(block))
            if previous is not None:
                after[previous].add(name)
            previous = name
    found = {name: k for k, name in enumerate(entry)}
    before = dict.fromkeys(entry, 0)
    for name in entry:
        for then in after[name]:
            before[then] += 1
    ready = [(early[n], found[n], n) for n in entry if not before[n]]
    heapq.heapify(ready)
    out = []
    while ready:
        _, _, name = heapq.heappop(ready)
        out.append(entry[name])
        for then in after[name]:
            before[then] -= 1
            if not before[then]:
                heapq.heappush(ready, (early[then], found[then], then))
    return out if len(out) == len(entry) else None


def _padded(program: list, entries: list, union: list, rank: int,
            examples: dict) -> list | None:
    """``program`` (its ``entries``) with what the ``union`` has and it lacks,
    each position's tokens collected in ``examples`` by the path down to it."""
    out = []
    pairs = _pairs(union, entries)
    if pairs is None or any(i is None for i, _ in pairs):
        return None
    for i, j in pairs:
        if isinstance(union[i], _Loop):
            if j is None:
                return None
            body = _padded(list(program[j].body), entries[j].body, union[i].body, rank,
                           examples.setdefault(i, {}))
            if body is None:
                return None
            out.append(LoopNode(program[j].count, tuple(body)))
        elif j is None:
            out.append(None)            # filled once every rank's tokens are known
        else:
            out.append(program[j])
            examples.setdefault(i, []).append((rank, program[j]))
    return out


def _pruned(programs: list[list], examples: dict) -> tuple[list[list], dict]:
    """The padded ``programs`` without the positions no rank filled (a union
    may hold one token twice, each rank's aligned with the one copy)."""
    keep = [i for i in range(len(programs[0])) if i in examples]
    out: list[list] = [[] for _ in programs]
    found: dict = {}
    for k, i in enumerate(keep):
        if isinstance(examples[i], dict):
            bodies, found[k] = _pruned([list(p[i].body) for p in programs], examples[i])
            for p, new, body in zip(programs, out, bodies):
                new.append(LoopNode(p[i].count, tuple(body)))
        else:
            found[k] = examples[i]
            for p, new in zip(programs, out):
                new.append(p[i])
    return out, found


def _stand_in(example: Token, rank: int, seen: int) -> Token:
    """The token a rank that lacks it makes instead: the same message with its
    peers ``MPI_PROC_NULL``; a computation of 0 seconds at each pass (the rank
    computed nothing there: drawn from the others' samples alone, LULESH's
    corners, whose longest computations follow each its own last Wait, made
    eight of them a rank, and their model predicted its 8 ranks at +136%)."""
    key = example.key
    if key[0] == "serial":
        return Token(key, (0.0,) * len(example.values))
    peers = [TRACED_PROC_NULL if isinstance(v, int) and v not in (seen, TRACED_PROC_NULL)
             else (rank if v == seen else v) for v in (key[SRC], key[DST])]
    return Token(key[:SRC] + tuple(peers) + key[DST + 1:], (), example.any_source)


def _filled(program: list, examples: dict, rank: int) -> list:
    out = []
    for i, node in enumerate(program):
        if isinstance(node, LoopNode):
            out.append(LoopNode(node.count, tuple(_filled(list(node.body), examples[i], rank))))
        elif node is None:
            seen, example = examples[i][0]
            out.append(_stand_in(example, rank, seen))
        else:
            out.append(node)
    return out


def _waits(program: list, path: tuple, names: dict, waits: dict) -> bool:
    """Follows one rank's own requests through its padded ``program`` (None where
    it lacks the union's token): which positions each of its completions waits
    for, by the completion's position, into ``waits``; False where a request
    cannot be followed."""
    for i, node in enumerate(program):
        here = (*path, i)
        if isinstance(node, LoopNode):
            if not _waits(list(node.body), here, names, waits):
                return False
            continue
        if node is None or node.key[0] == "serial" or node.key[OP] not in POSTS + COMPLETION_OPS:
            continue
        key = node.key
        if key[OP] in POSTS:
            if key[REQ] is not None:
                names[key[REQ]] = here
            continue
        named = [q for q in (key[REQ], *key[REQS]) if q is not None]
        if any(q not in names for q in named):
            return False
        waits.setdefault(here, set()).update(names.pop(q) for q in named)
    return True


def _renamed(program: list, path: tuple, waits: dict, slots: dict) -> list | None:
    """``program`` with its requests named by slot in the union (the lowest free
    when posted, freed by the completion that waits for it; a Wait for several
    a Waitall, a completion left nothing to wait for dropped), or None where a
    completion waits for a request posted after it."""
    out = []
    for i, node in enumerate(program):
        here = (*path, i)
        if isinstance(node, LoopNode):
            body = _renamed(list(node.body), here, waits, slots)
            if body is None:
                return None
            out.append(LoopNode(node.count, tuple(body)))
            continue
        key = node.key
        if key[0] == "serial" or key[OP] not in POSTS + COMPLETION_OPS:
            out.append(node)
        elif key[OP] in POSTS:
            used = set(slots.values())
            name = next(f"r{k}" for k in range(len(used) + 1) if f"r{k}" not in used)
            slots[here] = name
            out.append(Token(key[:REQ] + (name,) + key[REQ + 1:], node.values, node.any_source))
        else:
            targets = sorted(waits.get(here, ()))
            if any(t not in slots for t in targets):
                return None
            names = sorted((slots.pop(t) for t in targets), key=lambda q: int(q[1:]))
            if len(names) == 1 and key[REQ] is not None:
                out.append(Token(key[:REQ] + (names[0],) + key[REQ + 1:], node.values))
            elif names:         # ranks waited here for different requests: for them all
                out.append(Token(("MPI_Waitall" if key[REQ] is not None else key[OP],)
                                 + key[OP + 1:REQ] + (None, tuple(names)) + key[REQS + 1:],
                                 node.values))
    return out


def united(programs: list[list], ranks: list[int],
           side: Callable[[int, object], object] = _offset) -> list[list] | None:
    """The ``programs`` of ``ranks`` (one count), each padded to their union,
    requests renamed alike, or None (see the module's text; ``side``: which
    side of a rank a peer lies on, by default its offset, else
    :func:`grid_sides`)."""
    entries = [_entries(p, r, {}, side) for p, r in zip(programs, ranks)]
    if any(e is None for e in entries) or not _neighbours(entries):
        return None
    union = _union_all(entries)
    if union is None:
        return None
    examples: dict = {}
    padded = [_padded(p, e, union, r, examples) for p, e, r in zip(programs, entries, ranks)]
    if any(p is None for p in padded):
        return None
    padded, examples = _pruned(padded, examples)
    waits: dict = {}
    if not all(_waits(p, (), {}, waits) for p in padded):
        return None
    filled = [_filled(p, examples, r) for p, r in zip(padded, ranks)]
    first: dict = {}        # where ranks wait for one request at different places: the first
    for here in sorted(waits):
        waits[here] = {t for t in waits[here] if first.setdefault(t, here) == here}
    out = [_renamed(p, (), waits, {}) for p in filled]
    return None if any(p is None for p in out) else out
