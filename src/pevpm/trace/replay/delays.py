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

import numpy as np

from pevpm.trace.events import Collective, Posted, Recv, Send, SendDone, Trace
from pevpm.trace.table import COLLECTIVE, IRECV, ISEND, POSTED, RECV, SEND, SEND_DONE


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


# ----------------------------------------------------------------- on arrays


def occurrences(*keys: np.ndarray) -> np.ndarray:
    """For each row, how many earlier rows have the same keys (rows in order).

    >>> occurrences(np.array([3, 1, 3, 3, 1])).tolist()
    [0, 0, 1, 2, 1]
    """
    n = len(keys[0])
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.lexsort((np.arange(n),) + tuple(reversed(keys)))
    new = np.ones(n, dtype=bool)
    new[1:] = np.any([k[order][1:] != k[order][:-1] for k in keys], axis=0)
    firsts = np.flatnonzero(new)
    group_start = firsts[np.cumsum(new) - 1]
    out = np.empty(n, dtype=np.int64)
    out[order] = np.arange(n) - group_start
    return out


def pair_ids(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Numbers for the pairs ``(a[i], b[i])`` of numbers >= 0 (equal pairs, equal numbers;
    in the pairs' order).

    >>> pair_ids(np.array([2, 0, 2]), np.array([7, 7, 7])).tolist()
    [1, 0, 1]
    """
    return dense_ids(a * (int(b.max()) + 1) + b if len(a) else a)


def dense_ids(keys: np.ndarray) -> np.ndarray:
    """Per key, its place among the distinct keys in ascending order (``np.unique``'s
    inverse, by one sort: numpy's hashing unique is slower on millions of keys).

    >>> dense_ids(np.array([30, 10, 30, 20])).tolist()
    [2, 0, 2, 1]
    """
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    new = np.ones(len(keys), dtype=np.int64)
    new[1:] = ordered[1:] != ordered[:-1]
    out = np.empty(len(keys), dtype=np.int64)
    out[order] = np.cumsum(new) - 1
    return out


def after_previous(kinds: np.ndarray, first: int, second: int, *keys: np.ndarray) -> np.ndarray:
    """Per row, the row just before it among the rows of its keys (in order), if that
    row is of kind ``first`` and this one of ``second``; else -1.  An ``MPI_Isend``'s
    completion pairs so with the ``MPI_Isend``: a request handle is the call's
    until its completion.

    >>> after_previous(np.array([0, 1, 1, 0, 1]), 0, 1, np.array([5, 5, 5, 6, 6])).tolist()
    [-1, 0, -1, -1, 3]
    """
    n = len(kinds)
    out = np.full(n, -1, dtype=np.int64)
    if n < 2:
        return out
    order = np.lexsort((np.arange(n),) + tuple(reversed(keys)))
    same = np.all([k[order][1:] == k[order][:-1] for k in keys], axis=0)
    pair = same & (kinds[order][:-1] == first) & (kinds[order][1:] == second)
    out[order[1:][pair]] = order[:-1][pair]
    return out


def ready_array(table, links=None) -> np.ndarray:
    """:func:`ready_times` of a :class:`~pevpm.trace.table.CallTable`, in
    numpy: per call, when the peers it waits for were there (NaN: it waited for
    nobody).  ``links``: :func:`request_links` of the table, if made already."""
    ready = np.full(table.calls, np.nan)
    call = table.event_call
    rank = table.call_rank[call]
    kind, start = table.kind, table.start[call]
    isend_done, posted_of = links if links is not None else request_links(table)
    # sends in each rank's order; the call completing each (-1: none)
    sends = np.flatnonzero((kind == SEND) | (kind == ISEND))
    done = np.where(kind[sends] == SEND, call[sends], -1)
    completing = np.full(len(kind), -1, dtype=np.int64)     # per Isend: its completion's call
    has_done = isend_done >= 0
    completing[has_done] = call[isend_done[has_done]]
    done = np.where(kind[sends] == ISEND, completing[sends], done)
    # receives in posting order: a blocking one where it is, an Irecv at its posting
    posting = np.sort(np.concatenate([np.flatnonzero(kind == RECV),
                                      np.flatnonzero(posted_of >= 0)]))
    completion = np.where(kind[posting] == RECV, posting, -1)
    irecv = kind[posting] == POSTED
    completion[irecv] = posted_of[posting[irecv]]
    # the k-th send and the k-th receive of one (source, destination, tag) match
    s_key = (rank[sends], table.peer[sends], table.tag[sends])
    r_key = (table.peer[completion], rank[posting], table.tag[completion])
    s_occ, r_occ = occurrences(*s_key), occurrences(*r_key)
    both = [np.concatenate(pair) for pair in zip(s_key, r_key)]
    side = np.concatenate([np.zeros(len(sends), np.int64), np.ones(len(posting), np.int64)])
    row = np.concatenate([np.arange(len(sends)), np.arange(len(posting))])
    occ = np.concatenate([s_occ, r_occ])
    order = np.lexsort((side, occ, both[2], both[1], both[0]))
    a, b = order[:-1], order[1:]
    match = (side[a] == 0) & (side[b] == 1) & np.all([k[a] == k[b] for k in both], axis=0) \
        & (occ[a] == occ[b])
    s_row, r_row = row[a[match]], row[b[match]]
    sized = table.size[sends[s_row]] == table.size[completion[r_row]]
    s_row, r_row = s_row[sized], r_row[sized]
    np.fmax.at(ready, call[completion[r_row]], start[sends[s_row]])
    held = done[s_row] >= 0
    np.fmax.at(ready, done[s_row][held], start[posting[r_row]][held])
    rows = np.flatnonzero(kind == COLLECTIVE)
    collective_ready(table, rows, call[rows], rank[rows], start[rows], ready)
    return ready


def request_links(table) -> tuple[np.ndarray, np.ndarray]:
    """Per event: an ``MPI_Isend``'s completing event (-1: none), a posted
    receive's completing event (-1: never completed), each the next event of
    its rank and request when it is of the other kind."""
    rank = table.call_rank[table.event_call]
    kind = table.kind
    out = []
    for first, second in ((ISEND, SEND_DONE), (POSTED, IRECV)):
        rows = np.flatnonzero((kind == first) | (kind == second))
        before = after_previous(kind[rows], first, second, rank[rows], table.request[rows])
        link = np.full(len(kind), -1, dtype=np.int64)
        paired = before >= 0
        link[rows[before[paired]]] = rows[paired]
        out.append(link)
    return out[0], out[1]


def alternating(kinds: np.ndarray, first: int, second: int, *keys: np.ndarray) -> bool:
    """Whether the rows of each keys' group (in order) go ``first``, ``second``,
    ``first``... (a request posted, completed, posted again...).

    >>> alternating(np.array([3, 5, 3, 3]), 3, 5, np.array([1, 1, 1, 2]))
    True
    >>> alternating(np.array([3, 3, 5]), 3, 5, np.array([1, 1, 1]))
    False
    """
    if not len(kinds):
        return True
    position = occurrences(*keys)
    return bool(np.all(kinds == np.where(position % 2 == 0, first, second)))


def collective_ready(table, rows, call, rank, start, ready) -> None:
    """:func:`_collective_ready` on arrays: the k-th collective of each rank on
    one set of members is one instance, whose members' entries are its ready
    times.  ``rows``: the table's collective records, and of each its call, rank
    and call's start; ``ready``: per call (written)."""
    groups: dict[tuple, int] = {}
    comm_group = {comm: groups.setdefault(members, len(groups))
                  for comm, members in table.members.items()}
    comms = table.comm[rows].tolist()
    group = np.array([comm_group[c] for c in comms], dtype=np.int64)
    size = np.array([len(table.members[c]) for c in comms], dtype=np.int64)
    keep = size > 1
    rows, group, size = rows[keep], group[keep], size[keep]
    call, rank, start = call[keep], rank[keep], start[keep]
    if not len(rows):
        return
    instance = pair_ids(group, occurrences(group, rank))
    counts = np.bincount(instance)
    complete = counts[instance] == size     # else some member's call is missing
    latest = np.full(len(counts), -np.inf)
    np.maximum.at(latest, instance[complete], start[complete])
    ops = np.array([table.operations.get(t, "") for t in table.tag[rows].tolist()])
    members = [table.members[c] for c in table.comm[rows].tolist()]
    root = np.array([m[r] if r < len(m) else -1 for m, r in zip(members, table.root[rows])],
                    dtype=np.int64)
    everyone = complete & (np.isin(ops, ALL_WAIT)
                           | (np.isin(ops, ROOT_WAITS) & (rank == root)))
    ready[call[everyone]] = latest[instance[everyone]]
    some = complete & ((np.isin(ops, WAIT_FOR_ROOT) & (root >= 0) & (rank != root))
                       | np.isin(ops, ("SCAN", "EXSCAN")))
    if not some.any():
        return
    entered = {(i, r): t for i, r, t in zip(instance[complete].tolist(),
                                            rank[complete].tolist(),
                                            start[complete].tolist())}
    for j in np.flatnonzero(some).tolist():
        r, m, i = int(rank[j]), members[j], int(instance[j])
        waits_for = (int(root[j]),) if ops[j] in WAIT_FOR_ROOT else m[:m.index(r) + 1]
        ready[call[j]] = max(entered[(i, w)] for w in waits_for)
