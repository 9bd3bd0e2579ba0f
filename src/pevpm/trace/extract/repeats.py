"""Receive until the tag says stop: a traced loop that ends on a distinct tag
as a ``Repeat`` of the extracted model.

A worker that takes orders until a stop message comes runs, in its trace, a
loop of K passes that each begin with a receive from the same peer (tag
``T``), and then that receive once more with another tag (``STOP``) and
nothing of the rest of the pass.  K is the number of orders the other side
sent, not the worker's own: written as a count, it would only hold at the
traced run.  :func:`receive_until_tag` turns the loop and the receive after
it into a :class:`RepeatNode`, written as

    with b.repeat('s.MPI_TAG == STOP'):
        ... the receive, with tag MPI_ANY_TAG, naming its status s ...
        with b.on_ranks('s.MPI_TAG != STOP'):
            ... the rest of the pass ...

so the worker stops when its orders do, at any rank count.

>>> from pevpm.trace.extract.tokens import SERIAL, LoopNode, Token
>>> recv = lambda tag: Token(("MPI_Recv", 8, 0, 1, tag, None, (), None, None), ())
>>> send = Token(("MPI_Send", 8, 1, 0, 5, None, (), None, None), ())
>>> work = Token(SERIAL, (0.1, 0.2))
>>> program = [LoopNode(2, (recv(1), work, send)), recv(9), Token(SERIAL, (0.5,))]
>>> out = receive_until_tag(program)
>>> len(out), out[0].stop, out[0].status, [t.key[4] for t in out[0].prefix]
(2, 9, 's0', ['MPI_ANY_TAG'])
"""

from __future__ import annotations

from dataclasses import dataclass

from pevpm.trace.extract.tokens import (
    OP,
    REQ,
    REQS,
    TAG,
    LoopNode,
    Token,
    is_computation,
    is_message,
)

#: Receives whose status a Repeat can test.
RECEIVES = ("MPI_Recv", "MPI_Irecv")

#: The status name given to a blocking receive that has none (its request slot
#: names a non-blocking one's).
STATUS = "s0"


@dataclass(frozen=True)
class RepeatNode:
    """Passes of ``prefix`` (up to and including the receive's completion) and,
    unless the received tag was ``stop``, ``rest``; ``status`` names the
    receive's status; ``passes``: the traced passes, the stopping one included."""

    prefix: tuple
    rest: tuple
    stop: int
    status: str
    passes: int

    @property
    def until(self) -> str:
        return f"{self.status}.MPI_TAG == {self.stop}"

    @property
    def goes_on(self) -> str:
        return f"{self.status}.MPI_TAG != {self.stop}"


def _receive_prefix(body: tuple) -> int | None:
    """The length of the body's part up to its first message, a receive, and
    that receive's completion (computations only around them), else None."""
    first = next((i for i, t in enumerate(body) if not (isinstance(t, Token)
                                                         and is_computation(t))), None)
    if first is None or not (isinstance(body[first], Token) and is_message(body[first])
                             and body[first].key[OP] in RECEIVES):
        return None
    if body[first].key[OP] == "MPI_Recv":
        return first + 1
    request = body[first].key[REQ]
    for i in range(first + 1, len(body)):
        t = body[i]
        if isinstance(t, Token) and is_computation(t):
            continue
        done = (isinstance(t, Token) and is_message(t) and t.key[OP] in ("MPI_Wait", "MPI_Waitall")
                and (t.key[REQ] == request or request in t.key[REQS]))
        return i + 1 if done else None
    return None


def _retagged(token: Token, tag, status: str | None) -> Token:
    key = list(token.key)
    key[TAG] = tag
    if status is not None and key[REQ] is None:
        key[REQ] = status
    return Token(tuple(key), token.values)


def receive_until_tag(program: list) -> list:
    """``program`` with each top-level loop whose passes begin with a receive,
    followed by that receive with another tag and nothing more of a pass, as a
    :class:`RepeatNode` (the receive after the loop pooled into the first part
    of the passes)."""
    out = list(program)
    i = 0
    while i < len(out):
        node = out[i]
        size = _receive_prefix(node.body) if isinstance(node, LoopNode) else None
        after = out[i + 1:i + 1 + size] if size else []
        if size is None or len(after) < size or not all(isinstance(t, Token) for t in after):
            i += 1
            continue
        prefix = node.body[:size]
        first = next(j for j, t in enumerate(prefix) if not is_computation(t))
        if not is_message(after[first]):    # a computation where the receive was: no stop
            i += 1
            continue
        stop = after[first].key[TAG]
        same_shape = all(a.key == b.key for j, (a, b) in enumerate(zip(prefix, after))
                         if j != first)
        tagged = _retagged(after[first], prefix[first].key[TAG], None)
        if not same_shape or tagged.key != prefix[first].key or stop == prefix[first].key[TAG]:
            i += 1
            continue
        status = prefix[first].key[REQ] or STATUS
        pooled = [Token(b.key, b.values + a.values) for b, a in zip(prefix, after)]
        pooled[first] = _retagged(pooled[first], "MPI_ANY_TAG", status)
        out[i:i + 1 + size] = [RepeatNode(tuple(pooled), node.body[size:], stop, status,
                                          node.count + 1)]
        i += 1
    return out
