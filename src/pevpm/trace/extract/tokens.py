"""A rank's replay program as a token stream, the unit ``pevpm extract`` compresses.

A token is a message with its peers as ranks and its requests renamed by
slot (``r0``, ``r1``... the lowest slot free when posted, so repetitions
look alike), a computation with its seconds, or a recognised tree of
messages (:mod:`pevpm.trace.extract.trees`).  Back-to-back computations are one
token.

>>> from pevpm.trace.events import Call, Send, Trace
>>> t = Trace(((Call("MPI_Init", 0, 0), Call("MPI_Send", 1, 2, (Send(1, 0, 8),)),
...             Call("MPI_Finalize", 3, 3)), (Call("MPI_Init", 0, 0), Call("MPI_Finalize", 3, 3))))
>>> [tok.key[0] for tok in rank_tokens(t, 0)]
['serial', 'MPI_Send', 'serial']
>>> is_message(rank_tokens(t, 0)[1]), rank_tokens(t, 0)[1].key[DST]
(True, 1)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pevpm.model.ast import Message, Serial
from pevpm.trace.events import Trace
from pevpm.trace.replay.replay import rank_program

#: Positions in a message token's key.
OP, SIZE, SRC, DST, TAG, REQ, REQS, ROOT, RECV_SIZE = range(9)
PEER_FIELDS = (SRC, DST, ROOT)

SERIAL = ("serial",)
#: A sleep: time the rank waited outside MPI without computing (``time.sleep``).
SLEEP = ("serial", "sleep")


@dataclass(frozen=True)
class Token:
    key: tuple            # SERIAL, ("tree", ...) or the message's op and fields
    values: tuple         # computation seconds, one per occurrence merged into it
    # a receive's: whether it asked for MPI_ANY_SOURCE (None: the trace does not say)
    any_source: bool | None = field(default=None, compare=False)


@dataclass(frozen=True)
class LoopNode:
    count: int
    body: tuple


def is_computation(token: Token) -> bool:
    """A computation or a sleep (a ``Serial``).

    >>> is_computation(Token(SLEEP, (0.1,))), is_computation(Token(("MPI_Send",), ()))
    (True, False)
    """
    return token.key[0] == "serial"


def is_message(token: Token) -> bool:
    """A single message (not a computation, not a tree of messages)."""
    return token.key[0] not in ("serial", "tree")


def uses_cpu(trace: Trace) -> bool:
    """Whether the trace's computations are taken in CPU seconds: only where its
    ranks outnumbered its cores (elsewhere the wall time less what the rank
    slept is what it computed)."""
    return trace.oversubscribed and trace.has_cpu


def _slot_order(request: str) -> tuple:
    """``r2`` before ``r10``; a request no slot names (never posted) after them."""
    return (0, int(request[1:])) if request[1:].isdigit() else (1, request)


def _completion(requests: list[str]) -> Token:
    """One Wait (one request) or Waitall of ``requests``."""
    if len(requests) == 1:
        return Token(("MPI_Wait", 0, None, None, None, requests[0], (), None, None), ())
    return Token(("MPI_Waitall", 0, None, None, None, None, tuple(requests), None, None), ())


def launch_skew(trace: Trace, rank: int) -> float:
    """How much later than the first rank ``rank`` left ``MPI_Init`` (or the
    trace's first call), in seconds.

    >>> from pevpm.trace.events import Call, Trace
    >>> t = Trace(((Call("MPI_Init", 0.0, 1.0), Call("MPI_Finalize", 3.0, 3.0)),
    ...            (Call("MPI_Init", 0.0, 1.5), Call("MPI_Finalize", 3.0, 3.0))))
    >>> launch_skew(t, 0), launch_skew(t, 1)
    (0.0, 0.5)
    """
    return trace.begin(rank) - min(trace.begin(r) for r in range(trace.numprocs))


def rank_tokens(trace: Trace, rank: int, ready: dict[int, float] | None = None,
                cpu: bool | None = None) -> list[Token]:
    """Rank ``rank``'s program as tokens with its peers' ranks and slot-named
    requests; computations in wall seconds, but in CPU seconds with ``cpu``
    (by default: when the trace was taken with more ranks than cores and has
    them; a rank that shared its core computed no more for that).  Back-to-back computations and sleeps are
    one token, a :data:`SLEEP` where the rank slept longer than it computed
    (a job that sleeps), else a :data:`SERIAL`: a gap is one token at every
    count whether or not it held a short sleep there, so ranks still match.
    The wait of a rank that left ``MPI_Init`` (or a section's first call)
    later than the first rank is left out (:func:`launch_skew` says how
    long): it is the launcher's, not the program's, and on a loaded host it
    took 8-40 ms at random (NPB IS at 4 ranks), which a model drew again on
    every rank at every count; the rank still has its first gap there (0
    when it computed nothing), so ranks still match.
    The completions of a run of ``MPI_Waitany``/``Waitsome`` calls (``Testany``,
    ``Testsome``), which come in whatever order the messages came, are one
    Waitall of all their requests, in slot order, with the computations between
    them after it: what such a loop waits for, the same on every rank and run.
    With ``ready`` (:func:`pevpm.trace.replay.replay.rank_program`'s), a
    completion found by a poll is followed by a :data:`SLEEP` token of its
    own, the time it was noticed late, so that every repetition has it."""
    n = trace.numprocs
    env = {"procnum": rank, "numprocs": n}
    slots: dict[str, str] = {}
    tokens = []
    gap = [0.0, 0.0]                    # seconds computed, seconds slept
    statements, asked, any_order, late = rank_program(trace, rank, cpu=uses_cpu(trace) if cpu is None else cpu,
                                                      ready=ready)
    pending: list[str] = []     # requests completed in the run's order, not yet written
    first = launch_skew(trace, rank) > 0     # a first sleep: the later exit, left out
    for i, s in enumerate(statements + [None]):
        if isinstance(s, Serial) and not late[i]:
            if not (first and i == 0):
                gap[s.sleep] += float(s.time.evaluate(env))
            continue
        if pending and not (s is not None and any_order[i]):
            tokens.append(_completion(sorted(pending, key=_slot_order)))
            pending = []
        if (gap != [0.0, 0.0] or first) and not (pending and any_order[i]):
            tokens.append(Token(SLEEP if gap[1] > gap[0] else SERIAL, (sum(gap),)))
            gap, first = [0.0, 0.0], False
        if s is None:
            break
        if isinstance(s, Serial):
            tokens.append(Token(SLEEP, (float(s.time.evaluate(env)),)))
            continue
        assert isinstance(s, Message)
        if any_order[i]:                # a Waitany/Waitsome: its requests join the others'
            pending += [slots.pop(q, q) for q in (s.request, *s.requests) if q is not None]
            continue

        def num(expr):
            return None if expr is None else int(expr.evaluate(env))

        request = None
        if s.request is not None and s.op in ("MPI_Isend", "MPI_Issend", "MPI_Irecv"):
            used = set(slots.values())
            request = next(f"r{i}" for i in range(len(used) + 1) if f"r{i}" not in used)
            slots[s.request] = request
        elif s.request is not None:
            request = slots.pop(s.request, s.request)
        # a Waitall's requests in slot order: the order it completed them in is the run's
        requests = tuple(sorted((slots.pop(q, q) for q in s.requests), key=_slot_order))
        tokens.append(Token((s.op, num(s.size), num(s.src), num(s.dst), num(s.tag), request,
                             requests, num(s.root), num(s.recv_size)), (), asked[i]))
    return tokens
