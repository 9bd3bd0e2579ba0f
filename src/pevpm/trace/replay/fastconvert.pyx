# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""A call table's instruction arrays in typed passes (what
:func:`pevpm.trace.replay.fast.convert_reference` computes in numpy, number for number).

* :func:`links` pairs each ``MPI_Isend`` and posted receive with the record
  completing it, per (rank, request), in a small open-addressing table that
  holds only the requests still open;
* :func:`match` lists the sends of each (source, destination, tag) in order
  and hands them to the receives in the order they were posted: when each
  call's peers were there (:func:`pevpm.trace.replay.delays.ready_array`);
* :func:`moving_calls` classes every call and gives per call that moves data
  its gap (computation and sleep, added in the reference's order), how long
  it took after it was ready, the bytes it moved and numbers for the sets of
  ranks it received from and sent to;
* :func:`delays_of` numbers the calls' kinds (name, size class, the two
  sets) and subtracts each kind's fastest;
* :func:`instructions` writes every rank's instruction fields;
* :func:`shapes` gives each call's shape alone (for ``fast.check``).

``fast.py`` (``_convert_compiled``) prepares the per-name and per-collective
facts and drives the passes; ``tests/trace/test_replay_fast.py`` compares
their arrays with the numpy converter's bit for bit.

    isend_done, posted_of, live, event_call, alternating = links(table)
"""

from libc.math cimport isnan
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport calloc, free, malloc

import numpy as np

# the table's record kinds (pevpm.trace.table.KINDS) and the call shapes (fast.py)
cdef enum:
    K_SEND = 0
    K_ISEND = 1
    K_SEND_DONE = 2
    K_POSTED = 3
    K_RECV = 4
    K_IRECV = 5
    K_COLLECTIVE = 6
    S_EMPTY = 0
    S_COLL = 1
    S_BSEND = 2
    S_BRECV = 3
    S_EXCHANGE = 4
    S_NBSEND = 5
    S_NBRECV = 6
    S_WAITS = 7
    # the virtual machine's opcodes (pevpm.vm.kernel.program)
    OP_SERIAL = 0
    OP_SEND = 1
    OP_RECV = 2
    OP_SENDRECV = 3
    OP_WAIT = 4
    OP_COLLECTIVE = 6


# ------------------------------------------------------------- a small hash table
# Open addressing from a two-word key to an int64 value (-1: absent), grown at half full.

cdef struct Slot:
    uint64_t a, b
    int64_t value
    int8_t used

cdef struct Table:
    Slot *slots
    uint64_t mask
    int64_t n


cdef int table_init(Table *t, uint64_t capacity) except -1:
    cdef uint64_t size = 64
    while size < 2 * capacity:
        size <<= 1
    t.slots = <Slot *> calloc(size, sizeof(Slot))
    if t.slots == NULL:
        raise MemoryError()
    t.mask, t.n = size - 1, 0
    return 0


cdef inline uint64_t mix(uint64_t a, uint64_t b) noexcept nogil:
    cdef uint64_t h = a * 0x9E3779B97F4A7C15ULL ^ (b + 0x632BE59BD9B4E019ULL)
    h ^= h >> 31
    h *= 0xBF58476D1CE4E5B9ULL
    h ^= h >> 29
    return h


cdef Slot *table_slot(Table *t, uint64_t a, uint64_t b) except NULL:
    """The slot of key (a, b): its entry, or the empty slot it would take (taken
    here, value -1)."""
    cdef uint64_t i, j, size
    cdef Slot *old
    if 2 * (t.n + 1) > <int64_t> (t.mask + 1):
        old, size = t.slots, t.mask + 1
        table_init(t, size)
        for j in range(size):
            if old[j].used:
                table_slot(t, old[j].a, old[j].b).value = old[j].value
        free(old)
    i = mix(a, b) & t.mask
    while t.slots[i].used:
        if t.slots[i].a == a and t.slots[i].b == b:
            return &t.slots[i]
        i = (i + 1) & t.mask
    t.slots[i].used, t.slots[i].a, t.slots[i].b, t.slots[i].value = 1, a, b, -1
    t.n += 1
    return &t.slots[i]


cdef void table_remove(Table *t, Slot *s) noexcept:
    """Empty slot ``s``, moving back the entries whose probe passed it."""
    cdef uint64_t i = s - t.slots, j = i, home
    while True:
        j = (j + 1) & t.mask
        if not t.slots[j].used:
            break
        home = mix(t.slots[j].a, t.slots[j].b) & t.mask
        if (i < home <= j) if i <= j else (i < home or home <= j):
            continue                # still reachable from its home
        t.slots[i] = t.slots[j]
        i = j
    t.slots[i].used = 0
    t.n -= 1


cdef int64_t table_find(Table *t, uint64_t a, uint64_t b) noexcept:
    cdef uint64_t i = mix(a, b) & t.mask
    while t.slots[i].used:
        if t.slots[i].a == a and t.slots[i].b == b:
            return t.slots[i].value
        i = (i + 1) & t.mask
    return -1


# ------------------------------------------------------------------ the scan

cdef int64_t set_id(Table *sets, const int64_t[::1] peer, const int64_t[::1] kind, int64_t e0,
                    int64_t e1, int k1, int k2, int64_t *buffer) except -2:
    """A number for the set of peers of the records ``e0:e1`` of kinds ``k1``/``k2``
    (equal sets, equal numbers; none: -1).  Sets of one or two ranks are keyed
    exactly, larger ones by two 64-bit digests of their sorted ranks."""
    cdef int64_t n = 0, e, i, j, v
    cdef uint64_t a, b
    cdef Slot *s
    for e in range(e0, e1):
        if kind[e] == k1 or kind[e] == k2:
            v = peer[e]
            j = n                           # insertion sort, keeping each rank once
            while j > 0 and buffer[j - 1] > v:
                j -= 1
            if j > 0 and buffer[j - 1] == v:
                continue
            i = n
            while i > j:
                buffer[i] = buffer[i - 1]
                i -= 1
            buffer[j] = v
            n += 1
    if n == 0:
        return -1
    if n == 1:
        a, b = 1, <uint64_t> buffer[0]
    elif n == 2:
        a, b = 2 | (<uint64_t> buffer[0] << 2), <uint64_t> buffer[1]
    else:
        a, b = 3 | (<uint64_t> n << 2), <uint64_t> n
        for i in range(n):
            a = mix(a, <uint64_t> buffer[i])
            b = mix(b ^ 0x5851F42D4C957F2DULL, <uint64_t> buffer[i])
        a |= 3
    s = table_slot(sets, a, b)
    if s.value < 0:
        s.value = sets.n - 1
    return s.value


cdef inline int64_t rank_of(const int64_t[::1] rank_starts, int numprocs,
                            int64_t call) noexcept:
    """The rank whose calls hold ``call`` (its last rank start at or before it)."""
    cdef int lo = 0, hi = numprocs, mid
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if rank_starts[mid] <= call:
            lo = mid
        else:
            hi = mid
    return lo


cdef inline void latest(double[::1] ready, int64_t call, double moment) noexcept:
    """``ready[call]`` raised to ``moment`` (NaN: not set yet), as ``np.fmax.at``."""
    if isnan(ready[call]) or moment > ready[call]:
        ready[call] = moment


def links(t):
    """Per record: an ``MPI_Isend``'s completing record and a posted receive's
    (-1: none; :func:`pevpm.trace.replay.delays.request_links`), whether it
    completes a live request, and the call each record is in; and whether
    each receive request was completed before it was posted again (and
    posted before it was completed)."""
    cdef const int64_t[::1] rank_starts = t.rank_starts, event_starts = t.event_starts
    cdef const int64_t[::1] kind = t.kind, request = t.request
    cdef int64_t nevents = len(t.kind), r, k, e, c, prev
    cdef int family
    cdef Slot *s
    cdef Table last
    cdef bint alternating = True
    isend_done = np.full(nevents, -1, dtype=np.int64)
    posted_of = np.full(nevents, -1, dtype=np.int64)
    event_call = np.empty(nevents, dtype=np.int64)
    live = np.zeros(nevents, dtype=np.bool_)
    cdef int64_t[::1] done_v = isend_done, posted_v = posted_of, call_of = event_call
    cdef uint8_t[::1] live_v = live.view(np.uint8)
    table_init(&last, 1024)
    try:
        for r in range(t.numprocs):
            for k in range(rank_starts[r], rank_starts[r + 1]):
                for e in range(event_starts[k], event_starts[k + 1]):
                    call_of[e] = k
                    c = kind[e]
                    if c == K_ISEND or c == K_SEND_DONE:
                        family = 0
                    elif c == K_POSTED or c == K_IRECV:
                        family = 1
                    else:
                        continue
                    s = table_slot(&last, <uint64_t> r * 2 + family, <uint64_t> request[e])
                    prev = s.value
                    if family == 1 and (prev >= 0) == (c == K_POSTED):
                        alternating = False     # posted twice, or completed unposted
                    if c == K_ISEND or c == K_POSTED:
                        s.value = e             # the request's last posting, open
                        continue
                    if prev >= 0 and c == K_SEND_DONE:
                        done_v[prev] = e
                        live_v[e] = 1
                    elif prev >= 0:
                        posted_v[prev] = e
                        live_v[e] = 1
                    table_remove(&last, s)      # completed (or never posted): nothing open
    finally:
        free(last.slots)
    return isend_done, posted_of, live, event_call, alternating


def match(t, isend_done, posted_of, event_call, ready) -> None:
    """Raise ``ready`` (per call) to when the peers of each call's point-to-point
    records were there: the k-th send and the k-th receive posted of one (source,
    destination, tag) match (sizes equal), as
    :func:`pevpm.trace.replay.delays.ready_array` has it."""
    cdef const int64_t[::1] rank_starts = t.rank_starts, kind = t.kind, peer = t.peer
    cdef const int64_t[::1] tag = t.tag, size = t.size
    cdef const double[::1] start = t.start
    cdef const int64_t[::1] done_v = isend_done, posted_v = posted_of, call_of = event_call
    cdef double[::1] ready_v = ready
    cdef int numprocs = t.numprocs
    cdef int64_t nevents = len(t.kind), e, m, c, j, r, nkeys = 0
    cdef Slot *s
    cdef Table keys
    # per key its sends in order: the first one's record and each one's next
    cdef int64_t *nxt = <int64_t *> malloc(max(nevents, 1) * sizeof(int64_t))
    heads = np.empty(1024, dtype=np.int64)
    tails = np.empty(1024, dtype=np.int64)
    cdef int64_t[::1] head = heads, tail = tails
    if nxt == NULL:
        raise MemoryError()
    table_init(&keys, 1024)
    try:
        for e in range(nevents):
            c = kind[e]
            if c != K_SEND and c != K_ISEND:
                continue
            r = rank_of(rank_starts, numprocs, call_of[e])
            s = table_slot(&keys, <uint64_t> r * numprocs + <uint64_t> peer[e],
                           <uint64_t> tag[e])
            if s.value < 0:
                if nkeys == len(heads):
                    heads = np.concatenate([heads, heads])
                    tails = np.concatenate([tails, tails])
                    head, tail = heads, tails
                s.value = nkeys
                head[nkeys] = tail[nkeys] = -1
                nkeys += 1
            j = s.value
            nxt[e] = -1
            if tail[j] < 0:
                head[j] = e
            else:
                nxt[tail[j]] = e
            tail[j] = e
        for e in range(nevents):        # receives in the order they were posted
            c = kind[e]
            if c == K_RECV:
                m = e
            elif c == K_POSTED and posted_v[e] >= 0:
                m = posted_v[e]
            else:
                continue
            r = rank_of(rank_starts, numprocs, call_of[e])
            j = table_find(&keys, <uint64_t> peer[m] * numprocs + <uint64_t> r,
                           <uint64_t> tag[m])
            if j < 0 or head[j] < 0:
                continue
            c = head[j]
            head[j] = nxt[c]
            if size[c] != size[m]:
                continue
            latest(ready_v, call_of[m], start[call_of[c]])
            if kind[c] == K_SEND:
                latest(ready_v, call_of[c], start[call_of[e]])
            elif done_v[c] >= 0:
                latest(ready_v, call_of[done_v[c]], start[call_of[e]])
    finally:
        free(keys.slots)
        free(nxt)


def moving_calls(t, const int8_t[::1] is_init, const int8_t[::1] is_final,
                 const int64_t[::1] coll_members, posted_of, live, ready, bint delays):
    """Per rank its begin, finish, first ``MPI_Finalize`` (-1: none), and the tail's
    computation and sleep; per call that moves data (in call order) the call,
    its shape, its gap's computation and own sleep, how long it took after it
    was ready (0 without ``delays``), the bytes it moved and the numbers of the
    sets of ranks it received from and sent to (-1: none)."""
    cdef const int64_t[::1] rank_starts = t.rank_starts, region = t.region
    cdef const int64_t[::1] event_starts = t.event_starts, kind = t.kind, peer = t.peer
    cdef const int64_t[::1] size = t.size, request = t.request
    cdef const double[::1] start = t.start, end = t.end, slept = t.slept
    cdef const int64_t[::1] posted_v = posted_of
    cdef const uint8_t[::1] live_v = live.view(np.uint8)
    cdef const double[::1] ready_v = ready
    cdef int numprocs = t.numprocs
    cdef int64_t ncalls = len(t.region), r, k, e, cs, ce, cut, last_init, n = 0, coll = 0
    cdef int64_t c, nlive, here
    cdef int counts[7]
    cdef int shape
    cdef bint moves
    cdef double own, previous_end, x, moved
    cdef Table sets
    out = {name: np.empty(ncalls, dtype=dtype) for name, dtype in (
        ("call", np.int64), ("shape", np.int8), ("computing", np.float64),
        ("slept", np.float64), ("after", np.float64), ("moved", np.float64),
        ("sources", np.int64), ("dests", np.int64), ("collective", np.int64))}
    cdef int64_t[::1] m_call = out["call"], m_src = out["sources"], m_dst = out["dests"]
    cdef int64_t[::1] m_coll = out["collective"]
    cdef int8_t[::1] m_shape = out["shape"]
    cdef double[::1] m_comp = out["computing"], m_slept = out["slept"]
    cdef double[::1] m_after = out["after"], m_moved = out["moved"]
    ranks = {name: np.empty(numprocs) for name in ("begin", "finish", "tail_computing",
                                                   "tail_slept")}
    ranks["final_at"] = np.full(numprocs, -1, dtype=np.int64)
    cdef double[::1] begin = ranks["begin"], finish = ranks["finish"]
    cdef double[::1] tail_comp = ranks["tail_computing"], tail_slept = ranks["tail_slept"]
    cdef int64_t[::1] final_at = ranks["final_at"]
    cdef int64_t *buffer = <int64_t *> malloc(max(len(t.kind), 1) * sizeof(int64_t))
    if buffer == NULL:
        raise MemoryError()
    table_init(&sets, 64)
    try:
        for r in range(numprocs):
            cs, ce = rank_starts[r], rank_starts[r + 1]
            last_init = -1
            for k in range(cs, ce):
                if is_init[region[k]]:
                    last_init = k
                if is_final[region[k]] and final_at[r] < 0:
                    final_at[r] = k
            cut = final_at[r] if final_at[r] >= 0 else ce
            begin[r] = end[last_init] if last_init >= 0 else start[cs]
            finish[r] = start[final_at[r]] if final_at[r] >= 0 else end[ce - 1]
            previous_end, own = begin[r], 0.0
            for k in range(cs, ce):
                counts[0] = counts[1] = counts[2] = counts[3] = counts[4] = counts[5] = 0
                counts[6] = 0
                nlive, here, moved = 0, -1, 0.0
                for e in range(event_starts[k], event_starts[k + 1]):
                    c = kind[e]
                    counts[c] += 1
                    nlive += live_v[e]
                    if c == K_COLLECTIVE:
                        here = coll
                        coll += 1
                        moved += <double> (size[e] + request[e])
                    elif c == K_SEND or c == K_ISEND or c == K_RECV or c == K_IRECV:
                        moved += <double> size[e]
                    else:
                        moved += 0.0
                if k >= cut:
                    continue
                if is_init[region[k]]:
                    continue        # not replayed, nor its sleep counted
                own += slept[k]
                shape = shape_of(counts)
                moves = (shape == S_BSEND or shape == S_BRECV or shape == S_EXCHANGE
                         or shape == S_NBSEND
                         or (shape == S_NBRECV and posted_v[event_starts[k]] >= 0)
                         or (shape == S_WAITS and nlive > 0)
                         or (shape == S_COLL and coll_members[here] > 1))
                if not moves:
                    continue
                m_call[n], m_shape[n], m_coll[n] = k, shape, here
                m_slept[n] = own
                m_comp[n] = (start[k] - previous_end) - own
                m_moved[n] = moved
                if delays:
                    x = ready_v[k] if ready_v[k] > start[k] else start[k]
                    x = end[k] - x
                    m_after[n] = x if x > 0.0 else 0.0
                else:
                    m_after[n] = 0.0
                m_src[n] = set_id(&sets, peer, kind, event_starts[k], event_starts[k + 1],
                                  K_RECV, K_IRECV, buffer)
                m_dst[n] = set_id(&sets, peer, kind, event_starts[k], event_starts[k + 1],
                                  K_SEND, K_ISEND, buffer)
                previous_end, own = end[k], 0.0
                n += 1
            tail_slept[r] = own + (slept[final_at[r]] if final_at[r] >= 0 else 0.0)
            tail_comp[r] = (finish[r] - previous_end) - tail_slept[r]
    finally:
        free(sets.slots)
        free(buffer)
    return {name: column[:n].copy() for name, column in out.items()}, ranks


def delays_of(const int64_t[::1] call, const int64_t[::1] region,
              const int64_t[::1] size_class, const int64_t[::1] sources,
              const int64_t[::1] dests, const double[::1] after):
    """Per moving call its delay: how long it took after it was ready beyond the
    fastest call of its kind (name, size class, sets of peers) over all ranks."""
    cdef int64_t n = len(call), i
    cdef Slot *s
    cdef Table kinds
    kind = np.empty(n, dtype=np.int64)
    delay = np.empty(n)
    cdef int64_t[::1] kind_v = kind
    cdef double[::1] delay_v = delay
    cdef double[::1] usual
    table_init(&kinds, 64)
    try:
        for i in range(n):
            s = table_slot(&kinds, (<uint64_t> region[call[i]] << 8) ^ <uint64_t> size_class[i],
                           (<uint64_t> (sources[i] + 1) << 32) ^ <uint64_t> (dests[i] + 1))
            if s.value < 0:
                s.value = kinds.n - 1
            kind_v[i] = s.value
        usual = np.full(kinds.n, np.inf)
    finally:
        free(kinds.slots)
    for i in range(n):
        if after[i] < usual[kind_v[i]]:
            usual[kind_v[i]] = after[i]
    for i in range(n):
        delay_v[i] = after[i] - usual[kind_v[i]]
    return delay


def instructions(t, moving: dict, ranks: dict, posted_of, live, names: dict, coll: dict,
                 double speed, bint as_traced):
    """Every rank's instruction fields (one array per field of
    :data:`~pevpm.vm.kernel.arrays.INSTRUCTION`, the ranks' codes side by
    side), where each rank's code starts, the Waits' requests and per rank the
    computation and sleep and the delays it was given."""
    cdef const int64_t[::1] rank_starts = t.rank_starts, region = t.region
    cdef const int64_t[::1] event_starts = t.event_starts, kind = t.kind, peer = t.peer
    cdef const int64_t[::1] tag = t.tag, size = t.size, request = t.request
    cdef const int64_t[::1] posted_v = posted_of
    cdef const uint8_t[::1] live_v = live.view(np.uint8)
    cdef const int64_t[::1] m_call = moving["call"], m_coll = moving["collective"]
    cdef const int8_t[::1] m_shape = moving["shape"]
    cdef const double[::1] m_comp = moving["computing"], m_slept = moving["slept"]
    cdef const double[::1] m_delay = moving["delay"]
    cdef const double[::1] lead = ranks["lead"], tail_comp = ranks["tail_computing"]
    cdef const double[::1] tail_slept = ranks["tail_slept"]
    cdef const int32_t[::1] send_name = names["send"]
    cdef const int8_t[::1] issend = names["issend"]
    cdef int32_t recv_id = names["MPI_Recv"], irecv_id = names["MPI_Irecv"]
    cdef int32_t isend_id = names["MPI_Isend"], issend_id = names["MPI_Issend"]
    cdef int32_t sendrecv_id = names["MPI_Sendrecv"], wait_id = names["MPI_Wait"]
    cdef int32_t waitall_id = names["MPI_Waitall"]
    cdef const int32_t[::1] coll_name = coll["name"]
    cdef const int64_t[::1] coll_size = coll["size"], coll_root = coll["root"]
    cdef int numprocs = t.numprocs
    cdef int64_t nmoving = len(moving["call"]), ncalls = len(t.region)
    cdef int64_t i, k, e, r, p, at, nreq = 0, nsplit = 0, j, s_e, r_e, extra
    cdef int shape
    cdef int8_t serial_flag = 1 if as_traced else 0
    # the Waits' requests: each call's live completions, its Isends' first
    first = np.zeros(nmoving, dtype=np.int64)
    count = np.zeros(nmoving, dtype=np.int64)
    split = np.zeros(nmoving, dtype=np.int8)
    cdef int64_t[::1] first_v = first, count_v = count
    cdef int8_t[::1] split_v = split
    cdef int64_t total_live = 0
    for e in range(len(t.kind)):
        total_live += live_v[e]
    for i in range(nmoving):
        if m_shape[i] == S_EXCHANGE:
            e = event_starts[m_call[i]]
            split_v[i] = tag[e] != tag[e + 1]
            nsplit += split_v[i]
    requests = np.empty(total_live + 2 * nsplit, dtype=np.int64)
    cdef int64_t[::1] req = requests
    p = 0
    for k in range(ncalls):
        while p < nmoving and m_call[p] < k:
            p += 1
        if p < nmoving and m_call[p] == k:
            first_v[p] = nreq
        for e in range(event_starts[k], event_starts[k + 1]):
            if live_v[e] and kind[e] == K_SEND_DONE:
                req[nreq] = request[e]
                nreq += 1
        for e in range(event_starts[k], event_starts[k + 1]):
            if live_v[e] and kind[e] == K_IRECV:
                req[nreq] = request[e]
                nreq += 1
        if p < nmoving and m_call[p] == k:
            count_v[p] = nreq - first_v[p]
    # where each rank's code starts
    offsets = np.zeros(numprocs + 1, dtype=np.int64)
    cdef int64_t[::1] off = offsets
    i = 0
    for r in range(numprocs):
        off[r + 1] = off[r] + (lead[r] > 0) + (tail_comp[r] > 0) + (tail_slept[r] > 0)
        while i < nmoving and m_call[i] < rank_starts[r + 1]:
            off[r + 1] += ((m_comp[i] > 0) + (m_slept[i] > 0) + 1 + 2 * split_v[i]
                           + (m_delay[i] > 0))
            i += 1
    cdef int64_t n = off[numprocs]
    fields = {"op": np.full(n, OP_SERIAL, np.int8), "name": np.zeros(n, np.int32),
              "flag": np.zeros(n, np.int8), "seconds": np.zeros(n)}
    for name in ("size", "tag", "recv_size", "recv_tag", "first"):
        fields[name] = np.zeros(n, np.int64)
    for name in ("peer", "src", "count"):
        fields[name] = np.zeros(n, np.int32)
    fields["request"] = np.full(n, -1, np.int64)
    fields["call"] = np.full(n, -1, np.int32)
    cdef int8_t[::1] f_op = fields["op"], f_flag = fields["flag"]
    cdef int32_t[::1] f_name = fields["name"]
    cdef double[::1] f_seconds = fields["seconds"]
    cdef int64_t[::1] f_size = fields["size"], f_tag = fields["tag"]
    cdef int64_t[::1] f_rsize = fields["recv_size"], f_rtag = fields["recv_tag"]
    cdef int64_t[::1] f_request = fields["request"], f_first = fields["first"]
    cdef int32_t[::1] f_peer = fields["peer"], f_src = fields["src"]
    cdef int32_t[::1] f_count = fields["count"], f_call = fields["call"]
    computed = np.zeros(numprocs)
    delayed = np.zeros(numprocs)
    cdef double[::1] computed_v = computed, delayed_v = delayed
    cdef double acc, acc_delay
    i, j = 0, 0
    for r in range(numprocs):
        at = off[r]
        if lead[r] > 0:
            f_seconds[at], f_flag[at] = lead[r], 1
            at += 1
        acc, acc_delay = 0.0, 0.0
        while i < nmoving and m_call[i] < rank_starts[r + 1]:
            k = m_call[i]
            if m_comp[i] > 0:
                f_seconds[at], f_flag[at] = m_comp[i] / speed, serial_flag
                at += 1
            if m_slept[i] > 0:
                f_seconds[at], f_flag[at] = m_slept[i], 1
                at += 1
            acc += m_comp[i] if m_comp[i] > 0 else 0.0
            acc += m_slept[i] if m_slept[i] > 0 else 0.0
            f_call[at] = k - rank_starts[r]
            e = event_starts[k]
            shape = m_shape[i]
            if shape == S_BSEND or shape == S_BRECV or shape == S_NBSEND:
                f_op[at] = OP_RECV if shape == S_BRECV else OP_SEND
                f_flag[at] = shape != S_NBSEND
                f_name[at] = (recv_id if shape == S_BRECV else send_name[region[k]]
                              if shape == S_BSEND else issend_id if issend[region[k]]
                              else isend_id)
                f_size[at], f_peer[at], f_tag[at] = size[e], peer[e], tag[e]
                if shape == S_NBSEND:
                    f_request[at] = request[e]
            elif shape == S_NBRECV:
                f_op[at], f_name[at], f_request[at] = OP_RECV, irecv_id, request[e]
                e = posted_v[e]
                f_size[at], f_peer[at], f_tag[at] = size[e], peer[e], tag[e]
            elif shape == S_COLL:
                f_op[at], f_name[at] = OP_COLLECTIVE, coll_name[m_coll[i]]
                f_size[at], f_peer[at] = coll_size[m_coll[i]], coll_root[m_coll[i]]
            elif shape == S_WAITS:
                f_op[at] = OP_WAIT
                f_name[at] = wait_id if count_v[i] == 1 else waitall_id
                f_first[at], f_count[at] = first_v[i], count_v[i]
            else:                       # an exchange: its send and its receive
                s_e, r_e = (e, e + 1) if kind[e] == K_SEND else (e + 1, e)
                if not split_v[i]:
                    f_op[at], f_name[at] = OP_SENDRECV, sendrecv_id
                    f_size[at], f_peer[at], f_tag[at] = size[s_e], peer[s_e], tag[s_e]
                    f_rsize[at], f_src[at], f_rtag[at] = size[r_e], peer[r_e], tag[r_e]
                else:                   # tags differ: an Irecv, an Isend and their Waitall
                    extra = total_live + 2 * j
                    f_op[at], f_name[at] = OP_RECV, irecv_id
                    f_size[at], f_peer[at], f_tag[at] = size[r_e], peer[r_e], tag[r_e]
                    f_request[at] = -(extra + 3)
                    at += 1
                    f_op[at], f_name[at], f_call[at] = OP_SEND, isend_id, k - rank_starts[r]
                    f_size[at], f_peer[at], f_tag[at] = size[s_e], peer[s_e], tag[s_e]
                    f_request[at] = -(extra + 2)
                    at += 1
                    f_op[at], f_name[at], f_call[at] = OP_WAIT, waitall_id, k - rank_starts[r]
                    f_first[at], f_count[at] = extra, 2
                    req[extra], req[extra + 1] = -(extra + 2), -(extra + 3)
                    j += 1
            at += 1
            if m_delay[i] > 0:
                f_seconds[at], f_flag[at] = m_delay[i], 1
                at += 1
                acc_delay += m_delay[i]
            else:
                acc_delay += 0.0
            i += 1
        if tail_comp[r] > 0:
            f_seconds[at], f_flag[at] = tail_comp[r] / speed, serial_flag
            at += 1
        if tail_slept[r] > 0:
            f_seconds[at], f_flag[at] = tail_slept[r], 1
        computed_v[r] = ((acc + (tail_comp[r] if tail_comp[r] > 0 else 0.0))
                         + (tail_slept[r] if tail_slept[r] > 0 else 0.0))
        delayed_v[r] = acc_delay
    return fields, offsets, requests, computed, delayed


def shapes(t):
    """Per call its shape (what its MPI records make of it; -1: a mix replay
    does not take), as fast.py's ``_Calls`` gives it."""
    cdef const int64_t[::1] event_starts = t.event_starts, kind = t.kind
    cdef int64_t k, e
    out = np.empty(len(t.region), dtype=np.int8)
    cdef int8_t[::1] shape = out
    cdef int counts[7]
    for k in range(len(t.region)):
        counts[0] = counts[1] = counts[2] = counts[3] = counts[4] = counts[5] = 0
        counts[6] = 0
        for e in range(event_starts[k], event_starts[k + 1]):
            counts[kind[e]] += 1
        shape[k] = shape_of(counts)
    return out


cdef inline int shape_of(int *counts) noexcept:
    """A call's shape from how many records of each kind it holds."""
    cdef int total = counts[0] + counts[1] + counts[2] + counts[3] + counts[4] + counts[5] \
        + counts[6]
    if total > 0 and counts[K_SEND_DONE] + counts[K_IRECV] == total:
        return S_WAITS
    if total == 0:
        return S_EMPTY
    if total == 2 and counts[K_SEND] == 1 and counts[K_RECV] == 1:
        return S_EXCHANGE
    if total != 1:
        return -1
    return (S_COLL if counts[K_COLLECTIVE] else S_BSEND if counts[K_SEND]
            else S_BRECV if counts[K_RECV] else S_NBSEND if counts[K_ISEND]
            else S_NBRECV if counts[K_POSTED] else -1)
