# The incremental max-min network (fastflows.pyx), for the compiled core to
# call without Python: FluidNetwork.add_c / advance_c / next_c / step_c /
# end_c, and the waiter of a flow (Flow.waiter, Flow.key).

cdef struct Flow:
    int first           # its links: hops[first .. first + length)
    int length
    double weight
    double start
    double size
    double left         # bytes left at ``since``
    double rate
    double since
    double end          # once it has ended
    int at              # its place in the end heap, -1: none
    int seen            # stamp: reached by the current re-rating
    int fixed           # stamp: rate fixed by the current filling
    char state          # PENDING, TRANSIT or ENDED
    int waiter          # the caller's: who waits for its end (-1: nobody)
    double key          # the caller's: when that one expects it
    double base         # the caller's: seconds its message takes beside the flow


cdef struct Hop:
    int link
    int slot            # the flow's index in the link's users


cdef struct Timed:
    double time
    int flow


cdef class FluidNetwork:
    cdef int nlinks
    cdef double *bandwidth
    cdef double *latency        # NULL: no latencies given
    cdef double weight_s        # < 0: all flows weigh alike
    cdef readonly double now    # settled: no flow starts before it; the run is there
    cdef Flow *flows
    cdef int nflows, capflows
    cdef Hop *hops
    cdef int nhops, caphops
    # per link
    cdef int **users            # the flows in transit on it
    cdef int *nusers
    cdef int *capusers
    cdef int *reached           # stamps
    cdef double *spare
    cdef double *total
    cdef int *count
    cdef int *component         # the links of the current re-rating
    cdef int stamp
    cdef int *members           # the flows of the current re-rating
    cdef int nmembers, capmembers
    cdef int *touched           # stamps: level changed by the link filled now
    cdef int *changed           # those links
    cdef int filled             # the stamp of the link filled now
    cdef double *level          # a link's level while it is filled
    cdef int *place             # its place in ``order``, -1: none, -2: left out
    cdef int *order             # heap of the links to fill, by (level, link id)
    # heaps of (time, flow): starts to come; ends at the current rates, one
    # entry per flow in transit with a rate, placed by Flow.at
    cdef Timed *pending
    cdef int npending, cappending
    cdef Timed *endheap
    cdef int nends, capends
    # the flows that ended at the last step
    cdef int *done
    cdef int ndone, capdone
    cdef long long nsteps, nrated, nreached

    cdef int add_c(self, const int *links, int n, double start, double size) except -1
    cdef void advance_c(self, double to) noexcept
    cdef double next_c(self) noexcept
    cdef int step_c(self) except -1
    cdef double end_c(self, int flow) except? -1.0
    cdef bint ended_c(self, int flow) noexcept
    cdef int _reach(self, int f, int n) noexcept
    cdef int _rerate(self, double event, int n) except -1
    cdef int _rated(self, int f, double rate, double event) except -1
    cdef int _push_end(self, int f) except -1
    cdef void _drop_end(self, int f) noexcept
    cdef void _sift(self, int i) noexcept
    cdef void _order(self, int i, int n) noexcept
    cdef void _unorder(self, int link, int *n) noexcept
    cdef void _leave_out(self, int f) noexcept
    cdef int _join(self, int f) except -1
    cdef void _leave(self, int f) noexcept
