# cython: boundscheck=False, wraparound=False, cdivision=True
"""Max-min sharing of network links in C, re-rated incrementally:
:class:`FluidNetwork`, the compiled counterpart of
:class:`pevpm.vm.kernel.maxmin.MaxMinNetwork` (the Python reference), which
the engines take whenever this extension is built (``maxmin.network_for``).
"""

from libc.math cimport INFINITY
from libc.stdlib cimport calloc, free, malloc, realloc

from pevpm.errors import SimulationError


cdef enum:
    PENDING = 0
    TRANSIT = 1
    ENDED = 2


cdef inline bint _sooner(Timed *a, Timed *b) noexcept:
    return a.time < b.time or (a.time == b.time and a.flow < b.flow)


cdef void _tpush(Timed *heap, int *n, Timed e) noexcept:
    cdef int i = n[0], parent
    n[0] += 1
    while i > 0:
        parent = (i - 1) >> 1
        if not _sooner(&e, &heap[parent]):
            break
        heap[i] = heap[parent]
        i = parent
    heap[i] = e


cdef Timed _tpop(Timed *heap, int *n) noexcept:
    cdef Timed top = heap[0], last
    cdef int i = 0, child
    n[0] -= 1
    last = heap[n[0]]
    while True:
        child = 2 * i + 1
        if child >= n[0]:
            break
        if child + 1 < n[0] and _sooner(&heap[child + 1], &heap[child]):
            child += 1
        if not _sooner(&heap[child], &last):
            break
        heap[i] = heap[child]
        i = child
    heap[i] = last
    return top


cdef int _grow(void **array, int *cap, int need, size_t item) except -1:
    """Make ``*array`` hold at least ``need`` items (doubling)."""
    cdef int size = cap[0] if cap[0] > 0 else 16
    cdef void *grown
    if need <= cap[0]:
        return 0
    while size < need:
        size *= 2
    grown = realloc(array[0], size * item)
    if grown == NULL:
        raise MemoryError()
    array[0], cap[0] = grown, size
    return 0


cdef class _Starts:
    """``FluidNetwork.starts[flow]``: when a flow started (read-only)."""
    cdef FluidNetwork net

    def __getitem__(self, int flow):
        if not 0 <= flow < self.net.nflows:
            raise IndexError(flow)
        return self.net.flows[flow].start


cdef class FluidNetwork:
    """:class:`pevpm.vm.kernel.maxmin.MaxMinNetwork` in C, re-rating only
    what a start or end touches.

    The same questions and answers (``add``, ``advance``, ``next_event``,
    ``step``, ``ended``, ``end``, ``load``, ``weights``, ``starts``, ``now``)
    and the same model, after SimGrid's LMM solver and its set of modified
    constraints: when flows start or end, only the links reachable from
    theirs through flows in transit (the part of the network they share) are
    filled again; a flow elsewhere keeps its rate, its bytes left and its
    end.  A flow's bytes are brought up to date only when its rate changes,
    so an end may differ from the Python network's in the last bits (that
    one runs every flow on at every event).  The compiled core calls the C
    methods (``add_c``, ``advance_c``, ``next_c``, ``step_c``, ``end_c``)
    without Python and keeps in each flow the decision waiting for it
    (``Flow.waiter``, ``Flow.key``).

    >>> net = FluidNetwork([100.0, 50.0])
    >>> a, b = net.add((0,), 0.0, 100), net.add((0, 1), 0.0, 50)
    >>> net.end(a)                     # not started: alone, it would end at 1 s
    1.0
    >>> net.step(), net.end(a), net.end(b)    # both start at 0: 50 B/s each
    ([], 2.0, 1.0)
    >>> net.step(), net.now, net.end(a)       # b ends; a takes the whole link
    ([1], 1.0, 1.5)
    """

    def __init__(self, bandwidth, latency=None, weight_s=None):
        from pevpm.vm.kernel.flows import checked_bandwidth
        checked = checked_bandwidth(bandwidth)
        cdef int k, n = len(checked)
        self.nlinks = n
        self.bandwidth = <double *> calloc(max(n, 1), sizeof(double))
        self.latency = <double *> calloc(max(n, 1), sizeof(double))
        self.spare = <double *> calloc(max(n, 1), sizeof(double))
        self.total = <double *> calloc(max(n, 1), sizeof(double))
        self.count = <int *> calloc(max(n, 1), sizeof(int))
        self.reached = <int *> calloc(max(n, 1), sizeof(int))
        self.component = <int *> calloc(max(n, 1), sizeof(int))
        self.touched = <int *> calloc(max(n, 1), sizeof(int))
        self.level = <double *> calloc(max(n, 1), sizeof(double))
        self.place = <int *> calloc(max(n, 1), sizeof(int))
        self.order = <int *> calloc(max(n, 1), sizeof(int))
        self.changed = <int *> calloc(max(n, 1), sizeof(int))
        self.nusers = <int *> calloc(max(n, 1), sizeof(int))
        self.capusers = <int *> calloc(max(n, 1), sizeof(int))
        self.users = <int **> calloc(max(n, 1), sizeof(int *))
        if (self.bandwidth == NULL or self.latency == NULL or self.spare == NULL
                or self.total == NULL or self.count == NULL or self.reached == NULL
                or self.component == NULL or self.nusers == NULL or self.capusers == NULL
                or self.users == NULL or self.touched == NULL or self.changed == NULL
                or self.level == NULL or self.place == NULL or self.order == NULL):
            raise MemoryError()
        for k in range(n):
            self.bandwidth[k] = checked[k]
            self.latency[k] = 0.0 if latency is None else float(latency[k])
        self.weight_s = -1.0 if weight_s is None else float(weight_s)

    def __dealloc__(self):
        cdef int k
        if self.users != NULL:
            for k in range(self.nlinks):
                free(self.users[k])
        free(self.users)
        free(self.bandwidth)
        free(self.latency)
        free(self.spare)
        free(self.total)
        free(self.count)
        free(self.reached)
        free(self.component)
        free(self.touched)
        free(self.changed)
        free(self.nusers)
        free(self.capusers)
        free(self.flows)
        free(self.hops)
        free(self.pending)
        free(self.endheap)
        free(self.done)
        free(self.level)
        free(self.place)
        free(self.order)
        free(self.members)

    # ------------------------------------------------------------ Python API
    def add(self, route, double start, size):
        """A flow of ``size`` bytes over the links ``route`` from ``start`` (at
        least the settled time); its number."""
        cdef int n = len(route), k
        cdef int *links = <int *> malloc(max(n, 1) * sizeof(int))
        if links == NULL:
            raise MemoryError()
        try:
            for k in range(n):
                links[k] = route[k]
                if not 0 <= links[k] < self.nlinks:
                    raise IndexError(f"link {links[k]} of {self.nlinks}")
            return self.add_c(links, n, start, float(size) if size > 0 else 0.0)
        finally:
            free(links)

    def advance(self, double to):
        """Settle time up to ``to``: no flow will be added that starts earlier."""
        self.advance_c(to)

    def next_event(self):
        """When the next flow starts or ends at the rates now (inf: none)."""
        return self.next_c()

    def step(self):
        """Run to the next start or end (settling its time); the flows that ended there."""
        cdef int k, n = self.step_c()
        return [self.done[k] for k in range(n)]

    def ended(self, int flow):
        """Whether ``flow`` has ended (its end is then final)."""
        self._check(flow)
        return self.ended_c(flow)

    def end(self, int flow):
        """``flow``'s end once it has ended; before, when it would end at the
        rates now (not started: alone on its links, the soonest it can)."""
        self._check(flow)
        return self.end_c(flow)

    def load(self, int link, double at):
        """The inverse of ``link``'s bandwidth (as MaxMinNetwork.load)."""
        return 1.0 / self.bandwidth[link]

    @property
    def weights(self):
        return [self.flows[f].weight for f in range(self.nflows)]

    @property
    def starts(self):
        view = _Starts()
        view.net = self
        return view

    @property
    def counts(self):
        """The work done so far: events run, flows given a rate, links in the parts re-rated."""
        return {"events": self.nsteps, "rated": self.nrated, "links": self.nreached}

    def _check(self, int flow):
        if not 0 <= flow < self.nflows:
            raise IndexError(flow)

    # ------------------------------------------------------------ C API
    cdef int add_c(self, const int *links, int n, double start, double size) except -1:
        """A flow over ``links[:n]`` (link ids); its number."""
        cdef int f = self.nflows, k, link
        cdef double penalty = 0.0
        cdef Flow *fl
        _grow(<void **> &self.flows, &self.capflows, f + 1, sizeof(Flow))
        _grow(<void **> &self.hops, &self.caphops, self.nhops + n, sizeof(Hop))
        self.nflows = f + 1
        fl = &self.flows[f]
        fl.first = self.nhops
        fl.length = 0
        for k in range(n):
            link = links[k]
            penalty += self.latency[link] + self.weight_s / self.bandwidth[link]
            if self.bandwidth[link] != INFINITY:
                self.hops[self.nhops].link = link
                self.nhops += 1
                fl.length += 1
        fl.weight = 1.0 / penalty if self.weight_s >= 0 and penalty > 0 else 1.0
        fl.start = start if start > self.now else self.now
        fl.size = size if fl.length else 0.0
        fl.rate = fl.left = fl.since = fl.end = fl.key = fl.base = 0.0
        fl.seen = fl.fixed = 0
        fl.at = fl.waiter = -1
        if fl.size == 0.0:
            fl.state = ENDED
            fl.end = fl.start
            return f
        fl.state = PENDING
        _grow(<void **> &self.pending, &self.cappending, self.npending + 1, sizeof(Timed))
        _tpush(self.pending, &self.npending, Timed(fl.start, f))
        return f

    cdef void advance_c(self, double to) noexcept:
        """Settle time up to ``to``."""
        if to > self.now:
            self.now = to

    cdef double next_c(self) noexcept:
        """The time of the next start or end (INFINITY: none)."""
        cdef double event = INFINITY
        if self.nends:
            event = self.endheap[0].time
        if self.npending and self.pending[0].time < event:
            event = self.pending[0].time
        return event

    cdef double end_c(self, int flow) except? -1.0:
        """``flow``'s end, or when it would end at the rates now (see ``end``)."""
        cdef Flow *fl = &self.flows[flow]
        cdef double least = INFINITY
        cdef int j
        if fl.state == ENDED:
            return fl.end
        if fl.state == TRANSIT:
            if not fl.rate > 0.0:
                raise SimulationError(f"flow {flow} gets no bandwidth")
            return fl.since + fl.left / fl.rate
        for j in range(fl.first, fl.first + fl.length):
            if self.bandwidth[self.hops[j].link] < least:
                least = self.bandwidth[self.hops[j].link]
        return fl.start + fl.size / least

    cdef bint ended_c(self, int flow) noexcept:
        return self.flows[flow].state == ENDED

    # ------------------------------------------------------------ the run
    cdef int step_c(self) except -1:
        """Run to the next start or end, re-rating what it touches; how many
        flows ended there (``done[:n]``)."""
        cdef double event = self.next_c()
        cdef int f, n = 0
        cdef Flow *fl
        self.ndone = 0
        if event == INFINITY:
            stuck = [f for f in range(self.nflows) if self.flows[f].state == TRANSIT]
            if stuck:
                raise SimulationError(f"flows {stuck} get no bandwidth")
            return 0
        if event > self.now:
            self.now = event
        self.stamp += 1
        while self.nends and self.endheap[0].time <= event:
            f = self.endheap[0].flow
            self._drop_end(f)
            fl = &self.flows[f]
            fl.state, fl.end = ENDED, event
            _grow(<void **> &self.done, &self.capdone, self.ndone + 1, sizeof(int))
            self.done[self.ndone] = f
            self.ndone += 1
            self._leave(f)
            n = self._reach(f, n)
        while self.npending and self.pending[0].time <= event:
            f = _tpop(self.pending, &self.npending).flow
            fl = &self.flows[f]
            fl.state, fl.left, fl.since, fl.rate = TRANSIT, fl.size, event, -1.0
            self._join(f)
            n = self._reach(f, n)
        self.nsteps += 1
        self._rerate(event, n)
        return self.ndone

    cdef int _reach(self, int f, int n) noexcept:
        """Add ``f``'s links not yet reached to the component (``n`` so far),
        none of them left out of the filling yet."""
        cdef Flow *fl = &self.flows[f]
        cdef int j, link
        for j in range(fl.first, fl.first + fl.length):
            link = self.hops[j].link
            if self.reached[link] != self.stamp:
                self.reached[link] = self.stamp
                self.component[n] = link
                self.place[link] = -1
                n += 1
        return n

    cdef int _rerate(self, double event, int n) except -1:
        """Fill again the links reachable from ``component[:n]`` through flows
        in transit; a flow whose rate changes is run on to ``event`` at its
        old rate and gets a new end."""
        cdef int i = 0, a, b, f, link, other, nheap = 0, nchanged
        cdef int *on
        cdef Flow *fl
        cdef double level, rate, total
        self.nmembers = 0
        while i < n:                        # the component, breadth first
            link = self.component[i]
            i += 1
            on = self.users[link]
            total = 0.0
            for a in range(self.nusers[link]):
                fl = &self.flows[on[a]]
                total += fl.weight
                if fl.seen != self.stamp:
                    fl.seen = self.stamp
                    _grow(<void **> &self.members, &self.capmembers, self.nmembers + 1,
                          sizeof(int))
                    self.members[self.nmembers] = on[a]
                    self.nmembers += 1
                    n = self._reach(on[a], n)
                    self._leave_out(on[a])
            self.spare[link] = self.bandwidth[link]
            self.count[link] = self.nusers[link]
            self.total[link] = total
        self.nreached += n
        for i in range(n):
            link = self.component[i]
            if self.count[link] and self.place[link] == -1:
                self.level[link] = self.spare[link] / self.total[link]
                self.order[nheap] = link
                self.place[link] = nheap
                nheap += 1
                self._order(nheap - 1, nheap)
        while nheap > 0:                    # the link that fills first
            link = self.order[0]
            level = self.level[link] if self.level[link] > 0.0 else 0.0
            self._unorder(link, &nheap)
            on = self.users[link]
            self.filled += 1
            nchanged = 0
            for a in range(self.nusers[link]):
                f = on[a]
                fl = &self.flows[f]
                if fl.fixed == self.stamp:
                    continue
                fl.fixed = self.stamp
                self.nrated += 1
                rate = fl.weight * level
                for b in range(fl.first, fl.first + fl.length):
                    other = self.hops[b].link
                    self.spare[other] -= rate
                    self.total[other] -= fl.weight
                    self.count[other] -= 1
                    if self.place[other] >= 0 and self.touched[other] != self.filled:
                        self.touched[other] = self.filled
                        self.changed[nchanged] = other
                        nchanged += 1
                self._rated(f, rate, event)
            # each link's new level, moved to its place (the Python network
            # pushes it anew, and skips the old entries as stale)
            for a in range(nchanged):
                other = self.changed[a]
                if self.count[other]:
                    self.level[other] = self.spare[other] / self.total[other]
                    self._order(self.place[other], nheap)
                elif self.place[other] >= 0:
                    self._unorder(other, &nheap)
        return 0

    cdef void _leave_out(self, int f) noexcept:
        """Keep out of the filling the links that only flow ``f`` crosses
        (``place`` -2) but the one that may set its rate: a link of one flow
        stays at that flow's bandwidth over its weight until the flow is
        fixed, and a link ``f`` shares with others never rises above it (its
        spare is at most its bandwidth, its weight at least ``f``'s), so
        only ``f``'s narrowest lone link (the lowest id among equals) can
        fill first, and that one only if it is narrower than every link
        ``f`` shares."""
        cdef Flow *fl = &self.flows[f]
        cdef int j, link, lone = -1
        cdef double shared = INFINITY
        for j in range(fl.first, fl.first + fl.length):
            link = self.hops[j].link
            if self.nusers[link] > 1:
                if self.bandwidth[link] < shared:
                    shared = self.bandwidth[link]
            elif lone < 0 or self.bandwidth[link] < self.bandwidth[lone] or (
                    self.bandwidth[link] == self.bandwidth[lone] and link < lone):
                lone = link
        for j in range(fl.first, fl.first + fl.length):
            link = self.hops[j].link
            if self.nusers[link] == 1 and (link != lone or self.bandwidth[link] >= shared):
                self.place[link] = -2

    cdef void _unorder(self, int link, int *n) noexcept:
        """Take ``link`` out of the heap of links to fill."""
        cdef int i = self.place[link]
        self.place[link] = -1
        n[0] -= 1
        if i == n[0]:
            return
        self.order[i] = self.order[n[0]]
        self.place[self.order[i]] = i
        self._order(i, n[0])

    cdef void _order(self, int i, int n) noexcept:
        """Move the link at ``order[i]`` up or down to its place (heap of ``n``)."""
        cdef int link = self.order[i], parent, child, other
        cdef double mine = self.level[link]
        while i > 0:
            parent = (i - 1) >> 1
            other = self.order[parent]
            if not (mine < self.level[other] or (mine == self.level[other] and link < other)):
                break
            self.order[i] = other
            self.place[other] = i
            i = parent
        while True:
            child = 2 * i + 1
            if child >= n:
                break
            if child + 1 < n and (
                    self.level[self.order[child + 1]] < self.level[self.order[child]]
                    or (self.level[self.order[child + 1]] == self.level[self.order[child]]
                        and self.order[child + 1] < self.order[child])):
                child += 1
            other = self.order[child]
            if not (self.level[other] < mine or (self.level[other] == mine and other < link)):
                break
            self.order[i] = other
            self.place[other] = i
            i = child
        self.order[i] = link
        self.place[link] = i

    cdef int _rated(self, int f, double rate, double event) except -1:
        """Give flow ``f`` its new ``rate`` from ``event`` on (logged)."""
        cdef Flow *fl = &self.flows[f]
        if fl.rate == rate:
            return 0
        if fl.rate >= 0.0:                  # not started at this event
            fl.left -= fl.rate * (event - fl.since)
            if fl.left < 0.0:
                fl.left = 0.0
            fl.since = event
        fl.rate = rate
        if rate > 0.0:
            self._push_end(f)
        else:
            self._drop_end(f)
        return 0

    cdef int _push_end(self, int f) except -1:
        """Put (or move) ``f``'s end, at its rate from ``since``, in the end heap."""
        cdef Flow *fl = &self.flows[f]
        if fl.at < 0:
            _grow(<void **> &self.endheap, &self.capends, self.nends + 1, sizeof(Timed))
            fl = &self.flows[f]
            fl.at = self.nends
            self.nends += 1
        self.endheap[fl.at] = Timed(fl.since + fl.left / fl.rate, f)
        self._sift(fl.at)
        return 0

    cdef void _drop_end(self, int f) noexcept:
        """Take ``f``'s end out of the end heap, if there."""
        cdef int i = self.flows[f].at
        if i < 0:
            return
        self.flows[f].at = -1
        self.nends -= 1
        if i == self.nends:
            return
        self.endheap[i] = self.endheap[self.nends]
        self.flows[self.endheap[i].flow].at = i
        self._sift(i)

    cdef void _sift(self, int i) noexcept:
        """Move the end heap's entry ``i`` up or down to its place."""
        cdef Timed e = self.endheap[i]
        cdef Timed *heap = self.endheap
        cdef int parent, child
        while i > 0:
            parent = (i - 1) >> 1
            if not _sooner(&e, &heap[parent]):
                break
            heap[i] = heap[parent]
            self.flows[heap[i].flow].at = i
            i = parent
        while True:
            child = 2 * i + 1
            if child >= self.nends:
                break
            if child + 1 < self.nends and _sooner(&heap[child + 1], &heap[child]):
                child += 1
            if not _sooner(&heap[child], &e):
                break
            heap[i] = heap[child]
            self.flows[heap[i].flow].at = i
            i = child
        heap[i] = e
        self.flows[e.flow].at = i

    # ------------------------------------------------------------ links
    cdef int _join(self, int f) except -1:
        """Put ``f`` on its links' lists of flows in transit."""
        cdef Flow *fl = &self.flows[f]
        cdef int j, link
        for j in range(fl.first, fl.first + fl.length):
            link = self.hops[j].link
            _grow(<void **> &self.users[link], &self.capusers[link], self.nusers[link] + 1,
                  sizeof(int))
            self.hops[j].slot = self.nusers[link]
            self.users[link][self.nusers[link]] = f
            self.nusers[link] += 1
        return 0

    cdef void _leave(self, int f) noexcept:
        """Take ``f`` off its links' lists (the last flow of a list fills its place)."""
        cdef Flow *fl = &self.flows[f]
        cdef Flow *moved
        cdef int j, k, link, at, last, g
        for j in range(fl.first, fl.first + fl.length):
            link, at = self.hops[j].link, self.hops[j].slot
            self.hops[j].slot = -1          # gone: a later hop on the same link never matches it
            self.nusers[link] -= 1
            last = self.nusers[link]
            if at == last:
                continue
            g = self.users[link][last]
            self.users[link][at] = g
            moved = &self.flows[g]
            for k in range(moved.first, moved.first + moved.length):
                if self.hops[k].link == link and self.hops[k].slot == last:
                    self.hops[k].slot = at
                    break
