# cython: language_level=3, boundscheck=False, wraparound=False
"""An OTF2 archive's MPI calls into arrays, read by C callbacks.

The OTF2 library the ``otf2`` package ships (``_otf2/_otf2*.so``) calls the
functions here once per record; they keep each rank's Enter/Leave stack in
C and write every top-level ``MPI_*`` region (a call) and the MPI records
inside it into growing C arrays, so reading costs no Python object per
record.  The library's functions are reached through their addresses
(``ctypes`` finds them in the package's shared library), so nothing is
linked when this module is built.  :func:`read_records` is driven by
:mod:`pevpm.trace.otf2.arrays`, which hands over the definitions and turns
the arrays into a :class:`~pevpm.trace.events.Trace`.

    calls, events = read_records(functions, handle, ranks, mpi, attributes)
"""

from libc.math cimport NAN, isfinite
from libc.stdint cimport int8_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy, memset

import numpy as np

#: One call: its rank, region, Enter and Leave time stamps, the attributes of its
#: Enter (cpu and sleep: NaN when absent; any_source: -1 when absent), its events.
CALL = np.dtype([("rank", "<i4"), ("region", "<u4"), ("start", "<u8"), ("end", "<u8"),
                 ("cpu", "<f8"), ("sleep", "<f8"), ("any_source", "i1"), ("done", "i1")])
#: One MPI record inside a call: the call's index, the record's kind
#: (:data:`KINDS`), communicator, peer in it, tag (a collective's operation),
#: size (a collective's bytes sent), request (a collective's bytes received;
#: its root in ``peer``).
EVENT = np.dtype([("call", "<i8"), ("kind", "i1"), ("comm", "<u4"), ("peer", "<u4"),
                  ("tag", "<u4"), ("size", "<u8"), ("request", "<u8")])
KINDS = ("MpiSend", "MpiIsend", "MpiIsendComplete", "MpiIrecvRequest", "MpiRecv", "MpiIrecv",
         "MpiCollectiveEnd")

cdef enum:
    K_SEND = 0
    K_ISEND = 1
    K_ISEND_COMPLETE = 2
    K_IRECV_REQUEST = 3
    K_RECV = 4
    K_IRECV = 5
    K_COLLECTIVE = 6
    DEPTH = 64              # regions open at once on one location, at most

ctypedef packed struct CallRec:
    int rank
    uint32_t region
    uint64_t start, end
    double cpu, sleep
    int8_t any_source, done

ctypedef packed struct EventRec:
    int64_t call
    int8_t kind
    uint32_t comm, peer, tag
    uint64_t size, request

ctypedef struct Stack:
    uint32_t regions[DEPTH]
    int depth
    int64_t call            # the open call (the outermost MPI region), or -1

# OTF2_AttributeList functions, as the library declares them
ctypedef uint32_t (*count_fn)(void *) noexcept nogil
ctypedef int (*get_fn)(void *, uint32_t, uint32_t *, uint8_t *, uint64_t *) noexcept nogil
ctypedef void *(*new_fn)() noexcept nogil
ctypedef void (*delete_fn)(void *) noexcept nogil
ctypedef int (*set_fn)(void *, void *) noexcept nogil
ctypedef int (*set_callbacks_fn)(void *, void *, void *) noexcept nogil
ctypedef int (*read_fn)(void *, uint64_t, uint64_t *) noexcept nogil

cdef struct State:
    CallRec *calls
    int64_t ncalls, call_cap
    EventRec *events
    int64_t nevents, event_cap
    Stack *stacks
    const uint64_t *locations       # the ranks' location refs, ascending
    const int *rank_of              # ... and each one's rank
    int nlocations
    const uint8_t *mpi              # per region ref: its name starts with MPI_
    uint32_t nregions
    uint32_t cpu_ref, sleep_ref, any_source_ref
    count_fn count
    get_fn get
    int failed                      # something the reference reader must report


cdef int _rank(State *s, uint64_t location) noexcept nogil:
    cdef int lo = 0, hi = s.nlocations, mid
    while lo < hi:
        mid = (lo + hi) // 2
        if s.locations[mid] < location:
            lo = mid + 1
        else:
            hi = mid
    if lo < s.nlocations and s.locations[lo] == location:
        return lo
    return -1


cdef double _number(uint8_t kind, uint64_t raw, int *ok) noexcept nogil:
    """An attribute value of a numeric OTF2 type as a double (``ok`` cleared otherwise)."""
    cdef double d
    cdef float f
    if kind == 1:
        return <double> (<uint8_t> raw)
    if kind == 2:
        return <double> (<unsigned short> raw)
    if kind == 3:
        return <double> (<uint32_t> raw)
    if kind == 4:
        return <double> raw
    if kind == 5:
        return <double> (<signed char> raw)
    if kind == 6:
        return <double> (<short> raw)
    if kind == 7:
        return <double> (<int> raw)
    if kind == 8:
        return <double> (<int64_t> raw)
    if kind == 9:
        memcpy(&f, &raw, sizeof(float))
        return f
    if kind == 10:
        memcpy(&d, &raw, sizeof(double))
        return d
    ok[0] = 0
    return 0


cdef int _attributes(State *s, void *attributes, CallRec *c) noexcept nogil:
    """The pevpm attributes of an Enter into ``c``; -1 for a value the reference
    reader refuses (not a number, not finite, negative) and for any attribute
    not a number (the reference reader decodes those, and may refuse them)."""
    cdef uint32_t n, k, ref
    cdef uint8_t kind
    cdef uint64_t raw
    cdef int ok
    cdef double v
    if attributes == NULL:
        return 0
    n = s.count(attributes)
    for k in range(n):
        raw = 0
        if s.get(attributes, k, &ref, &kind, &raw) != 0:
            return -1
        ok = 1
        v = _number(kind, raw, &ok)
        if not ok:
            return -1
        if ref != s.cpu_ref and ref != s.sleep_ref and ref != s.any_source_ref:
            continue
        if ref == s.any_source_ref:
            c.any_source = 1 if v != 0 else 0
        elif not isfinite(v) or v < 0:
            return -1
        elif ref == s.cpu_ref:
            c.cpu = v
        else:
            c.sleep = v
    return 0


cdef int _grow(void **array, int64_t *cap, int64_t size) noexcept nogil:
    cdef int64_t new_cap = cap[0] * 2 if cap[0] else 4096
    cdef void *p = realloc(array[0], new_cap * size)
    if p == NULL:
        return -1
    array[0] = p
    cap[0] = new_cap
    return 0


cdef int enter(uint64_t location, uint64_t time, void *user, void *attributes,
               uint32_t region) noexcept nogil:
    cdef State *s = <State *> user
    cdef int r = _rank(s, location)
    cdef Stack *st
    cdef CallRec c
    if r < 0:
        return 0
    st = &s.stacks[r]
    if st.depth == DEPTH or region >= s.nregions:
        s.failed = 1
        return 1
    c.rank, c.region, c.start, c.end = s.rank_of[r], region, time, 0
    c.cpu = NAN
    c.sleep = 0.0
    c.any_source, c.done = -1, 0
    if _attributes(s, attributes, &c) < 0:
        s.failed = 1
        return 1
    st.regions[st.depth] = region
    st.depth += 1
    if st.call >= 0 or not s.mpi[region]:
        return 0
    if s.ncalls == s.call_cap and _grow(<void **> &s.calls, &s.call_cap, sizeof(CallRec)) < 0:
        s.failed = 1
        return 1
    s.calls[s.ncalls] = c
    st.call = s.ncalls
    s.ncalls += 1
    return 0


cdef int leave(uint64_t location, uint64_t time, void *user, void *attributes,
               uint32_t region) noexcept nogil:
    cdef State *s = <State *> user
    cdef int r = _rank(s, location)
    cdef Stack *st
    cdef CallRec *c
    if r < 0:
        return 0
    st = &s.stacks[r]
    if st.depth == 0 or st.regions[st.depth - 1] != region:
        s.failed = 1                # the reference reader names the mismatch
        return 1
    st.depth -= 1
    if st.call >= 0 and s.mpi[region] and _outermost_closed(s, st):
        c = &s.calls[st.call]       # the outermost MPI region ended: the call did
        c.end = time
        c.done = 1
        st.call = -1
    return 0


cdef bint _outermost_closed(State *s, Stack *st) noexcept nogil:
    """Whether no MPI region is left open on ``st`` (its call ended)."""
    cdef int k
    for k in range(st.depth):
        if s.mpi[st.regions[k]]:
            return False
    return True


cdef int _event(State *s, uint64_t location, int8_t kind, uint32_t comm, uint32_t peer,
                uint32_t tag, uint64_t size, uint64_t request) noexcept nogil:
    cdef int r = _rank(s, location)
    cdef Stack *st
    cdef EventRec *e
    if r < 0:
        return 0
    st = &s.stacks[r]
    if st.call < 0:
        return 0                    # outside MPI: nothing
    if s.nevents == s.event_cap and _grow(<void **> &s.events, &s.event_cap,
                                          sizeof(EventRec)) < 0:
        s.failed = 1
        return 1
    e = &s.events[s.nevents]
    e.call = st.call
    e.kind, e.comm, e.peer, e.tag, e.size, e.request = kind, comm, peer, tag, size, request
    s.nevents += 1
    return 0


cdef int mpi_send(uint64_t location, uint64_t time, void *user, void *attributes,
                  uint32_t receiver, uint32_t comm, uint32_t tag,
                  uint64_t length) noexcept nogil:
    return _event(<State *> user, location, K_SEND, comm, receiver, tag, length, 0)


cdef int mpi_isend(uint64_t location, uint64_t time, void *user, void *attributes,
                   uint32_t receiver, uint32_t comm, uint32_t tag, uint64_t length,
                   uint64_t request) noexcept nogil:
    return _event(<State *> user, location, K_ISEND, comm, receiver, tag, length, request)


cdef int mpi_isend_complete(uint64_t location, uint64_t time, void *user, void *attributes,
                            uint64_t request) noexcept nogil:
    return _event(<State *> user, location, K_ISEND_COMPLETE, 0, 0, 0, 0, request)


cdef int mpi_irecv_request(uint64_t location, uint64_t time, void *user, void *attributes,
                           uint64_t request) noexcept nogil:
    return _event(<State *> user, location, K_IRECV_REQUEST, 0, 0, 0, 0, request)


cdef int mpi_recv(uint64_t location, uint64_t time, void *user, void *attributes,
                  uint32_t sender, uint32_t comm, uint32_t tag,
                  uint64_t length) noexcept nogil:
    return _event(<State *> user, location, K_RECV, comm, sender, tag, length, 0)


cdef int mpi_irecv(uint64_t location, uint64_t time, void *user, void *attributes,
                   uint32_t sender, uint32_t comm, uint32_t tag, uint64_t length,
                   uint64_t request) noexcept nogil:
    return _event(<State *> user, location, K_IRECV, comm, sender, tag, length, request)


cdef int mpi_collective_end(uint64_t location, uint64_t time, void *user, void *attributes,
                            uint8_t op, uint32_t comm, uint32_t root, uint64_t sent,
                            uint64_t received) noexcept nogil:
    return _event(<State *> user, location, K_COLLECTIVE, comm, root, op, sent, received)


#: The callbacks, by the name of the library's function that registers each.
cdef dict _CALLBACKS = {
    "Enter": <size_t> &enter, "Leave": <size_t> &leave, "MpiSend": <size_t> &mpi_send,
    "MpiIsend": <size_t> &mpi_isend, "MpiIsendComplete": <size_t> &mpi_isend_complete,
    "MpiIrecvRequest": <size_t> &mpi_irecv_request, "MpiRecv": <size_t> &mpi_recv,
    "MpiIrecv": <size_t> &mpi_irecv, "MpiCollectiveEnd": <size_t> &mpi_collective_end}

cdef uint64_t BATCH_RECORDS = 1ULL << 62   # asked of the reader: it stops at the end


class Unusual(Exception):
    """Something in the archive the reference reader must report (or read) itself."""


def read_records(dict functions, size_t handle, locations, ranks, mpi, refs):
    """``(calls, events)``: arrays of :data:`CALL` (in the order they were entered)
    and :data:`EVENT` (in the archive's order, each naming its call).  ``functions``: the
    library's function addresses by name; ``handle``: the global event reader's
    address; ``locations`` (ascending) and ``ranks``: the ranks' location refs
    and ranks; ``mpi``: per region ref, whether its name starts with ``MPI_``;
    ``refs``: the attribute refs of cpu, sleep and any_source (``2**32 - 1``:
    not defined).  Raises :class:`Unusual` where the reference reader must speak."""
    cdef State s
    cdef const uint64_t[::1] locs = np.ascontiguousarray(locations, dtype=np.uint64)
    cdef const int[::1] rank_of = np.ascontiguousarray(ranks, dtype=np.intc)
    cdef const uint8_t[::1] is_mpi = np.ascontiguousarray(mpi, dtype=np.uint8)
    cdef void *table
    cdef read_fn read_events
    cdef uint64_t read = 0
    cdef int code, k
    memset(&s, 0, sizeof(State))
    s.nlocations = len(locs)
    s.locations = &locs[0] if s.nlocations else NULL
    s.rank_of = &rank_of[0] if s.nlocations else NULL
    s.nregions = len(is_mpi)
    s.mpi = &is_mpi[0] if s.nregions else NULL
    s.cpu_ref, s.sleep_ref, s.any_source_ref = refs
    s.count = <count_fn> <size_t> functions["OTF2_AttributeList_GetNumberOfElements"]
    s.get = <get_fn> <size_t> functions["OTF2_AttributeList_GetAttributeByIndex"]
    s.stacks = <Stack *> malloc(max(s.nlocations, 1) * sizeof(Stack))
    if s.stacks == NULL:
        raise MemoryError()
    for k in range(s.nlocations):
        s.stacks[k].depth = 0
        s.stacks[k].call = -1
    table = (<new_fn> <size_t> functions["OTF2_GlobalEvtReaderCallbacks_New"])()
    try:
        if table == NULL:
            raise MemoryError()
        for name, address in _CALLBACKS.items():
            code = (<set_fn> <size_t> functions[f"OTF2_GlobalEvtReaderCallbacks_Set{name}Callback"])(
                table, <void *> <size_t> address)
            if code != 0:
                raise Unusual(f"registering the {name} callback failed ({code})")
        code = (<set_callbacks_fn> <size_t> functions["OTF2_GlobalEvtReader_SetCallbacks"])(
            <void *> handle, table, &s)
        if code != 0:
            raise Unusual(f"setting the callbacks failed ({code})")
        read_events = <read_fn> <size_t> functions["OTF2_GlobalEvtReader_ReadEvents"]
        with nogil:
            code = read_events(<void *> handle, BATCH_RECORDS, &read)
        if code != 0 or s.failed:
            raise Unusual(f"the read stopped ({code})")
        calls = np.empty(s.ncalls, dtype=CALL)
        events = np.empty(s.nevents, dtype=EVENT)
        if s.ncalls:
            memcpy(<void *> <size_t> calls.ctypes.data, s.calls, s.ncalls * sizeof(CallRec))
        if s.nevents:
            memcpy(<void *> <size_t> events.ctypes.data, s.events,
                   s.nevents * sizeof(EventRec))
        return calls, events
    finally:
        if table != NULL:
            (<delete_fn> <size_t> functions["OTF2_GlobalEvtReaderCallbacks_Delete"])(table)
        free(s.calls)
        free(s.events)
        free(s.stacks)


cdef inline bint _has_peer(int8_t kind) noexcept:
    return kind == K_SEND or kind == K_ISEND or kind == K_RECV or kind == K_IRECV


def communicators(events) -> np.ndarray:
    """The communicators (ascending) that the point-to-point and collective
    records of ``events`` (:data:`EVENT` records) name."""
    cdef const EventRec *ev = <const EventRec *> <size_t> events.ctypes.data
    cdef int64_t n = len(events), e
    cdef uint32_t top = 0
    for e in range(n):
        if (_has_peer(ev[e].kind) or ev[e].kind == K_COLLECTIVE) and ev[e].comm > top:
            top = ev[e].comm
    if top >= 1 << 26:                  # refs too far apart for a table: numpy finds them
        kinds = events["kind"]
        used = np.isin(kinds, [K_SEND, K_ISEND, K_RECV, K_IRECV, K_COLLECTIVE])
        return np.unique(events["comm"][used]).astype(np.int64)
    seen = np.zeros(top + 1, dtype=np.uint8)
    cdef uint8_t[::1] s = seen
    for e in range(n):
        if _has_peer(ev[e].kind) or ev[e].kind == K_COLLECTIVE:
            s[ev[e].comm] = 1
    return np.flatnonzero(seen)


def table_columns(calls, events, int nranks, const int64_t[::1] comms,
                  const int64_t[::1] world_starts, const int64_t[::1] world,
                  int64_t zero, double scale) -> dict:
    """The :class:`~pevpm.trace.table.CallTable` columns of ``calls`` and ``events``
    (:func:`read_records`): the calls left (``done``) in rank order, each
    rank's in the order entered; each call's records in the archive's order;
    times in seconds (``(ticks - zero) * scale``); peers as world ranks, the
    world ranks of communicator ``comms[i]`` being
    ``world[world_starts[i]:world_starts[i + 1]]``.  Raises :class:`Unusual`
    where a record's peer is outside its communicator."""
    cdef const CallRec *c = <const CallRec *> <size_t> calls.ctypes.data
    cdef const EventRec *ev = <const EventRec *> <size_t> events.ctypes.data
    cdef int64_t ncalls = len(calls), nevents = len(events), k, e, at, i, lo, hi, mid
    cdef int64_t kept = 0, placed = 0
    rank_starts = np.zeros(nranks + 1, dtype=np.int64)
    number = np.full(ncalls, -1, dtype=np.int64)
    cdef int64_t[::1] rs = rank_starts, num = number
    # each rank's calls left, numbered in rank order (a stable counting sort)
    for k in range(ncalls):
        if c[k].done:
            rs[c[k].rank + 1] += 1
            kept += 1
    for k in range(nranks):
        rs[k + 1] += rs[k]
    cursor = rank_starts[:-1].copy()
    cdef int64_t[::1] cur = cursor
    for k in range(ncalls):
        if c[k].done:
            num[k] = cur[c[k].rank]
            cur[c[k].rank] += 1
    out = {name: np.empty(kept, dtype=dtype) for name, dtype in (
        ("region", np.int64), ("start", np.float64), ("end", np.float64),
        ("cpu", np.float64), ("slept", np.float64), ("any_source", np.int8))}
    cdef int64_t[::1] region = out["region"]
    cdef double[::1] start = out["start"], end = out["end"], cpu = out["cpu"]
    cdef double[::1] slept = out["slept"]
    cdef int8_t[::1] any_source = out["any_source"]
    for k in range(ncalls):
        at = num[k]
        if at < 0:
            continue
        region[at] = c[k].region
        start[at] = <double> (<int64_t> c[k].start - zero) * scale
        end[at] = <double> (<int64_t> c[k].end - zero) * scale
        cpu[at] = c[k].cpu
        slept[at] = 0.0 if c[k].sleep != c[k].sleep else c[k].sleep
        any_source[at] = c[k].any_source
    # each call's records, in the archive's order
    event_starts = np.zeros(kept + 1, dtype=np.int64)
    cdef int64_t[::1] es = event_starts
    for e in range(nevents):
        at = num[ev[e].call]
        if at >= 0:
            es[at + 1] += 1
            placed += 1
    for k in range(kept):
        es[k + 1] += es[k]
    columns = {name: np.empty(placed, dtype=np.int64) for name in (
        "kind", "comm", "peer", "tag", "size", "request", "root")}
    cdef int64_t[::1] kind = columns["kind"], comm = columns["comm"], peer = columns["peer"]
    cdef int64_t[::1] tag = columns["tag"], size = columns["size"]
    cdef int64_t[::1] request = columns["request"], root = columns["root"]
    cursor = event_starts[:-1].copy()
    cur = cursor
    cdef int64_t world_peer
    for e in range(nevents):
        world_peer = 0
        if _has_peer(ev[e].kind):       # every record's peer is checked, placed or not
            lo, hi = 0, len(comms)
            while lo < hi:
                mid = (lo + hi) // 2
                if comms[mid] < ev[e].comm:
                    lo = mid + 1
                else:
                    hi = mid
            if ev[e].peer >= world_starts[lo + 1] - world_starts[lo]:
                raise Unusual(f"a peer outside communicator {ev[e].comm}")
            world_peer = world[world_starts[lo] + ev[e].peer]
        at = num[ev[e].call]
        if at < 0:
            continue
        i = cur[at]
        cur[at] += 1
        kind[i], comm[i], peer[i] = ev[e].kind, ev[e].comm, world_peer
        tag[i], size[i] = ev[e].tag, <int64_t> ev[e].size
        request[i], root[i] = <int64_t> ev[e].request, ev[e].peer
    return {"rank_starts": rank_starts, "event_starts": event_starts, **out, **columns}
