"""When a traced call could have ended: the data it waited for was there.

A blocking receive (or the Wait/Test completing a non-blocking one, or a
``Sendrecv``) cannot end before its message was sent; a send the library
holds until the receiver is there, not before the receive was posted; a
collective not before the members it needs entered it.  :func:`ready_times`
gives, for every such call of every rank, that moment on the trace's clock:
the latest start of the matching sends' calls (blocking or ``Isend``), the
latest posting of the matching receives, the latest entry of the members.
Any other call waits for nobody: it is ready when it starts.  The time a
call took after it was ready, beyond what that kind of call takes on a
quiet host (:func:`usual_times`: the fastest call of its kind, over all
ranks), is time the rank was not running or not looking -- a process descheduled on a busy host, a
program polling with sleeps -- which replay keeps as a delay
(:mod:`pevpm.trace.replay.replay`).  A constant offset between two ranks' clocks
cancels -- the fastest call of a kind has it too -- while it is smaller
than a message's time (replay counts no call as taking less than 0 s
after it was ready).

Sends are matched to receives per (source, destination, tag) in order: the
receives in the order they were posted (a blocking receive when called, a
non-blocking one at its ``MPI_Irecv``), as MPI's non-overtaking rule has it;
a pair whose sizes disagree gives no ready time.  Collectives are matched
by their order among the collectives of the same members.

>>> from pevpm.trace.events import Call, Recv, Send, Trace
>>> t = Trace(((Call("MPI_Init", 0, 1), Call("MPI_Send", 3, 3.1, (Send(1, 0, 8),))),
...            (Call("MPI_Init", 0, 1), Call("MPI_Recv", 2, 4, (Recv(0, 0, 8),)))))
>>> ready_times(t)
[{1: 2}, {1: 3}]
"""

from __future__ import annotations

import math
from collections import defaultdict, deque
from collections.abc import Hashable, Iterable

from pevpm.trace.events import Collective, Posted, Recv, Send, SendDone, Trace


def ready_times(trace: Trace) -> list[dict[int, float]]:
    """Per rank, call index -> when the peers the call waits for were there: the
    matching sends' starts for a call completing receives, the matching receives'
    posting for a call completing sends (a send the library had to hold until then),
    the members' entries for a collective.  Calls not listed waited for nobody."""
    sends: dict[tuple, deque] = defaultdict(deque)
    read = [_RankEvents(rank, calls) for rank, calls in enumerate(trace.ranks)]
    for r in read:
        for key, start, size, index, request in r.sends:
            done = index if request is None else r.completing.get((index, request))
            sends[key].append((start, size, done))
    ready: list[dict[int, float]] = [{} for _ in trace.ranks]

    def wait_until(rank: int, index: int, moment: float) -> None:
        ready[rank][index] = max(ready[rank].get(index, moment), moment)

    for rank, r in enumerate(read):
        for index, posted, recv in r.receives_in_posting_order():
            queue = sends.get((recv.source, rank, recv.tag))
            if not queue:
                continue
            start, size, done = queue.popleft()
            if size == recv.size:
                wait_until(rank, index, start)
                if done is not None:
                    wait_until(recv.source, done, posted)
    _collective_ready(read, ready)
    return ready


class _RankEvents:
    """One rank's events in one pass (a long trace has millions): its sends, the
    call completing each ``Isend``, its receives as posted, its collectives."""

    def __init__(self, rank: int, calls):
        self.rank = rank
        # (key (rank, dest, tag), call's start, size, call index, request)
        self.sends: list[tuple] = []
        self.completing: dict[tuple[int, int], int] = {}   # (Isend's index, request) -> index
        # in posting order: a blocking receive (index, start, Recv), or a Posted's
        # place [request, start] filled with its completion afterwards
        self.posted: list = []
        self.completions: dict[int, deque] = defaultdict(deque)  # request -> (index, Recv)
        self.collectives: list[tuple[int, float, Collective]] = []
        open_sends: dict[int, int] = {}
        for index, call in enumerate(calls):
            for e in call.events:
                kind = type(e)
                if kind is Send:
                    self.sends.append(((rank, e.dest, e.tag), call.start, e.size, index,
                                       e.request))
                    if e.request is not None:
                        open_sends[e.request] = index
                elif kind is SendDone:
                    if e.request in open_sends:
                        self.completing[(open_sends.pop(e.request), e.request)] = index
                elif kind is Recv:
                    if e.request is None:
                        self.posted.append((index, call.start, e))
                    else:
                        self.completions[e.request].append((index, e))
                elif kind is Posted:
                    self.posted.append([e.request, call.start])
                elif kind is Collective:
                    self.collectives.append((index, call.start, e))

    def receives_in_posting_order(self) -> list[tuple[int, float, Recv]]:
        """(index of the completing call, when it was posted, the receive), in the
        order the receives were posted (a posting never completed is left out)."""
        out = []
        for item in self.posted:
            if type(item) is tuple:
                out.append(item)
            elif self.completions.get(item[0]):
                done, recv = self.completions[item[0]].popleft()
                out.append((done, item[1], recv))
        return out


#: Collectives no member leaves before every member entered.
ALL_WAIT = ("BARRIER", "CREATE_HANDLE", "ALLREDUCE", "ALLGATHER", "ALLGATHERV", "ALLTOALL",
            "ALLTOALLV", "REDUCE_SCATTER_BLOCK")
#: Collectives whose root waits for every member (the others may leave first).
ROOT_WAITS = ("GATHER", "GATHERV", "REDUCE")
#: Collectives whose other members wait for the root (the root may leave first).
WAIT_FOR_ROOT = ("BCAST", "SCATTER", "SCATTERV")


def _collective_ready(read: list[_RankEvents], ready: list[dict[int, float]]) -> None:
    """Each member's ready time of every collective all its members made: the
    latest entry of the members it must wait for (a scan: those before it)."""
    instances: dict[tuple, list] = defaultdict(list)   # (members, k) -> [(rank, index, start)]
    for r in read:
        seen: dict[tuple, int] = defaultdict(int)
        for index, start, e in r.collectives:
            if len(e.members) > 1:
                instances[(e.members, seen[e.members])].append((r.rank, index, start, e))
                seen[e.members] += 1
    for (members, _), calls in instances.items():
        if len(calls) != len(members):
            continue        # some member's call is missing: no ready time
        entered = {rank: start for rank, _, start, _ in calls}
        for rank, index, _, e in calls:
            waits_for = _waits_for(e, rank)
            if waits_for:
                ready[rank][index] = max(entered[m] for m in waits_for)


def _waits_for(c: Collective, rank: int) -> tuple[int, ...]:
    """The members whose entry ``rank`` needs before it can leave ``c``."""
    if c.op in ALL_WAIT or (c.op in ROOT_WAITS and rank == c.root):
        return c.members
    if c.op in WAIT_FOR_ROOT and c.root is not None and rank != c.root:
        return (c.root,)
    if c.op in ("SCAN", "EXSCAN"):
        return c.members[:c.members.index(rank) + 1]
    return ()


def usual_times(samples: Iterable[tuple[Hashable, float]]) -> dict[Hashable, float]:
    """What each kind of call takes on a quiet host, from ``(kind, seconds)`` pairs:
    its fastest call (on a busy host most calls are delayed, even the median).

    >>> usual_times([("recv", 2.0), ("recv", 9.0), ("barrier", 4.0)])
    {'recv': 2.0, 'barrier': 4.0}
    """
    usual: dict[Hashable, float] = {}
    for kind, seconds in samples:
        usual[kind] = min(seconds, usual.get(kind, seconds))
    return usual


def size_class(size: int) -> int:
    """Sizes within a factor of sqrt(2) share a class (their transfers take alike).

    >>> [size_class(s) for s in (0, 1, 1000, 1400, 65536)]
    [0, 2, 20, 21, 32]
    """
    return round(2 * math.log2(size + 1))
