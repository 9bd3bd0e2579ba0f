"""A trace replayed in arrays, from the OTF2 reader's columns to the core's instructions.

:mod:`pevpm.trace.replay.replay` turns every call into objects (a ``Call``,
model statements, a model, compiled instructions).  Here a trace read as a
:class:`~pevpm.trace.table.CallTable` becomes each rank's
:data:`~pevpm.vm.kernel.arrays.INSTRUCTION` array in numpy, with the same
statements in the same order and the same numbers: the gap before each
call that moves data (computation, then what the rank slept), the call,
the delay after it (:func:`pevpm.trace.replay.delays.ready_array`), a
sleeping lead for a rank that left ``MPI_Init`` late and the gap before
``MPI_Finalize``; :mod:`pevpm.vm.kernel.arrays` runs them.  The replay is
the reference's (``tests/trace/test_replay_fast.py`` compares the two).
The arrays are made in a few typed passes over the records and calls
(:mod:`pevpm.trace.replay.fastconvert`, compiled); :func:`convert_reference`
makes the same arrays in numpy, where that module is not built and in the
tests that compare the two bit for bit.

:func:`check` names (its ``why``) what this path does not convert, and the replay
goes the reference way with a ``note:`` saying so:

* polls (``MPI_Test``, ``MPI_Iprobe``...: waiting spread over calls);
* a collective on a communicator of some ranks (messages among them,
  :mod:`pevpm.trace.replay.subcomm`) or an operation replay does not know;
* a call mixing kinds of MPI records other than a ``Sendrecv``'s send and
  receive (a Wait's completions of sends and receives mix freely);
* a receive request posted again before it completed;
* a rank with no calls, or with 2**31 or more.

    checked = check(read_table(path))           # pevpm.trace.otf2.read
    if checked.why is None:                     # None: convert here
        converted = convert(checked, speed=1.0, delays=True)
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

import numpy as np

from pevpm.trace.events import per_peer_size
from pevpm.trace.replay.delays import (
    alternating,
    collective_ready,
    dense_ids,
    occurrences,
    pair_ids,
    ready_array,
    request_links,
)
from pevpm.trace.table import COLLECTIVE, IRECV, ISEND, POSTED, RECV, SEND, SEND_DONE, CallTable
from pevpm.vm.kernel import program as vm
from pevpm.vm.kernel.arrays import INSTRUCTION

try:
    from pevpm.trace.replay import fastconvert
except ImportError:     # not built: the numpy converter gives the same arrays
    fastconvert = None

#: Calls that poll: waiting spread over several calls.
POLLS = ("MPI_Test", "MPI_Testany", "MPI_Testsome", "MPI_Testall", "MPI_Iprobe", "MPI_Probe",
         "MPI_Improbe", "MPI_Mprobe")
BLOCKING_SENDS = ("MPI_Send", "MPI_Ssend", "MPI_Bsend", "MPI_Rsend")
#: The virtual machine's collective for each OTF2 collective operation.
COLLECTIVE_OPS = {
    "BARRIER": "MPI_Barrier", "CREATE_HANDLE": "MPI_Barrier", "BCAST": "MPI_Bcast",
    "REDUCE": "MPI_Reduce", "ALLREDUCE": "MPI_Allreduce", "SCAN": "MPI_Scan",
    "EXSCAN": "MPI_Scan", "REDUCE_SCATTER_BLOCK": "MPI_Allreduce", "GATHER": "MPI_Gather",
    "GATHERV": "MPI_Gatherv", "SCATTER": "MPI_Scatter", "SCATTERV": "MPI_Scatterv",
    "ALLGATHER": "MPI_Allgather", "ALLGATHERV": "MPI_Allgather", "ALLTOALL": "MPI_Alltoall",
    "ALLTOALLV": "MPI_Alltoall",
}
# A call's shape: what its MPI records make of it.
(EMPTY, COLL, BSEND, BRECV, EXCHANGE, NBSEND, NBRECV, WAITS) = range(8)


class Converted(NamedTuple):
    """Every rank's instructions (its :data:`~pevpm.vm.kernel.arrays.INSTRUCTION`
    fields, each an array), the Waits' requests, the call names they use, and per rank what the trace says it did (seconds): from its start to
    its end, of that computing (the gaps) and delayed inside calls."""

    codes: list[dict[str, np.ndarray]]
    requests: np.ndarray
    names: list[str]
    elapsed: np.ndarray
    computed: np.ndarray
    delayed: np.ndarray
    traced: float


class _Calls:
    """The per-call facts of a table the conversion and its checks read."""

    def __init__(self, table: CallTable):
        self.table = table
        self.event_call = table.event_call
        self.rank = table.call_rank
        counts = np.bincount(self.event_call * 7 + table.kind,
                             minlength=table.calls * 7).reshape(table.calls, 7)
        total = counts.sum(axis=1)
        single = total == 1
        shape = np.full(table.calls, -1, dtype=np.int64)
        shape[total == 0] = EMPTY
        for kind, name in ((COLLECTIVE, COLL), (SEND, BSEND), (RECV, BRECV), (ISEND, NBSEND),
                           (POSTED, NBRECV)):
            shape[single & (counts[:, kind] == 1)] = name
        shape[(total == 2) & (counts[:, SEND] == 1) & (counts[:, RECV] == 1)] = EXCHANGE
        shape[(total > 0) & (counts[:, SEND_DONE] + counts[:, IRECV] == total)] = WAITS
        self.shape = shape
        self.first = table.event_starts[:-1]

    def named(self, *names: str) -> np.ndarray:
        """Per call, whether it is one of ``names``."""
        return np.isin(self.table.region, [k for k, n in enumerate(self.table.names)
                                           if n in names])

    def name(self, call: int) -> str:
        return self.table.names[self.table.region[call]]


class Checked(NamedTuple):
    """A table checked once for :func:`convert` (:func:`check`): ``why`` it goes
    the reference way (None: in arrays), why :func:`convert` makes its arrays in
    numpy (``slower``; None: in the compiled passes), the table with the columns
    the compiled passes read contiguous, and the request links the checks
    found (``fastconvert.links``; None where the passes do not run), which
    :func:`convert` reuses instead of pairing the requests again."""

    table: CallTable
    why: str | None
    slower: str | None
    links: tuple | None


def check(table: CallTable) -> Checked:
    """``table`` checked for a replay in arrays (each check made once, its
    results kept for :func:`convert`).

    >>> from pevpm.trace.events import Call, Trace
    >>> checked = check(table_of(Trace(((Call("MPI_Init", 0, 1),), (Call("MPI_Init", 0, 1),)))))
    >>> checked.why, (checked.links is None) == (checked.slower is not None)
    (None, True)
    """
    for rank in range(table.numprocs):
        if table.rank_starts[rank] == table.rank_starts[rank + 1]:
            return Checked(table, f"rank {rank} made no MPI calls", None, None)
        if table.rank_starts[rank + 1] - table.rank_starts[rank] >= 2**31:
            # an instruction's call index is 32 bits (INSTRUCTION's "call")
            return Checked(table, f"rank {rank} made 2**31 MPI calls or more", None, None)
    polls = np.isin(table.region, [k for k, n in enumerate(table.names) if n in POLLS])
    if polls.any():
        why = f"it polls ({table.names[table.region[np.argmax(polls)]]})"
        return Checked(table, why, None, None)
    slower, links = numpy_conversion(table), None
    if slower is None:
        table = _contiguous(table)
        links = fastconvert.links(table)
        shape, alternates = fastconvert.shapes(table), links[4]
    else:
        shape, alternates = _Calls(table).shape, None
    return Checked(table, _unsupported(table, shape, alternates), slower, links)


def _unsupported(table: CallTable, shape: np.ndarray, alternates: bool | None) -> str | None:
    """What of ``table`` (each call's ``shape``; whether its receive requests
    alternate posted, completed, where known) the arrays do not take, or None."""
    odd = np.flatnonzero(shape < 0)
    if len(odd):
        return f"a {table.names[table.region[odd[0]]]} holds several kinds of MPI records"
    for comm in np.unique(table.comm[table.kind == COLLECTIVE]).tolist():
        members = table.members[comm]
        if 1 < len(members) and members != tuple(range(table.numprocs)):
            return "a collective on a communicator of some ranks"
    for op in np.unique(table.tag[table.kind == COLLECTIVE]).tolist():
        if table.operations.get(op) not in COLLECTIVE_OPS:
            return f"collective operation {table.operations.get(op, op)}"
    if alternates is None:
        rows = np.flatnonzero((table.kind == POSTED) | (table.kind == IRECV))
        alternates = alternating(table.kind[rows], POSTED, IRECV,
                                 table.call_rank[table.event_call[rows]], table.request[rows])
    if not alternates:
        return "a receive request posted again before it completed"
    return None


def convert(table: CallTable | Checked, speed: float = 1.0, delays: bool = True,
            as_traced: bool = False) -> Converted:
    """Every rank's instructions (``delays``: with the traced delays inside calls;
    ``as_traced``: gaps sleep, the trace's ranks shared their cores already), in
    the compiled passes of :mod:`pevpm.trace.replay.fastconvert` where built,
    else by :func:`convert_reference` (the same arrays, in numpy).  Given the
    table's :func:`check` (its ``why`` None), its findings are reused."""
    checked = table if isinstance(table, Checked) else Checked(table, None,
                                                                numpy_conversion(table), None)
    if checked.slower is not None:
        return convert_reference(checked.table, speed, delays, as_traced)
    return _convert_compiled(checked, speed, delays, as_traced)


def numpy_conversion(table: CallTable) -> str | None:
    """Why :func:`convert` makes ``table``'s arrays in numpy (slower, the same
    arrays) rather than in the compiled passes, or None.  The compiled passes
    take a table whose every rank has calls, every record a kind of
    :data:`~pevpm.trace.table.KINDS` and a peer among the ranks, and whose
    tags fit their 32-bit keys."""
    def within(column: np.ndarray, top: int) -> bool:
        return not len(column) or (column.min() >= 0 and column.max() < top)

    if fastconvert is None:
        return "the compiled conversion module (pevpm.trace.replay.fastconvert) is not built"
    if table.numprocs >= 2**31 or not np.all(np.diff(table.rank_starts) > 0):
        return "a rank made no MPI calls"
    if not within(table.kind, COLLECTIVE + 1) or not within(table.peer, table.numprocs):
        return "a record's kind or peer is outside the compiled passes' range"
    if not within(table.tag, 2**32):
        return "a tag does not fit 32 bits"
    return None


def _convert_compiled(checked: Checked, speed: float, delays: bool,
                      as_traced: bool) -> Converted:
    if checked.links is None:
        t = _contiguous(checked.table)
        isend_done, posted_of, live, event_call, _ = fastconvert.links(t)
    else:
        t = checked.table
        isend_done, posted_of, live, event_call, _ = checked.links
    del checked
    rows = np.flatnonzero(t.kind == COLLECTIVE)
    coll_call = event_call[rows]
    coll_rank = np.searchsorted(t.rank_starts, coll_call, side="right") - 1
    ready = np.full(t.calls, np.nan)
    if delays:
        fastconvert.match(t, isend_done, posted_of, event_call, ready)
        collective_ready(t, rows, coll_call, coll_rank, t.start[coll_call], ready)
    del isend_done, event_call
    coll = _collective_facts(t, rows, coll_rank)
    flags = [np.array([n in names for n in t.names] or [False], dtype=np.int8)
             for names in (("MPI_Init", "MPI_Init_thread"), ("MPI_Finalize",))]
    moving, ranks = fastconvert.moving_calls(t, *flags, coll["members"], posted_of, live,
                                             ready, delays)
    del ready
    if delays:
        size_class = np.rint(2 * np.log2(moving["moved"] + 1.0)).astype(np.int64)
        moving["delay"] = fastconvert.delays_of(moving["call"], t.region, size_class,
                                                moving["sources"], moving["dests"],
                                                moving["after"])
    else:
        moving["delay"] = np.zeros(len(moving["call"]))
    ranks["lead"] = ranks["begin"] - ranks["begin"].min()
    names = _names_in_order(t, moving, coll)
    fields, offsets, requests, computed, delayed = fastconvert.instructions(
        t, moving, ranks, posted_of, live, names, coll, speed, as_traced)
    begin, finish = ranks["begin"], ranks["finish"]
    return Converted([{name: column[offsets[r]:offsets[r + 1]]
                       for name, column in fields.items()} for r in range(t.numprocs)],
                     requests, names["order"], finish - begin, computed, delayed,
                     float(finish.max() - begin.min()))


def _contiguous(table: CallTable) -> CallTable:
    """``table`` with the columns the compiled passes read each in one block, of the
    types they read (copied only where not so already)."""
    return replace(table, **{name: np.ascontiguousarray(getattr(table, name), dtype=dtype)
                             for name, dtype in (
        ("rank_starts", np.int64), ("region", np.int64), ("start", np.float64),
        ("end", np.float64), ("slept", np.float64), ("event_starts", np.int64),
        ("kind", np.int64), ("peer", np.int64), ("tag", np.int64), ("size", np.int64),
        ("request", np.int64))})


def _collective_facts(t: CallTable, rows: np.ndarray, rank: np.ndarray) -> dict:
    """Per collective record (``rows``, on ``rank``): its communicator's size, its
    virtual machine call, bytes per peer and world root (0: none)."""
    members, calls, sizes, roots = [], [], [], []
    for op, comm, r, sent, received, root in zip(
            [t.operations[op] for op in t.tag[rows].tolist()], t.comm[rows].tolist(),
            rank.tolist(), t.size[rows].tolist(), t.request[rows].tolist(),
            t.root[rows].tolist()):
        ranks = t.members[comm]
        world_root = ranks[root] if root < len(ranks) else None
        size = per_peer_size(op, sent, received, len(ranks), world_root == r)
        sizes.append(size * len(ranks) if op == "REDUCE_SCATTER_BLOCK" else size)
        roots.append(0 if world_root is None else world_root)
        members.append(len(ranks))
        calls.append(COLLECTIVE_OPS[op])
    return {"members": np.array(members, dtype=np.int64), "call": calls,
            "size": np.array(sizes, dtype=np.int64), "root": np.array(roots, dtype=np.int64)}


def _names_in_order(t: CallTable, moving: dict, coll: dict) -> dict:
    """The call names' numbers as :func:`convert_reference` gives them (its order
    of first use), the per-name number of a blocking send and whether it is an
    ``MPI_Issend``, and per collective record its call's number."""
    ids: dict[str, int] = {}
    send = [ids.setdefault(n if n in BLOCKING_SENDS else "MPI_Send", len(ids)) for n in t.names]
    for name in ("MPI_Recv", "MPI_Issend", "MPI_Isend", "MPI_Irecv"):
        ids.setdefault(name, len(ids))
    for k in moving["collective"][moving["shape"] == COLL].tolist():
        ids.setdefault(coll["call"][k], len(ids))
    for name in ("MPI_Sendrecv", "MPI_Wait", "MPI_Waitall"):
        ids.setdefault(name, len(ids))
    coll["name"] = np.array([ids.get(name, 0) for name in coll["call"]], dtype=np.int32)
    return {**ids, "order": list(ids), "send": np.array(send or [0], dtype=np.int32),
            "issend": np.array([n == "MPI_Issend" for n in t.names] or [False], dtype=np.int8)}


def convert_reference(table: CallTable, speed: float = 1.0, delays: bool = True,
                      as_traced: bool = False) -> Converted:
    """:func:`convert` in numpy (the reference for the compiled passes)."""
    c = _Calls(table)
    t = table
    isend_done, posted_of = request_links(t)
    live_done = np.zeros(len(t.kind), dtype=bool)     # a completion of a live request
    live_done[isend_done[isend_done >= 0]] = True
    live_done[posted_of[posted_of >= 0]] = True
    finished = np.zeros(t.calls, dtype=np.int64)
    np.add.at(finished, c.event_call[live_done], 1)
    first = c.first
    # which calls are replayed: the first MPI_Finalize ends a rank's program
    is_init = c.named("MPI_Init", "MPI_Init_thread")
    is_final = c.named("MPI_Finalize")
    index = np.arange(t.calls)
    starts, stops = t.rank_starts[:-1], t.rank_starts[1:]
    final_at = _first_per_rank(np.flatnonzero(is_final), c.rank, t.numprocs)
    cut = np.where(final_at >= 0, final_at, stops)
    before_end = index < cut[c.rank]
    makes = np.zeros(t.calls, dtype=bool)
    makes[np.isin(c.shape, (BSEND, BRECV, EXCHANGE, NBSEND))] = True
    coll = c.shape == COLL
    makes[coll] = np.array([len(t.members[m]) > 1 for m in t.comm[first[coll]].tolist()],
                           dtype=bool)
    nbrecv = c.shape == NBRECV
    makes[nbrecv] = posted_of[first[nbrecv]] >= 0
    makes[c.shape == WAITS] = finished[c.shape == WAITS] > 0
    makes &= before_end & ~is_init
    eligible = before_end & ~is_init
    # when each rank starts and ends
    last_init = _last_per_rank(np.flatnonzero(is_init), c.rank, t.numprocs)
    begin = np.where(last_init >= 0, t.end[np.maximum(last_init, 0)], t.start[starts])
    finish = np.where(final_at >= 0, t.start[np.maximum(final_at, 0)], t.end[stops - 1])
    # the gaps before the calls that move data
    moving = np.flatnonzero(makes)
    mrank = c.rank[moving]
    first_of_rank = np.ones(len(moving), dtype=bool)
    first_of_rank[1:] = mrank[1:] != mrank[:-1]
    later = np.flatnonzero(~first_of_rank)
    previous_end = begin[mrank]
    previous_end[later] = t.end[moving[later - 1]]
    slept = np.where(eligible, t.slept, 0.0)
    since = starts[mrank]
    since[later] = moving[later - 1] + 1
    own_slept = _segment_sums(slept, since, moving + 1)
    computing = (t.start[moving] - previous_end) - own_slept
    # the delays after them
    if delays:
        ready = ready_array(t, (isend_done, posted_of))[moving]
        begun = t.start[moving]
        after = np.maximum(0.0, t.end[moving] - np.where(ready > begun, ready, begun))
        kind = _kinds(c, moving)
        usual = np.full(kind.max() + 1 if len(kind) else 0, np.inf)
        np.minimum.at(usual, kind, after)
        delay = after - usual[kind]
    else:
        delay = np.zeros(len(moving))
    # the end of each rank
    last_moving = _last_per_rank(moving, c.rank, t.numprocs)
    tail_from = np.where(last_moving >= 0, t.end[np.maximum(last_moving, 0)], begin)
    tail_slept = (_segment_sums(slept, np.where(last_moving >= 0, last_moving + 1, starts), cut)
                  + np.where(final_at >= 0, t.slept[np.maximum(final_at, 0)], 0.0))
    tail_computing = (finish - tail_from) - tail_slept
    lead = begin - begin.min()
    return _emit(c, moving, computing, own_slept, delay, lead, tail_computing, tail_slept,
                 speed, as_traced, posted_of, live_done, begin, finish)


def _segment_sums(values: np.ndarray, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """``values[starts[i]:stops[i]].sum()`` for each i, each added one value after
    another as the reference converter adds them (0 where empty).

    >>> _segment_sums(np.array([1.0, 2.0, 4.0]), np.array([0, 1, 2]), np.array([2, 3, 2])).tolist()
    [3.0, 6.0, 0.0]
    """
    if not len(starts):
        return np.zeros(0)
    padded = np.append(values, 0.0)
    sums = np.add.reduceat(padded, np.stack([starts, stops], axis=1).reshape(-1))[::2]
    for i in np.flatnonzero(stops - starts >= 8).tolist():     # numpy adds these pairwise
        sums[i] = np.cumsum(values[starts[i]:stops[i]])[-1]
    return np.where(stops > starts, sums, 0.0)


def _first_per_rank(rows: np.ndarray, rank: np.ndarray, numprocs: int) -> np.ndarray:
    """Per rank, the first of ``rows`` (ascending call indices) on it, or -1."""
    out = np.full(numprocs, -1, dtype=np.int64)
    ranks = rank[rows]
    out[ranks[::-1]] = rows[::-1]
    return out


def _last_per_rank(rows: np.ndarray, rank: np.ndarray, numprocs: int) -> np.ndarray:
    """Per rank, the last of ``rows`` (ascending call indices) on it, or -1."""
    out = np.full(numprocs, -1, dtype=np.int64)
    out[rank[rows]] = rows
    return out


def _set_ids(call: np.ndarray, value: np.ndarray, calls: int) -> np.ndarray:
    """Per call, a number for the set of ``value`` (numbers >= 0) its rows hold
    (equal sets, equal numbers; no rows: -1)."""
    out = np.full(calls, -1, dtype=np.int64)
    if not len(call):
        return out
    pairs = np.sort(call * (int(value.max()) + 1) + value)
    pairs = pairs[np.concatenate([[True], pairs[1:] != pairs[:-1]])]    # each pair once
    holder, member = np.divmod(pairs, int(value.max()) + 1)
    place = occurrences(holder)
    at = dense_ids(holder)
    holders = holder[place == 0]
    ids = np.zeros(len(holders), dtype=np.int64)
    for k in range(int(place.max()) + 1):       # one column of the sorted sets at a time
        column = np.full(len(holders), -1, dtype=np.int64)
        column[at[place == k]] = member[place == k]
        ids = pair_ids(ids, column + 1)
    out[holders] = ids
    return out


def _kinds(c: _Calls, moving: np.ndarray) -> np.ndarray:
    """Per moving call, its kind's number (:meth:`_RankConverter.kind`: name, the
    peers received from and sent to, the size class of the bytes moved)."""
    t = c.table
    calls = c.event_call
    recv = (t.kind == RECV) | (t.kind == IRECV)
    send = (t.kind == SEND) | (t.kind == ISEND)
    sources = _set_ids(calls[recv], t.peer[recv], t.calls)
    dests = _set_ids(calls[send], t.peer[send], t.calls)
    moved = np.where(recv | send, t.size, 0) + np.where(t.kind == COLLECTIVE,
                                                          t.size + t.request, 0)
    total = np.bincount(calls, weights=moved, minlength=t.calls)
    size_class = np.rint(2 * np.log2(total[moving] + 1.0)).astype(np.int64)
    kind = pair_ids(t.region[moving], size_class)
    kind = pair_ids(kind, sources[moving] + 1)
    return pair_ids(kind, dests[moving] + 1)


def _emit(c, moving, computing, own_slept, delay, lead, tail_computing, tail_slept, speed,
          as_traced, posted_of, live_done, begin, finish) -> Converted:
    """The instruction arrays: per rank its lead, then per moving call its gap's
    computation and sleep, the call's instructions and its delay, then the tail."""
    t = c.table
    shape = c.shape[moving]
    first = c.first[moving]
    exchange_split = np.zeros(len(moving), dtype=bool)
    ex = shape == EXCHANGE
    ex_send, ex_recv = first.copy(), first.copy()      # a Sendrecv's two records
    sent_first = t.kind[first[ex]] == SEND
    ex_send[ex] = np.where(sent_first, first[ex], first[ex] + 1)
    ex_recv[ex] = np.where(sent_first, first[ex] + 1, first[ex])
    exchange_split[ex] = t.tag[ex_send[ex]] != t.tag[ex_recv[ex]]
    slots = np.stack([computing > 0, own_slept > 0, np.ones(len(moving), bool),
                      exchange_split, exchange_split, delay > 0]).astype(np.int64)
    per_call = slots.sum(axis=0)
    mrank = c.rank[moving]
    moving_per_rank = np.bincount(mrank, weights=per_call, minlength=t.numprocs).astype(np.int64)
    lead_n = (lead > 0).astype(np.int64)
    tail_n = (tail_computing > 0).astype(np.int64) + (tail_slept > 0)
    sizes = lead_n + moving_per_rank + tail_n
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    # one plain array per field while filling (a structured array's fields are strided)
    code = {name: np.zeros(int(offsets[-1]), dtype=INSTRUCTION[name])
            for name in INSTRUCTION.names}
    code["request"][:] = -1
    code["call"][:] = -1
    code["op"][:] = vm.SERIAL
    name_ids: dict[str, int] = {}

    def name_id(name: str) -> int:
        return name_ids.setdefault(name, len(name_ids))

    # where each call's first slot goes
    base = offsets[mrank] + lead_n[mrank]
    within = np.cumsum(per_call) - per_call
    rank_first = np.searchsorted(mrank, np.arange(t.numprocs))
    within = within - within[np.minimum(rank_first, len(within) - 1)][mrank] \
        if len(within) else within
    place = base + within
    lead_rows = offsets[:-1][lead > 0]
    code["seconds"][lead_rows] = lead[lead > 0]
    code["flag"][lead_rows] = 1
    at = place.copy()
    computing_rows = at[computing > 0]
    code["seconds"][computing_rows] = computing[computing > 0] / speed
    code["flag"][computing_rows] = 1 if as_traced else 0
    at += slots[0]
    code["seconds"][at[own_slept > 0]] = own_slept[own_slept > 0]
    code["flag"][at[own_slept > 0]] = 1
    at += slots[1]
    call_in_rank = moving - t.rank_starts[mrank]
    requests = _calls_rows(c, moving, shape, first, at, code, call_in_rank, ex_send, ex_recv,
                           exchange_split, posted_of, live_done, name_id)
    at += slots[2] + slots[3] + slots[4]
    delayed = delay > 0
    code["seconds"][at[delayed]] = delay[delayed]
    code["flag"][at[delayed]] = 1
    tail_at = offsets[1:] - tail_n
    has_tail = tail_computing > 0
    code["seconds"][tail_at[has_tail]] = tail_computing[has_tail] / speed
    code["flag"][tail_at[has_tail]] = 1 if as_traced else 0
    slept_at = tail_at + has_tail
    code["seconds"][slept_at[tail_slept > 0]] = tail_slept[tail_slept > 0]
    code["flag"][slept_at[tail_slept > 0]] = 1
    computed = (_rank_sums(np.where(computing > 0, computing, 0.0), mrank, t.numprocs,
                           np.where(own_slept > 0, own_slept, 0.0))
                + np.where(tail_computing > 0, tail_computing, 0.0)
                + np.where(tail_slept > 0, tail_slept, 0.0))
    delayed_sum = _rank_sums(np.where(delayed, delay, 0.0), mrank, t.numprocs)
    return Converted([{name: column[offsets[r]:offsets[r + 1]] for name, column in code.items()}
                      for r in range(t.numprocs)], requests,
                     list(name_ids), finish - begin, computed, delayed_sum,
                     float(finish.max() - begin.min()))


def _rank_sums(values: np.ndarray, rank: np.ndarray, numprocs: int,
               interleaved: np.ndarray | None = None) -> np.ndarray:
    """Per rank, the sum of its ``values`` (and ``interleaved`` after each),
    added one after another as the reference adds them."""
    out = np.zeros(numprocs)
    seq = values if interleaved is None else np.stack([values, interleaved], 1).reshape(-1)
    ranks = rank if interleaved is None else np.repeat(rank, 2)
    bounds = np.searchsorted(ranks, np.arange(numprocs + 1))
    for r in range(numprocs):
        if bounds[r + 1] > bounds[r]:
            out[r] = np.cumsum(seq[bounds[r]:bounds[r + 1]])[-1]
    return out


def _calls_rows(c, moving, shape, first, at, code, call_in_rank, ex_send, ex_recv,
                exchange_split, posted_of, live_done, name_id) -> np.ndarray:
    """Write each moving call's instructions at ``at`` (one, or three for a
    Sendrecv whose tags differ); the Waits' requests."""
    t = c.table
    code["call"][at] = call_in_rank

    def put(mask, **fields) -> None:
        where = at[mask]
        for field, values in fields.items():
            code[field][where] = values

    # blocking sends keep their call's name
    bsend = shape == BSEND
    e = first[bsend]
    own_name = np.array([name_id(n if n in BLOCKING_SENDS else "MPI_Send") for n in t.names])
    put(bsend, op=vm.SEND, name=own_name[t.region[moving[bsend]]], flag=1, size=t.size[e],
        peer=t.peer[e], tag=t.tag[e])
    brecv = shape == BRECV
    e = first[brecv]
    put(brecv, op=vm.RECV, name=name_id("MPI_Recv"), flag=1, size=t.size[e], peer=t.peer[e],
        tag=t.tag[e])
    nbsend = shape == NBSEND
    issend = c.named("MPI_Issend")[moving[nbsend]]
    e = first[nbsend]
    put(nbsend, op=vm.SEND, name=np.where(issend, name_id("MPI_Issend"), name_id("MPI_Isend")),
        size=t.size[e], peer=t.peer[e], tag=t.tag[e], request=t.request[e])
    nbrecv = shape == NBRECV
    e = posted_of[first[nbrecv]]
    put(nbrecv, op=vm.RECV, name=name_id("MPI_Irecv"), size=t.size[e], peer=t.peer[e],
        tag=t.tag[e], request=t.request[first[nbrecv]])
    coll = shape == COLL
    put(coll, **_collective_fields(c, moving[coll], first[coll], name_id))
    same = (shape == EXCHANGE) & ~exchange_split
    s, r = ex_send[same], ex_recv[same]
    put(same, op=vm.SENDRECV, name=name_id("MPI_Sendrecv"), size=t.size[s], peer=t.peer[s],
        tag=t.tag[s], recv_size=t.size[r], src=t.peer[r], recv_tag=t.tag[r])
    # a Wait's requests: its Isends' completions first, then its receives'
    waits = shape == WAITS
    done_rows = np.flatnonzero(live_done)
    is_send_done = t.kind[done_rows] == SEND_DONE
    order = np.lexsort((done_rows, ~is_send_done, c.event_call[done_rows]))
    done_rows = done_rows[order]
    requests = t.request[done_rows]
    per_call = np.bincount(c.event_call[done_rows], minlength=t.calls)
    start_of = np.concatenate([[0], np.cumsum(per_call)])
    count = per_call[moving[waits]]
    put(waits, op=vm.WAIT, name=np.where(count == 1, name_id("MPI_Wait"), name_id("MPI_Waitall")),
        first=start_of[moving[waits]], count=count)
    # a Sendrecv of two tags: an Irecv, an Isend and their Waitall
    split = np.flatnonzero(exchange_split)
    if len(split):
        extra = len(requests) + 2 * np.arange(len(split))
        names_ = -(extra + 2), -(extra + 3)         # the pair's request names (-1 is none)
        s, r = ex_send[split], ex_recv[split]
        for k, (op, name, size, peer, tag, req) in enumerate((
                (vm.RECV, "MPI_Irecv", t.size[r], t.peer[r], t.tag[r], names_[1]),
                (vm.SEND, "MPI_Isend", t.size[s], t.peer[s], t.tag[s], names_[0]))):
            where = at[split] + k
            code["op"][where], code["name"][where], code["flag"][where] = op, name_id(name), 0
            code["size"][where], code["peer"][where], code["tag"][where] = size, peer, tag
            code["request"][where], code["call"][where] = req, call_in_rank[split]
        where = at[split] + 2
        code["op"][where], code["name"][where] = vm.WAIT, name_id("MPI_Waitall")
        code["first"][where], code["count"][where] = len(requests) + 2 * np.arange(len(split)), 2
        code["call"][where] = call_in_rank[split]
        pairs = np.stack([names_[0], names_[1]], axis=1).reshape(-1)
        requests = np.concatenate([requests, pairs])
    return requests


def _collective_fields(c, calls, events, name_id) -> dict:
    """The collectives' operation, bytes per peer and root."""
    t = c.table
    ops = [t.operations[op] for op in t.tag[events].tolist()]
    sizes, roots, op_ids = [], [], []
    for op, comm, rank, sent, received, root in zip(
            ops, t.comm[events].tolist(), c.rank[calls].tolist(), t.size[events].tolist(),
            t.request[events].tolist(), t.root[events].tolist()):
        members = t.members[comm]
        world_root = members[root] if root < len(members) else None
        size = per_peer_size(op, sent, received, len(members), world_root == rank)
        if op == "REDUCE_SCATTER_BLOCK":
            size *= len(members)
        sizes.append(size)
        roots.append(0 if world_root is None else world_root)
        op_ids.append(name_id(COLLECTIVE_OPS[op]))
    return {"op": vm.COLLECTIVE, "name": np.array(op_ids, dtype=np.int64),
            "size": np.array(sizes, dtype=np.int64), "peer": np.array(roots, dtype=np.int64)}


def table_of(trace) -> CallTable:
    """The :class:`~pevpm.trace.table.CallTable` of a :class:`~pevpm.trace.events.Trace`
    (what the C reader gives for its archive), to replay a trace made in Python
    in arrays.

    >>> from pevpm.trace.events import Call, Recv, Send, Trace
    >>> t = table_of(Trace(((Call("MPI_Init", 0, 1), Call("MPI_Send", 2, 3, (Send(1, 0, 8),))),
    ...                     (Call("MPI_Init", 0, 1), Call("MPI_Recv", 2, 4, (Recv(0, 0, 8),))))))
    >>> t.calls, t.kind.tolist(), t.peer.tolist(), t.event_starts.tolist()
    (4, [0, 4], [1, 0], [0, 0, 1, 1, 2])
    """
    from pevpm.trace.events import Collective, Posted, Recv, Send, SendDone

    kinds = {Send: SEND, Recv: RECV, Posted: POSTED, SendDone: SEND_DONE, Collective: COLLECTIVE}
    names: dict[str, int] = {}
    operations: dict[str, int] = {}
    comms: dict[tuple, int] = {tuple(range(trace.numprocs)): 0}
    calls, events = [], []
    for calls_of_rank in trace.ranks:
        for call in calls_of_rank:
            calls.append((names.setdefault(call.name, len(names)), call.start, call.end,
                          np.nan if call.cpu is None else call.cpu, call.slept,
                          -1 if call.any_source is None else int(call.any_source),
                          len(call.events)))
            for e in call.events:
                kind = kinds[type(e)]
                if kind == COLLECTIVE:
                    root = len(e.members) if e.root is None else e.members.index(e.root)
                    events.append((kind, comms.setdefault(e.members, len(comms)), 0,
                                   operations.setdefault(e.op, len(operations)), e.sent,
                                   e.received, root))
                elif kind in (SEND, RECV):
                    kind = {SEND: ISEND, RECV: IRECV}[kind] if e.request is not None else kind
                    events.append((kind, 0, e.dest if kind in (SEND, ISEND) else e.source,
                                   e.tag, e.size, e.request or 0, 0))
                else:
                    events.append((kind, 0, 0, 0, 0, e.request, 0))
    c = np.array(calls, dtype=float).reshape(-1, 7)
    e = np.array(events, dtype=np.int64).reshape(-1, 7)
    counts = np.array([len(r) for r in trace.ranks])
    return CallTable(
        numprocs=trace.numprocs, names=list(names),
        rank_starts=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        region=c[:, 0].astype(np.int64), start=c[:, 1], end=c[:, 2], cpu=c[:, 3],
        slept=c[:, 4], any_source=c[:, 5].astype(np.int8),
        event_starts=np.concatenate([[0], np.cumsum(c[:, 6])]).astype(np.int64),
        kind=e[:, 0], comm=e[:, 1], peer=e[:, 2], tag=e[:, 3], size=e[:, 4], request=e[:, 5],
        root=e[:, 6], members={comm: members for members, comm in comms.items()},
        operations={code: op for op, code in operations.items()}, cores=trace.cores)
