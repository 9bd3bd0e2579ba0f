"""Receives from whichever rank is ready (``MPI_ANY_SOURCE``) and the replies
that go back to it, as a model writes them.

A trace records the rank a receive matched, not what it asked for.  A master
that answers whichever worker finishes first matches its workers in an order
of the run's making, so no peer expression of ``procnum`` and ``numprocs``
gives it and no two passes of its loop look alike.  :func:`any_source`
rewrites such a rank's token stream: a receive whose tag the rank took from
two or more sources in no fixed turn (the first such tag, and any other not always from the
rank the first one's latest receive matched) becomes an ``MPI_ANY_SOURCE``
receive naming its status
(its request slot, or ``s0`` when blocking), and the messages after it whose
peer is the rank it matched -- the reply (a tag always sent to it), the rest
of the job -- name that
rank -- a receive included -- as ``status.MPI_SOURCE`` (until the next such receive), as
``examples/bag_of_tasks/model.py`` does by hand.  The status of a
non-blocking receive names the rank only once a Wait has completed it: a
message before that keeps its peer (HPCCG sends to its neighbours between
posting a receive from any source and waiting for it).

>>> from pevpm.trace.extract.tokens import Token
>>> recv = lambda src, tag: Token(("MPI_Recv", 8, src, 0, tag, None, (), None, None), ())
>>> send = lambda dst: Token(("MPI_Send", 8, 0, dst, 7, None, (), None, None), ())
>>> out, (wild, replies) = any_source([recv(2, 1), send(2), recv(1, 1), send(1),
...                                     recv(1, 1), send(1)])
>>> sorted(wild), sorted(replies)
([1], [7])
>>> [(t.key[2], t.key[3], t.key[5]) for t in out[:2]]
[('MPI_ANY_SOURCE', 0, 's0'), (0, 's0.MPI_SOURCE', None)]
>>> any_source([recv(2, 1), recv(1, 1), recv(2, 1), recv(1, 1)])[0][0].key[2]   # in turn
2
"""

from __future__ import annotations

from pevpm.trace.extract.tokens import DST, OP, REQ, REQS, SRC, TAG, LoopNode, Token, is_message

#: Receives that may name ``MPI_ANY_SOURCE``.
RECEIVES = ("MPI_Recv", "MPI_Irecv")

#: The status name of a blocking receive from any source.
STATUS = "s0"


def _sources_by_tag(tokens: list[Token]) -> dict:
    out: dict = {}
    for t in tokens:
        if is_message(t) and t.key[OP] in RECEIVES and isinstance(t.key[SRC], int):
            out.setdefault(t.key[TAG], []).append(t.key[SRC])
    return out


def _in_turn(sources: list[int]) -> bool:
    """Whether the sources repeat in a fixed order (a halo exchange's up and
    down neighbours), with a period of at most the number of sources: then
    the program named them; a master's workers come in the run's order.

    >>> _in_turn([2, 0, 2, 0, 2]), _in_turn([1, 2, 1, 3, 2])
    (True, False)
    """
    return any(all(sources[i] == sources[i + period] for i in range(len(sources) - period))
               for period in range(1, len(set(sources)) + 1))


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
    if not receives:                # a rank alone (one process): it receives nothing
        return set()
    lead = receives[0].key[TAG]
    latest, out = None, wild - {lead}
    for t in receives:
        if t.key[TAG] == lead:
            latest = t.key[SRC]
        elif t.key[SRC] != latest:
            out.discard(t.key[TAG])
    return out


def _replies(tokens: list[Token], wild, receives: bool = False) -> set:
    """Tags of the sends (``receives``: the receives) that, from the first wild
    receive on (``wild``: tells one), always go to (come from) the rank the
    latest one matched (a stop message sent to every rank in turn reaches it
    only once: not a reply)."""
    latest, tags, other = None, set(), set()
    for t in tokens:
        if not is_message(t):
            continue
        receive = t.key[OP] in RECEIVES
        if receive and wild(t):
            latest = t.key[SRC]
        elif latest is not None and receive == receives:
            peer = t.key[SRC if receives else DST]
            if peer is not None:
                (tags if peer == latest else other).add(t.key[TAG])
    return tags - other


def _asked(tokens: list[Token]) -> bool:
    """Whether the trace says which receives asked for ``MPI_ANY_SOURCE``."""
    return any(t.any_source is not None for t in tokens
               if is_message(t) and t.key[OP] in RECEIVES)


def any_source(tokens: list[Token], hint: tuple[frozenset, frozenset] | None = None,
               ) -> tuple[list[Token], tuple[frozenset, frozenset]]:
    """``tokens`` with receives from any source and replies to their senders
    written symbolically (see the module's docstring), and the tags taken as
    received from any source and as replies; unchanged when every tag comes
    from one source.  ``hint``: those of the same rank at a larger count (at 2
    ranks a master hears from one worker only, and every message it sends
    goes to the rank it heard from).  Where the trace says which receives
    asked for ``MPI_ANY_SOURCE`` (``pevpm trace``'s), those and only those are
    (several receives with one tag from different neighbours keep their
    sources), and a later receive names the matched rank only for a tag that
    always came from it.

    >>> from pevpm.trace.extract.tokens import Token
    >>> recv = lambda src, wild: Token(("MPI_Recv", 8, src, 0, 5, None, (), None, None), (),
    ...                                wild)
    >>> out, _ = any_source([recv(1, False), recv(3, False), recv(3, False), recv(1, False),
    ...                      recv(2, True)])
    >>> [t.key[2] for t in out]
    [1, 3, 3, 1, 'MPI_ANY_SOURCE']
    """
    if _asked(tokens):
        wild = {t.key[TAG] for t in tokens if is_message(t) and t.any_source}
        following = _replies(tokens, _is_wild, receives=True)
        is_wild = _is_wild
    else:
        wild = {tag for tag, sources in _sources_by_tag(tokens).items()
                if not _in_turn(sources)} | (hint[0] if hint else set())
        wild -= _following(tokens, wild)
        following = None

        def is_wild(t: Token) -> bool:
            return t.key[TAG] in wild
    if not wild:
        return tokens, (frozenset(), frozenset())
    replies = hint[1] if hint else _replies(tokens, is_wild)
    out = []
    bound: tuple[int, str] | None = None     # (matched rank, its status name)
    pending: tuple[int, str] | None = None   # the same for a request not completed yet
    for t in tokens:
        if not is_message(t):
            out.append(t)
            continue
        if pending and pending[1] in (t.key[REQ], *t.key[REQS]) and t.key[OP] not in RECEIVES:
            bound, pending = pending, None      # its Wait: the status holds the rank now
        receive = t.key[OP] in RECEIVES
        if receive and is_wild(t):
            status = t.key[REQ] or STATUS
            if t.key[REQ]:          # its status is known once a Wait completes it
                bound, pending = None, (t.key[SRC], status)
            else:
                bound = (t.key[SRC], status)
            out.append(_with(t, src="MPI_ANY_SOURCE", req=status))
        elif (bound and receive and t.key[SRC] == bound[0]
              and (following is None or t.key[TAG] in following)):
            out.append(_with(t, src=f"{bound[1]}.MPI_SOURCE"))
            if t.key[REQ] not in (None, bound[1]):
                bound = None            # another request: its status is not the bound one
        elif bound and t.key[DST] == bound[0] and t.key[TAG] in replies:
            out.append(_with(t, dst=f"{bound[1]}.MPI_SOURCE"))
        else:
            out.append(t)
    return out, (frozenset(wild), frozenset(replies))


def _is_wild(t: Token) -> bool:
    """A receive that asked for ``MPI_ANY_SOURCE``, as the trace says."""
    return bool(t.any_source) and t.key[OP] in RECEIVES


def _is_any_source_pass(node) -> bool:
    first = next((t for t in node.body if is_message(t)), None)
    return first is not None and first.key[SRC] == "MPI_ANY_SOURCE"


def any_source_passes(program: list) -> set:
    """The bodies (their keys) of the program's top-level loops that begin with
    a receive from any source."""
    return {tuple(t.key for t in n.body) for n in program
            if isinstance(n, LoopNode) and _is_any_source_pass(n)}


def single_passes(program: list, bodies: set) -> list:
    """``program`` with each top-level run of tokens that is one pass of a loop
    in ``bodies`` (found at a larger count) made a loop of one pass: the last
    results, one per worker, are one at 2 ranks and a loop at 4."""
    out, i = [], 0
    while i < len(program):
        for body in bodies:
            run = program[i:i + len(body)]
            if len(run) == len(body) and all(isinstance(t, Token) and t.key == k
                                             for t, k in zip(run, body)):
                out.append(LoopNode(1, tuple(run)))
                i += len(body)
                break
        else:
            out.append(program[i])
            i += 1
    return out
