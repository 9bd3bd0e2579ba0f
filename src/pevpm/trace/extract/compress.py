"""Compressing a rank's token stream into loops.

The longest run of a repeated subsequence (a body of up to
:data:`MAX_PERIOD` tokens repeated at least twice) becomes a
:class:`~pevpm.trace.extract.tokens.LoopNode`, and the parts before and after it are
compressed the same way; each computation token of the body keeps the
seconds of every repetition.  A program that stays long because its
messages change size every time is compressed again with the sizes set
aside (:func:`compressed`; the result is approximate).

>>> from pevpm.trace.extract.tokens import SERIAL, Token
>>> send = Token(("MPI_Send", 8, 0, 1, 0, None, (), None, None), ())
>>> nodes = compress([Token(SERIAL, (1.0,)), send] * 3 + [send])
>>> nodes[0].count, len(nodes[0].body), nodes[1] == send
(3, 2, True)
"""

from __future__ import annotations

from pevpm.trace.extract.first_pass import shape
from pevpm.trace.extract.tokens import OP, SIZE, LoopNode, Token, is_message

#: Longest loop body looked for, in tokens.
MAX_PERIOD = 64


def best_repeat(ids: list[int], longest: int = MAX_PERIOD) -> tuple[int, int, int] | None:
    """(start, period, count) of the repeat covering most tokens (ties: shortest
    period), its period at most ``longest``."""
    best, covered = None, 0
    n = len(ids)
    for p in range(1, min(longest, n // 2) + 1):
        run = 0
        for i in range(n - p + 1):
            if i < n - p and ids[i] == ids[i + p]:
                run += 1
                continue
            count = (run + p) // p
            if count >= 2 and count * p > covered:
                best, covered = (i - run, p, count), count * p
            run = 0
    return best


def compress(tokens: list[Token], peel: frozenset = frozenset()) -> list:
    """Tokens and :class:`LoopNode`s: the longest repeat as a loop, recursively around it;
    a repeat whose body's :func:`~pevpm.trace.extract.first_pass.shape` is in ``peel``
    has its first pass written before the loop (and a single later pass as it is)."""
    if len(tokens) < 2:
        return list(tokens)
    index: dict[tuple, int] = {}
    # a loop found before (pevpm.trace.extract.rank_loops) repeats nothing
    ids = [index.setdefault(t.key, len(index)) if isinstance(t, Token) else -1 - i
           for i, t in enumerate(tokens)]
    found = best_repeat(ids)
    if found is None:
        return list(tokens)
    start, period, count = found
    before, after = tokens[:start], tokens[start + count * period:]
    first: list = []
    if peel and shape(tokens[start:start + period]) in peel:
        first, start, count = list(tokens[start:start + period]), start + period, count - 1
    if count < 2:
        loop = list(tokens[start:start + period])
    else:
        loop = [LoopNode(count, tuple(
            Token(tokens[start + j].key,
                  tuple(v for k in range(count) for v in tokens[start + k * period + j].values))
            for j in range(period)))]
    return compress(before, peel) + first + loop + compress(after, peel)


#: A rank's compressed program longer than this (statements at its top level)
#: is compressed again with its point-to-point sizes set aside (:func:`loose`).
LONG_PROGRAM = 100

POINT_TO_POINT = ("MPI_Send", "MPI_Ssend", "MPI_Bsend", "MPI_Rsend", "MPI_Recv", "MPI_Isend",
                  "MPI_Issend", "MPI_Irecv", "MPI_Sendrecv")


def loose(tokens: list[Token]) -> list[Token]:
    """``tokens`` with each point-to-point message's size moved from its key to
    its values, so repetitions that move different amounts (a job of its own
    size each time) look alike; the sizes are pooled like computations."""
    out = []
    for t in tokens:
        if isinstance(t, Token) and is_message(t) and t.key[OP] in POINT_TO_POINT:
            out.append(Token(t.key[:SIZE] + (None,) + t.key[SIZE + 1:], (t.key[SIZE],)))
        else:
            out.append(t)
    return out


def is_loose(token: Token) -> bool:
    """A message whose sizes vary between the repetitions merged into it."""
    return is_message(token) and token.key[SIZE] is None


def compressed(tokens: list[Token], peel: frozenset = frozenset(),
               loosen: bool = True) -> tuple[list, bool | None]:
    """The rank's program compressed, and whether setting its sizes aside halves
    it (None: no longer than :data:`LONG_PROGRAM`, not tried); where it does and
    ``loosen``, the program is the latter (``peel``: as for :func:`compress`).

    >>> from pevpm.trace.extract.tokens import SERIAL, Token
    >>> grows = [(Token(SERIAL, (1.0,)), Token(("MPI_Send", 8 * k, 0, 1, 0, None, (), None,
    ...                                        None), ())) for k in range(1, 131)]
    >>> tokens = [t for pair in grows for t in pair]    # a size of its own each time
    >>> [(len(p), halves) for p, halves in (compressed(tokens), compressed(tokens, loosen=False))]
    [(1, True), (260, True)]
    """
    program = compress(tokens, peel)
    if len(program) <= LONG_PROGRAM:
        return program, None
    looser = compress(loose(tokens), peel)
    halves = 2 * len(looser) <= len(program)
    return (looser if halves and loosen else program), halves
