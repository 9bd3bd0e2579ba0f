"""MPI point-to-point matching: posted sends and receives, and which may pair.

The rules (MPI 3.1 sec. 3.5) the virtual machine relies on:

* a receive matches a send when the context (user program, collective
  internals, or a sub-communicator's exchanges: :data:`SUBCOMM_TAG`), the
  source (or ``MPI_ANY_SOURCE``) and the tag (or ``MPI_ANY_TAG``) agree;
* non-overtaking: of the sends from one source that match a receive, only the
  first posted may be taken, and a rank's receives are matched in the order
  they were posted;
* the choice *between* sources (``MPI_ANY_SOURCE``) is the engine's: the
  earliest arrival.

Unmatched sends are indexed by destination then source (a queue per pair),
so finding a receive's candidates costs the number of sources with messages
pending for it, not the size of all queues.  Unmatched receives are bucketed
per rank by (context, source, tag), wildcards being keys of their own, so a
new send looks at the four buckets that can hold its receives (exact,
``MPI_ANY_TAG``, ``MPI_ANY_SOURCE``, both) instead of every receive the
rank has posted.  Which of several matching receives wins is decided by
posting order (the engine resolves receives by post time, then posting
sequence number), so bucketing changes no match.

A posted send or receive is also the MPI request of a non-blocking call:
``done``, ``completion`` (virtual time) and ``path`` (the critical-path
seconds leading to its completion) are filled in when it completes.  Its
``where`` is the place of the statement that posted it, for error reports.

>>> q = MatchingQueues(3)
>>> s = PostedSend(src=1, dst=0, tag=7, context=0, size=8, posted=0.0, seq=1)
>>> r = PostedRecv(rank=0, src=ANY_SOURCE, tag=ANY_TAG, context=0, size=8, posted=0.0, seq=2)
>>> q.post_recv(r)
False
>>> q.post_send(s) == [r], q.candidates(r) == [s]
(True, True)
>>> q.match(s, r); q.candidates(r)
[]
"""

from __future__ import annotations

from collections import deque

from pevpm.model.expr import ANY_SOURCE, ANY_TAG

USER, COLLECTIVE, SUBCOMM = 0, 1, 2  # matching contexts

#: The tag of a sub-communicator's exchanges (``pevpm.trace.replay.subcomm``):
#: a user-program message with this tag is matched in the SUBCOMM context, so
#: an ``MPI_ANY_TAG`` receive of the program never takes one.
SUBCOMM_TAG = 1_073_741_823


def context_of(context: int, tag: int) -> int:
    """The context a message posted in ``context`` with ``tag`` is matched in.

    >>> context_of(USER, 5), context_of(USER, SUBCOMM_TAG), context_of(COLLECTIVE, SUBCOMM_TAG)
    (0, 2, 1)
    """
    return SUBCOMM if context == USER and tag == SUBCOMM_TAG else context


class _Request:
    """Completion state shared by sends and receives."""

    __slots__ = ()

    def complete(self, time: float, path: tuple, comm: float) -> None:
        self.done = True
        self.completion = time
        self.path = path
        self.comm = comm


class PostedSend(_Request):
    """A send as posted by rank ``src``: ``posted`` is its local clock then.

    ``transfer`` is the message's transfer time, drawn once, the first time a
    receive considers the message.
    """

    __slots__ = (
        "comm",
        "completion",
        "context",
        "done",
        "dst",
        "op",
        "origin",
        "path",
        "posted",
        "seq",
        "size",
        "src",
        "tag",
        "transfer",
        "waiter",
        "where",
    )

    def __init__(self, src, dst, tag, context, size, posted, seq, op="MPI_Send",
                 origin=(0.0, 0.0, 0.0), where=None):
        self.src, self.dst, self.tag, self.context, self.size = src, dst, tag, context, size
        self.posted, self.seq, self.op, self.origin, self.where = posted, seq, op, origin, where
        self.transfer = None
        self.done = False
        self.completion = self.comm = 0.0
        self.path = origin
        self.waiter = None


class PostedRecv(_Request):
    """A receive posted by ``rank`` at local clock ``posted``; ``origin`` is the
    rank's critical path then; ``queued`` says it sits in the decision heap."""

    __slots__ = (
        "comm",
        "completion",
        "context",
        "done",
        "op",
        "origin",
        "path",
        "posted",
        "queued",
        "rank",
        "seq",
        "size",
        "src",
        "status",
        "tag",
        "waiter",
        "where",
    )

    def __init__(self, rank, src, tag, context, size, posted, seq, op="MPI_Recv",
                 origin=(0.0, 0.0, 0.0), status=None, where=None):
        self.rank, self.src, self.tag, self.context, self.size = rank, src, tag, context, size
        self.posted, self.seq, self.op, self.origin, self.where = posted, seq, op, origin, where
        self.status = status
        self.queued = False
        self.done = False
        self.completion = self.comm = 0.0
        self.path = origin
        self.waiter = None


def matches(recv: PostedRecv, send: PostedSend) -> bool:
    """MPI's matching rule (destination aside)."""
    return (send.context == recv.context
            and (recv.src == ANY_SOURCE or recv.src == send.src)
            and (recv.tag == ANY_TAG or recv.tag == send.tag))


class MatchingQueues:
    """Unmatched sends per (destination, source), in post order, and receives
    per rank in buckets keyed by (context, source, tag)."""

    def __init__(self, numprocs: int):
        self._sends: list[dict[int, deque]] = [{} for _ in range(numprocs)]
        self._recvs: list[dict[tuple, dict[int, PostedRecv]]] = [{} for _ in range(numprocs)]

    def post_send(self, send: PostedSend) -> list[PostedRecv]:
        """Queue ``send``; return the destination's unmatched receives it matches."""
        queue = self._sends[send.dst].get(send.src)
        if queue is None:
            queue = self._sends[send.dst][send.src] = deque()
        queue.append(send)
        buckets = self._recvs[send.dst]
        if not buckets:
            return []
        c, src, tag = send.context, send.src, send.tag
        found = []
        for key in ((c, src, tag), (c, src, ANY_TAG), (c, ANY_SOURCE, tag),
                    (c, ANY_SOURCE, ANY_TAG)):
            bucket = buckets.get(key)
            if bucket:
                found.extend(bucket.values())
        return found

    def post_recv(self, recv: PostedRecv) -> bool:
        """Queue ``recv``; return whether a posted send matches it already."""
        key = (recv.context, recv.src, recv.tag)
        bucket = self._recvs[recv.rank].get(key)
        if bucket is None:
            bucket = self._recvs[recv.rank][key] = {}
        bucket[recv.seq] = recv
        return bool(self.candidates(recv))

    def candidates(self, recv: PostedRecv) -> list[PostedSend]:
        """The sends ``recv`` may take: the first matching one from each source."""
        by_source = self._sends[recv.rank]
        if recv.src != ANY_SOURCE:
            first = _first_match(by_source.get(recv.src), recv)
            return [first] if first is not None else []
        found = []
        for queue in by_source.values():
            first = _first_match(queue, recv)
            if first is not None:
                found.append(first)
        return found

    def match(self, send: PostedSend, recv: PostedRecv) -> None:
        """Take the pair out of the queues."""
        queue = self._sends[send.dst][send.src]
        if queue[0] is send:
            queue.popleft()
        else:
            queue.remove(send)
        if not queue:
            del self._sends[send.dst][send.src]
        buckets = self._recvs[recv.rank]
        key = (recv.context, recv.src, recv.tag)
        bucket = buckets[key]
        del bucket[recv.seq]
        if not bucket:
            del buckets[key]

    def unmatched_sends(self) -> list[PostedSend]:
        """Every send no receive has taken, in posting order."""
        return sorted((s for by_source in self._sends for queue in by_source.values()
                       for s in queue), key=_posting_order)

    def unmatched_receives(self, rank: int) -> list[PostedRecv]:
        """``rank``'s unmatched receives in posting order."""
        return sorted((r for bucket in self._recvs[rank].values() for r in bucket.values()),
                      key=_posting_order)


def _posting_order(record: PostedSend | PostedRecv) -> int:
    return record.seq


def _first_match(queue, recv: PostedRecv) -> PostedSend | None:
    if queue:
        for send in queue:
            if matches(recv, send):
                return send
    return None
