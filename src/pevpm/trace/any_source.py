"""Receives from whichever rank is ready (``MPI_ANY_SOURCE``) and the replies
that go back to it, as a model writes them.

A trace records the rank a receive matched, not what it asked for.  A master
that answers whichever worker finishes first matches its workers in an order
of the run's making, so no peer expression of ``procnum`` and ``numprocs``
gives it and no two passes of its loop look alike.  :func:`any_source`
rewrites such a rank's token stream: a receive whose tag the rank took from
two or more sources (the first such tag, and any other not always from the
rank the first one's latest receive matched) becomes an ``MPI_ANY_SOURCE``
receive naming its status
(its request slot, or ``s0`` when blocking), and the messages after it whose
peer is the rank it matched -- the reply (a tag always sent to it), the rest
of the job -- name that
rank -- a receive included -- as ``status.MPI_SOURCE`` (until the next such receive), as
``examples/bag_of_tasks/model.py`` does by hand.

>>> from pevpm.trace.tokens import Token
>>> recv = lambda src, tag: Token(("MPI_Recv", 8, src, 0, tag, None, (), None, None), ())
>>> send = lambda dst: Token(("MPI_Send", 8, 0, dst, 7, None, (), None, None), ())
>>> out = any_source([recv(2, 1), send(2), recv(1, 1), send(1)])
>>> [(t.key[2], t.key[3], t.key[5]) for t in out]       # doctest: +NORMALIZE_WHITESPACE
[('MPI_ANY_SOURCE', 0, 's0'), (0, 's0.MPI_SOURCE', None),
 ('MPI_ANY_SOURCE', 0, 's0'), (0, 's0.MPI_SOURCE', None)]
"""

from __future__ import annotations

from pevpm.trace.tokens import DST, OP, REQ, SRC, TAG, Token, is_message

#: Receives that may name ``MPI_ANY_SOURCE``.
RECEIVES = ("MPI_Recv", "MPI_Irecv")

#: The status name of a blocking receive from any source.
STATUS = "s0"


def _sources_by_tag(tokens: list[Token]) -> dict:
    out: dict = {}
    for t in tokens:
        if is_message(t) and t.key[OP] in RECEIVES and isinstance(t.key[SRC], int):
            out.setdefault(t.key[TAG], set()).add(t.key[SRC])
    return out


def _with(token: Token, **fields) -> Token:
    key = list(token.key)
    for name, value in fields.items():
        key[{"src": SRC, "dst": DST, "req": REQ}[name]] = value
    return Token(tuple(key), token.values)


def _following(tokens: list[Token], wild: set) -> set:
    """The wild tags received only from the rank the first wild tag's latest
    receive matched (the rest of a job, after its announcement)."""
    receives = [t for t in tokens if is_message(t) and t.key[OP] in RECEIVES
                and t.key[TAG] in wild]
    lead = receives[0].key[TAG]
    latest, out = None, wild - {lead}
    for t in receives:
        if t.key[TAG] == lead:
            latest = t.key[SRC]
        elif t.key[SRC] != latest:
            out.discard(t.key[TAG])
    return out


def _replies(tokens: list[Token], wild: set) -> set:
    """Tags of the sends that, from the first wild receive on, always go to the
    rank the latest one matched (a stop message sent to every rank in turn
    reaches it only once: not a reply)."""
    latest, tags, other = None, set(), set()
    for t in tokens:
        if not is_message(t):
            continue
        if t.key[OP] in RECEIVES and t.key[TAG] in wild:
            latest = t.key[SRC]
        elif latest is not None and t.key[OP] not in RECEIVES and t.key[DST] is not None:
            (tags if t.key[DST] == latest else other).add(t.key[TAG])
    return tags - other


def any_source(tokens: list[Token]) -> list[Token]:
    """``tokens`` with receives from any source and replies to their senders
    written symbolically (see the module's docstring); unchanged when every
    tag comes from one source."""
    wild = {tag for tag, sources in _sources_by_tag(tokens).items() if len(sources) > 1}
    if not wild:
        return tokens
    wild -= _following(tokens, wild)
    replies = _replies(tokens, wild)
    out = []
    bound: tuple[int, str] | None = None     # (matched rank, its status name)
    for t in tokens:
        if not is_message(t):
            out.append(t)
            continue
        receive = t.key[OP] in RECEIVES
        if receive and t.key[TAG] in wild:
            status = t.key[REQ] or STATUS
            bound = (t.key[SRC], status)
            out.append(_with(t, src="MPI_ANY_SOURCE", req=status))
        elif bound and receive and t.key[SRC] == bound[0]:
            out.append(_with(t, src=f"{bound[1]}.MPI_SOURCE"))
            if t.key[REQ] not in (None, bound[1]):
                bound = None            # another request: its status is not the bound one
        elif bound and t.key[DST] == bound[0] and t.key[TAG] in replies:
            out.append(_with(t, dst=f"{bound[1]}.MPI_SOURCE"))
        else:
            out.append(t)
    return out
