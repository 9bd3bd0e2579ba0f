"""The same messages to every other rank in turn, as a loop over the ranks.

A master that hands out first jobs or stop messages sends one block to rank
1, then to rank 2, ... up to ``numprocs - 1``: at 4 ranks three blocks that
differ only in their peer, which the loop finder cannot merge and which, as
written, would reach three ranks at any count.  :func:`rank_loops` finds
runs of ``numprocs - 1`` blocks (of up to :data:`MAX_BLOCK` tokens) whose
keys agree but for peers that take every other rank in increasing order
(and the sizes of point-to-point messages, then set aside as in
:func:`pevpm.trace.extract.compress.loose`),
and makes each a :class:`~pevpm.trace.extract.tokens.LoopNode` counted
``numprocs - 1`` with index :data:`INDEX`, those peers written
``(k < procnum ? k : k + 1)`` (the k-th other rank).  From 3 ranks on; at
2 ranks one block is no evidence of a loop, unless a larger count had that
loop.

>>> from pevpm.trace.extract.tokens import SERIAL, Token
>>> send = lambda dst: Token(("MPI_Send", 8, 0, dst, 7, None, (), None, None), ())
>>> out = rank_loops([send(1), Token(SERIAL, (1.0,)), send(2), Token(SERIAL, (2.0,)),
...                   send(3), Token(SERIAL, (3.0,))], rank=0, numprocs=4)
>>> len(out), out[0].count, out[0].body[0].key[3], out[0].body[1].values, out[1].values
(2, 'numprocs - 1', '(k < procnum ? k : k + 1)', (1.0, 2.0), (3.0,))
"""

from __future__ import annotations

from pevpm.trace.extract.compress import POINT_TO_POINT
from pevpm.trace.extract.tokens import (
    OP,
    PEER_FIELDS,
    SIZE,
    LoopNode,
    Token,
    is_computation,
    is_message,
)

#: Longest block looked for, in tokens.
MAX_BLOCK = 16

#: The loop's index and the peer it gives.
INDEX = "k"
OTHER_RANK = f"({INDEX} < procnum ? {INDEX} : {INDEX} + 1)"
COUNT = "numprocs - 1"


def _block_fields(blocks: list[list[Token]], others: list[int]) -> set | None:
    """The (position, field) pairs whose peers are ``others`` in turn, when the
    blocks agree everywhere else and begin with a message to (or from) them (so
    the computation before the first block, a start-up, stays out of the
    loop); None if not."""
    varying = set()
    for j, first in enumerate(blocks[0]):
        if any(not isinstance(b[j], Token) or b[j].key[:1] != first.key[:1] for b in blocks):
            return None
        if not is_message(first):
            if any(b[j].key != first.key for b in blocks):
                return None
            continue
        for i in range(len(first.key)):
            values = [b[j].key[i] for b in blocks]
            if i in PEER_FIELDS and values == others:
                varying.add((j, i))
            elif i == SIZE and first.key[OP] in POINT_TO_POINT:
                continue                # sizes set aside (pevpm.trace.extract.compress.loose)
            elif any(v != values[0] for v in values):
                return None
    return varying if any(j == 0 for j, _ in varying) else None


def _loop(blocks: list[list[Token]], varying: set) -> list:
    """The loop the blocks make; a computation ending the last block, the work
    after the loop (a master's report after its stop messages), follows it
    instead of being pooled into every pass (with one block, the loop's own
    then has no sample)."""
    body = []
    for j, first in enumerate(blocks[0]):
        key = tuple(OTHER_RANK if (j, i) in varying else v for i, v in enumerate(first.key))
        sizes = {b[j].key[SIZE] for b in blocks} if is_message(first) else set()
        if len(sizes) > 1:      # sizes that differ: set aside, as compress.loose does
            body.append(Token(key[:SIZE] + (None,) + key[SIZE + 1:],
                              tuple(b[j].key[SIZE] for b in blocks)))
        else:
            body.append(Token(key, tuple(v for b in blocks for v in b[j].values)))
    if not is_computation(body[-1]):
        return [LoopNode(COUNT, tuple(body))]
    passes = tuple(v for b in blocks[:-1] for v in b[-1].values)
    return [LoopNode(COUNT, tuple(body[:-1]) + (Token(body[-1].key, passes),)), blocks[-1][-1]]


def signature(body) -> tuple:
    """A loop body's keys, point-to-point sizes set aside (how a loop found at
    one count is known at another)."""
    return tuple(t.key[:SIZE] + (None,) + t.key[SIZE + 1:]
                 if is_message(t) and t.key[OP] in POINT_TO_POINT else t.key for t in body)


def rank_loops(tokens: list, rank: int, numprocs: int, known: frozenset = frozenset()) -> list:
    """``tokens`` with each run of blocks sent to (or received from) every other
    rank in turn as a loop over them (see the module's docstring); at 2 ranks
    only blocks whose loop (:func:`signature`) a larger count had, in ``known``."""
    others = [r for r in range(numprocs) if r != rank]
    m = len(others)
    if m < 1 or (m < 2 and not known):
        return list(tokens)
    peers = [frozenset(t.key[f] for f in PEER_FIELDS)
             if isinstance(t, Token) and is_message(t) else None for t in tokens]
    out, i = [], 0
    while i < len(tokens):
        found = None
        if peers[i] is not None and others[0] in peers[i]:
            for size in range(1, min(MAX_BLOCK, (len(tokens) - i) // m) + 1):
                if not all(peers[i + b * size] is not None
                           and others[b] in peers[i + b * size] for b in range(1, m)):
                    continue    # the blocks' first messages do not go to the ranks in turn
                blocks = [tokens[i + b * size:i + (b + 1) * size] for b in range(m)]
                varying = _block_fields(blocks, others)
                nodes = _loop(blocks, varying) if varying else None
                if nodes and (m > 1 or signature(nodes[0].body) in known):
                    found = (size, nodes)
                    break
        if found:
            out += found[1]
            i += m * found[0]
        else:
            out.append(tokens[i])
            i += 1
    return out
