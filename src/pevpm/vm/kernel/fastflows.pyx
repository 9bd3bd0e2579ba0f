# cython: boundscheck=False, wraparound=False, cdivision=True
"""Max-min fair rates in C: :func:`pevpm.vm.kernel.maxmin.max_min_rates` and
:func:`pevpm.vm.kernel.maxmin.flow_until_next` compiled.

The same progressive filling as the Python function, with the same
arithmetic in the same order -- links filled in the order of their
(level, link id), each link's flows in the order they were given -- so the
rates are the same to the bit, and the same dict order (the order flows were
fixed in), which the network's later steps depend on.

>>> max_min_rates([100.0, 10.0], [(0,), (0, 1), (1,)], {0: 95.0, 1: 5.0, 2: 5.0},
...               [1.0, 1.0, 1.0])
{1: 5.0, 2: 5.0, 0: 95.0}
"""

from libc.math cimport INFINITY
from libc.stdlib cimport free, malloc


cdef struct Entry:
    double level
    long link           # the link's id: ties go to the lower id
    int at              # its index here


cdef inline bint _before(Entry *a, Entry *b) noexcept:
    return a.level < b.level or (a.level == b.level and a.link < b.link)


cdef void _push(Entry *heap, int *n, Entry e) noexcept:
    cdef int i = n[0], parent
    n[0] += 1
    while i > 0:
        parent = (i - 1) >> 1
        if not _before(&e, &heap[parent]):
            break
        heap[i] = heap[parent]
        i = parent
    heap[i] = e


cdef Entry _pop(Entry *heap, int *n) noexcept:
    cdef Entry top = heap[0], last
    cdef int i = 0, child
    n[0] -= 1
    last = heap[n[0]]
    while True:
        child = 2 * i + 1
        if child >= n[0]:
            break
        if child + 1 < n[0] and _before(&heap[child + 1], &heap[child]):
            child += 1
        if not _before(&heap[child], &last):
            break
        heap[i] = heap[child]
        i = child
    heap[i] = last
    return top


def max_min_rates(list bandwidth, list routes, dict flows, list weights):
    """Each flow's weighted max-min fair rate: ``flows`` maps flow ids
    (indices of ``routes`` and ``weights``) to anything, ``bandwidth`` is
    per link id."""
    cdef int nf = len(flows), nl = 0, hops = 0, f, k, j, a, b, nheap = 0
    cdef dict index = {}
    ids = list(flows)
    for flow in ids:
        hops += len(<tuple> routes[flow])
    cdef int *first = <int *> malloc((nf + 1) * sizeof(int))
    cdef int *route = <int *> malloc(max(hops, 1) * sizeof(int))
    cdef long *link_id = <long *> malloc(max(hops, 1) * sizeof(long))
    cdef double *spare = <double *> malloc(max(hops, 1) * sizeof(double))
    cdef int *count = <int *> malloc(max(hops, 1) * sizeof(int))
    cdef double *total = <double *> malloc(max(hops, 1) * sizeof(double))
    cdef double *weight = <double *> malloc(max(nf, 1) * sizeof(double))
    cdef int *ustart = <int *> malloc((hops + 1) * sizeof(int))
    cdef int *users = <int *> malloc(max(hops, 1) * sizeof(int))
    cdef char *fixed = <char *> malloc(max(nf, 1))
    cdef Entry *heap = <Entry *> malloc(max(2 * hops + 1, 1) * sizeof(Entry))
    cdef Entry e
    cdef double level, rate
    rates = {}
    try:
        if (first == NULL or route == NULL or link_id == NULL or spare == NULL
                or count == NULL or ustart == NULL or users == NULL or fixed == NULL
                or heap == NULL or total == NULL or weight == NULL):
            raise MemoryError()
        j = 0
        for f in range(nf):                 # links numbered in order of first use
            first[f] = j
            fixed[f] = 0
            weight[f] = weights[ids[f]]
            for link in <tuple> routes[ids[f]]:
                at = index.get(link)
                if at is None:
                    at = index[link] = nl
                    link_id[nl] = link
                    spare[nl] = bandwidth[link]
                    count[nl] = 0
                    nl += 1
                route[j] = at
                count[<int> at] += 1
                j += 1
        first[nf] = j
        ustart[0] = 0
        for k in range(nl):
            ustart[k + 1] = ustart[k] + count[k]
        for k in range(nl):
            count[k] = 0
        for f in range(nf):                 # each link's flows in the order given
            for j in range(first[f], first[f + 1]):
                k = route[j]
                users[ustart[k] + count[k]] = f
                count[k] += 1
        for k in range(nl):
            total[k] = 0.0
            for a in range(ustart[k], ustart[k + 1]):
                total[k] += weight[users[a]]
            e.level, e.link, e.at = spare[k] / total[k], link_id[k], k
            _push(heap, &nheap, e)
        while nheap > 0:
            e = _pop(heap, &nheap)
            if count[e.at] == 0 or e.level != spare[e.at] / total[e.at]:
                continue                    # stale: the link's level has risen since
            level = e.level if e.level > 0.0 else 0.0
            for a in range(ustart[e.at], ustart[e.at + 1]):
                f = users[a]
                if fixed[f]:
                    continue
                fixed[f] = 1
                rate = weight[f] * level
                rates[ids[f]] = rate
                for b in range(first[f], first[f + 1]):
                    k = route[b]
                    spare[k] -= rate
                    total[k] -= weight[f]
                    count[k] -= 1
                    if k != e.at and count[k]:
                        _push(heap, &nheap, Entry(spare[k] / total[k], link_id[k], k))
        return rates
    finally:
        free(first)
        free(route)
        free(link_id)
        free(spare)
        free(count)
        free(total)
        free(weight)
        free(ustart)
        free(users)
        free(fixed)
        free(heap)


def flow_until_next(dict rates, dict left, double now, double start):
    """The next event and the flows ending there, the bytes left run on to it
    (maxmin.flow_until_next, the same sums in the same order)."""
    cdef double event = start, rate, t, span
    for flow, r in rates.items():
        rate = r
        if rate > 0:
            t = now + <double> left[flow] / rate
            if t < event:
                event = t
    if event == INFINITY:
        return event, []
    finished = []
    for flow, r in rates.items():
        rate = r
        if rate > 0 and now + <double> left[flow] / rate <= event:
            finished.append(flow)
    span = event - now
    for flow, r in rates.items():
        left[flow] = <double> left[flow] - <double> r * span
    return event, finished
