# cython: language_level=3, cdivision=True
"""The compiled core of the virtual machine: engine.py's algorithm in C data.

Same process sweeps and match sweeps as :mod:`pevpm.vm.kernel.engine` (read that
first: this file follows it method for method), with

* instructions as C structs (operands folded per rank are C numbers; the
  rest stay Python closures, called with the rank's environment);
* sends and receives as 104-byte C records in one array, recycled by
  reference count through a free list;
* matching without Python objects: send queues per (destination, source)
  and receive buckets per (rank, context, source, tag) are linked lists of
  records whose ends sit in C hash tables (a send also joins its
  destination's list, which ANY_SOURCE receives scan); each rank's
  outstanding requests and current wait are int arrays;
* the decision heap (4-ary) and the contention scoreboard (its per-link
  pair counts in a hash table) in C;
* Hockney, LogGP and constant message times computed in C; any other
  communication model is called from here, drawing from the same generator;
* Condition choices drawn straight from the generator's bit generator (the
  numbers ``rng.random()`` gives).

Anything this core does not handle (MPI_Test, slices, a run left with
requests outstanding, an error of any kind) raises :class:`Unsupported`; the
adapter (:mod:`pevpm.vm.kernel.fastengine`) then reruns the reference engine from
the same generator state, so results and error messages are the
reference's, and notes on the result that the reference ran and why.
Hardware and measured collectives run here (their completion times come
from the collectives package, drawn from the run's generator), and so do
random draws with invariant arguments (in C, by numpy's samplers).
"""

cimport cython
from cpython.exc cimport PyErr_CheckSignals
from cpython.pycapsule cimport PyCapsule_GetPointer
from cpython.dict cimport PyDict_GetItem
from cpython.float cimport PyFloat_AS_DOUBLE, PyFloat_CheckExact
from cpython.long cimport PyLong_AsLongLongAndOverflow, PyLong_CheckExact
from cpython.object cimport PyObject
from libc.limits cimport INT_MAX, INT_MIN, LLONG_MIN
from libc.math cimport INFINITY, NAN, fmod, isfinite, isnan, pow
from libc.stdint cimport int64_t, uint64_t, uint32_t, UINT32_MAX
from libc.stdlib cimport calloc, free, malloc, qsort, realloc
from libc.string cimport memcpy, memmove, memset

from pevpm.model.ast import ROOTED_COLLECTIVES, status_fields
from pevpm.model.expr import ANY_SOURCE as _ANY_SOURCE, ANY_TAG as _ANY_TAG, PROC_NULL as _PROC_NULL
from pevpm.model.expr import RNG_NAME
from pevpm.vm.kernel import collectives, engine, matching
from pevpm.vm.kernel import program as vm
from pevpm.vm.kernel.instructions import Collective, Exchange, Loop, Message, Serial, Until
from pevpm.vm.kernel.fastflows cimport FluidNetwork
from pevpm.vm.kernel.maxmin import network_for
from pevpm.vm.kernel.result import CollectiveRecord, MessageRecord

import gc
import time
from array import array

import numpy as np

# Every 65,536 events the core lets other threads run and checks for Ctrl-C
# (a fraction of a microsecond per check).
DEF SIGNAL_CHECK_MASK = 0xFFFF


class Unsupported(Exception):
    """The core cannot run this (part of the) model; use the reference engine."""


cdef extern from *:
    """
    typedef struct {
        void *state;
        uint64_t (*next_uint64)(void *st);
        uint32_t (*next_uint32)(void *st);
        double (*next_double)(void *st);
        uint64_t (*next_raw)(void *st);
    } pevpm_bitgen_t;
    """
    ctypedef struct pevpm_bitgen_t:
        void *state
        double (*next_double)(void *st) nogil


# numpy's own samplers (libnpyrandom), on the run's bit generator: the numbers
# Generator.uniform, .exponential and .gamma give, in the same order.
cdef extern from "stdlib.h":
    int posix_memalign(void **memptr, size_t alignment, size_t size) nogil


cdef extern from *:
    void __builtin_prefetch(const void *address) noexcept nogil
    bint __builtin_add_overflow(long long a, long long b, long long *r) noexcept nogil
    bint __builtin_sub_overflow(long long a, long long b, long long *r) noexcept nogil
    bint __builtin_mul_overflow(long long a, long long b, long long *r) noexcept nogil


cdef extern from *:
    """
    #if !defined(__SIZEOF_INT128__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    #error "fastcore's decision heap needs unsigned __int128 on a little-endian machine"
    #endif
    /* A decision heap entry (req, seq, time: 16 bytes, little-endian) read as
       one unsigned 128-bit number orders by time, then seq, for times that
       are not negative (their bits order as their values): one comparison. */
    typedef unsigned __int128 __attribute__((may_alias)) pevpm_key_t;

    /* The 4-ary heap ``h`` of ``n`` entries less its root: the hole at the
       root goes down to a leaf along the earliest children (picked without
       branches: which child is earliest is hard to predict), and the last
       entry rises from there (Floyd's order: it usually belongs near the
       bottom).  Equal entries are the same decision twice: either may go. */
    static void pevpm_heap_pop(void *heap, int n) {
        pevpm_key_t *h = (pevpm_key_t *) heap, last = h[n], a, b;
        int i = 0, first, child, x, y, k;
        for (;;) {
            first = 4 * i + 1;
            if (first >= n)
                break;
            if (first + 4 <= n) {
                x = h[first + 1] < h[first] ? first + 1 : first;
                y = h[first + 3] < h[first + 2] ? first + 3 : first + 2;
                a = h[x];
                b = h[y];
                child = b < a ? y : x;
            } else {
                child = first;
                for (k = first + 1; k < n; k++)
                    child = h[k] < h[child] ? k : child;
            }
            h[i] = h[child];
            i = child;
        }
        while (i > 0 && last < h[(i - 1) >> 2]) {
            h[i] = h[(i - 1) >> 2];
            i = (i - 1) >> 2;
        }
        h[i] = last;
    }

    /* Put entry ``d`` in the hole at ``i``, moving it up past later parents. */
    static void pevpm_heap_up(void *heap, int i, const void *d) {
        pevpm_key_t *h = (pevpm_key_t *) heap, v = *(const pevpm_key_t *) d;
        while (i > 0 && v < h[(i - 1) >> 2]) {
            h[i] = h[(i - 1) >> 2];
            i = (i - 1) >> 2;
        }
        h[i] = v;
    }
    """
    void pevpm_heap_pop(void *heap, int n) noexcept nogil
    void pevpm_heap_up(void *heap, int i, const void *d) noexcept nogil


cdef extern from "numpy/random/distributions.h":
    ctypedef struct bitgen_t:
        pass
    double random_uniform(bitgen_t *bitgen_state, double lower, double range) nogil
    double random_exponential(bitgen_t *bitgen_state, double scale) nogil
    double random_gamma(bitgen_t *bitgen_state, double shape, double scale) nogil


cdef extern from *:
    """
    /* An open-addressing hash table from 64-bit keys to two ints (linear
       probing).  Keys are packed numbers below UINT64_MAX - 1: UINT64_MAX
       marks an empty slot, UINT64_MAX - 1 a deleted one (a tombstone, which
       look-ups pass over and additions reuse).  Live entries and tombstones
       fill at most half the slots: past that the table is rebuilt without
       tombstones, twice the size if a quarter of it is live. */
    typedef struct { uint64_t key; int v1; int v2; } pevpm_hent_t;
    typedef struct { pevpm_hent_t *e; size_t mask; size_t n; size_t used; } pevpm_htab_t;
    #define PEVPM_EMPTY UINT64_MAX
    #define PEVPM_TOMB (UINT64_MAX - 1)

    static inline size_t pevpm_mix(uint64_t x) {
        x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ULL;
        x ^= x >> 27; x *= 0x94d049bb133111ebULL;
        return (size_t) (x ^ (x >> 31));
    }

    /* Where a key's probe starts: keys in one aligned run of 64 get
       neighbouring slots (a rank's queues from consecutive sources share
       cache lines), each run a scattered start. */
    static inline size_t pevpm_home(uint64_t key, size_t mask) {
        return (pevpm_mix(key >> 6) + (size_t) (key & 63)) & mask;
    }

    static int pevpm_ht_init(pevpm_htab_t *t, size_t cap) {
        size_t i;
        t->e = (pevpm_hent_t *) malloc(cap * sizeof(pevpm_hent_t));
        if (t->e == NULL) return -1;
        for (i = 0; i < cap; i++) t->e[i].key = PEVPM_EMPTY;
        t->mask = cap - 1;
        t->n = t->used = 0;
        return 0;
    }

    static void pevpm_ht_free(pevpm_htab_t *t) { free(t->e); t->e = NULL; }

    static inline pevpm_hent_t *pevpm_ht_find(pevpm_htab_t *t, uint64_t key) {
        size_t i = pevpm_home(key, t->mask);
        while (t->e[i].key != PEVPM_EMPTY) {
            if (t->e[i].key == key) return &t->e[i];
            i = (i + 1) & t->mask;
        }
        return NULL;
    }

    static pevpm_hent_t *pevpm_ht_add(pevpm_htab_t *t, uint64_t key);

    /* The entry for ``key``, a new one (v1 = v2 = -1) if it has none; NULL:
       out of memory.  One probe: a new key takes the first tombstone on it. */
    static inline pevpm_hent_t *pevpm_ht_get(pevpm_htab_t *t, uint64_t key) {
        size_t i = pevpm_home(key, t->mask), tomb = (size_t) -1;
        while (t->e[i].key != PEVPM_EMPTY) {
            if (t->e[i].key == key) return &t->e[i];
            if (t->e[i].key == PEVPM_TOMB && tomb == (size_t) -1) tomb = i;
            i = (i + 1) & t->mask;
        }
        if (tomb == (size_t) -1 && 2 * (t->used + 1) > t->mask + 1)
            return pevpm_ht_add(t, key);        /* rebuilds first */
        if (tomb != (size_t) -1) i = tomb; else t->used++;
        t->e[i].key = key;
        t->e[i].v1 = -1;
        t->e[i].v2 = -1;
        t->n++;
        return &t->e[i];
    }

    /* A new entry for a key not in the table (v1 = v2 = -1); NULL: out of memory. */
    static pevpm_hent_t *pevpm_ht_add(pevpm_htab_t *t, uint64_t key) {
        size_t i;
        if (2 * (t->used + 1) > t->mask + 1) {
            pevpm_htab_t rebuilt;
            size_t cap = 4 * (t->n + 1) > t->mask + 1 ? 2 * (t->mask + 1) : t->mask + 1;
            if (pevpm_ht_init(&rebuilt, cap) < 0) return NULL;
            for (i = 0; i <= t->mask; i++) {
                if (t->e[i].key < PEVPM_TOMB) {
                    size_t j = pevpm_home(t->e[i].key, rebuilt.mask);
                    while (rebuilt.e[j].key != PEVPM_EMPTY) j = (j + 1) & rebuilt.mask;
                    rebuilt.e[j] = t->e[i];
                }
            }
            rebuilt.n = rebuilt.used = t->n;
            free(t->e);
            *t = rebuilt;
        }
        i = pevpm_home(key, t->mask);
        while (t->e[i].key < PEVPM_TOMB) i = (i + 1) & t->mask;
        if (t->e[i].key == PEVPM_EMPTY) t->used++;
        t->e[i].key = key;
        t->e[i].v1 = -1;
        t->e[i].v2 = -1;
        t->n++;
        return &t->e[i];
    }

    /* Delete an entry: a tombstone, or, where no probe passes beyond it (the
       next slot is empty), an empty slot, as are the tombstones just before. */
    static inline void pevpm_ht_del(pevpm_htab_t *t, pevpm_hent_t *h) {
        size_t i = (size_t) (h - t->e);
        t->n--;
        if (t->e[(i + 1) & t->mask].key != PEVPM_EMPTY) {
            h->key = PEVPM_TOMB;
            return;
        }
        do {
            t->e[i].key = PEVPM_EMPTY;
            t->used--;
            i = (i - 1) & t->mask;
        } while (t->e[i].key == PEVPM_TOMB);
    }

    /* Start loading the slot where a look-up of ``key`` begins. */
    static inline void pevpm_ht_prefetch(pevpm_htab_t *t, uint64_t key) {
        __builtin_prefetch(&t->e[pevpm_home(key, t->mask)]);
    }

    /* A growable array of ints; 0, or -1 when out of memory. */
    static inline int pevpm_push(int **v, int *n, int *cap, int x) {
        if (*n == *cap) {
            int c = *cap < 8 ? 8 : 2 * *cap;
            int *w = (int *) realloc(*v, (size_t) c * sizeof(int));
            if (w == NULL) return -1;
            *v = w;
            *cap = c;
        }
        (*v)[(*n)++] = x;
        return 0;
    }
    """
    ctypedef struct pevpm_hent_t:
        uint64_t key
        int v1
        int v2
    ctypedef struct pevpm_htab_t:
        pevpm_hent_t *e
        size_t mask
        size_t n
        size_t used
    int pevpm_ht_init(pevpm_htab_t *t, size_t cap)
    void pevpm_ht_free(pevpm_htab_t *t)
    pevpm_hent_t *pevpm_ht_find(pevpm_htab_t *t, uint64_t key)
    pevpm_hent_t *pevpm_ht_add(pevpm_htab_t *t, uint64_t key)
    pevpm_hent_t *pevpm_ht_get(pevpm_htab_t *t, uint64_t key)
    void pevpm_ht_del(pevpm_htab_t *t, pevpm_hent_t *h)
    void pevpm_ht_prefetch(pevpm_htab_t *t, uint64_t key)
    uint64_t PEVPM_TOMB
    int pevpm_push(int **v, int *n, int *cap, int x)


cdef long ANY_SOURCE = _ANY_SOURCE
cdef long ANY_TAG = _ANY_TAG
cdef long PROC_NULL = _PROC_NULL

cdef int SERIAL = vm.SERIAL, SEND = vm.SEND, RECV = vm.RECV, SENDRECV = vm.SENDRECV
cdef int WAIT = vm.WAIT, TEST = vm.TEST, COLLECTIVE = vm.COLLECTIVE, LOOP = vm.LOOP
cdef int NEXT = vm.NEXT, RUNON = vm.RUNON, CONDITION = vm.CONDITION, JUMP = vm.JUMP
cdef int NEXT_MARKED = vm.NEXT_MARKED, REPEAT = vm.REPEAT, UNTIL = vm.UNTIL

cdef int USER = matching.USER, COLLECTIVE_CONTEXT = matching.COLLECTIVE
cdef int SUBCOMM = matching.SUBCOMM
cdef long SUBCOMM_TAG = matching.SUBCOMM_TAG
cdef int EVENT_LIMIT = 1, WALL_LIMIT = 2       # count_event's answers
cdef int COMM_CONSTANT = 0, COMM_HOCKNEY = 1, COMM_LOGGP = 2, COMM_PYTHON = 3
cdef int PLAN_FIXED = 0, PLAN_ONE = 1, PLAN_MIX = 2, PLAN_PYTHON = 3
cdef enum:
    PLAN_SLOTS = 1024           # entries of the direct-mapped plan cache
    INDEX_BUCKETS = 1024        # an inverse CDF's bisection table (a power of two)
    PACKED_RANKS = 46340        # up to here (2P)(P + 1) receive-bucket keys fit in 32 bits
    MAX_RANKS = 1482909         # beyond PACKED_RANKS they fit in 42 bits (2P(P + 1) < 2**42)
    MAX_TAG_IDS = 4194302       # and a tag's number in the other 22 (2**22 - 2: below NO_KEY)
    IDLE_PER_RANK = 16          # emptied queues stay in a table up to this many per rank
    INLINE_WAITS = 4            # a wait's records held in its rank's object
    CHANNELS = 4                # send queues to a rank, and its receive buckets, in its Queues
    BOX_LIMIT = 262144          # collective instruction boxes per generation

cdef uint64_t NO_KEY = 0xFFFFFFFFFFFFFFFD   # PEVPM_TOMB - 1: above every packed key
REPEAT_CAP = "a Repeat whose cap is not a whole number >= 1, or is reached"


cdef class Plan:
    """How one message time is drawn (a profile model's ``draw_plan``): fixed,
    or one uniform through one or two empirical inverse CDFs (np.interp's
    arithmetic, so the numbers are the reference's to the bit)."""
    cdef int kind
    cdef double value, w
    cdef InverseCdf inv0, inv1

    def __init__(self, plan):
        if plan is None:
            self.kind = PLAN_PYTHON
        elif plan[0] == "fixed":
            self.kind, self.value = PLAN_FIXED, plan[1]
        elif plan[0] == "one":
            self.kind = PLAN_ONE
            self.inv0 = inverse_cdf(plan[2], plan[1])
        else:
            self.kind, self.w = PLAN_MIX, plan[1]
            self.inv0 = inverse_cdf(plan[3], plan[2])
            self.inv1 = inverse_cdf(plan[5], plan[4])


cdef dict _INVERSES = {}       # (id(cdf), id(knots)) -> (cdf, knots, their InverseCdf)


cdef InverseCdf inverse_cdf(cdf, knots):
    """The InverseCdf of these arrays, one per pair of array objects across
    plans and runs (a profile's plans for different contention levels share
    distributions: one bisection table each stays in cache)."""
    key = (id(cdf), id(knots))
    known = _INVERSES.get(key)
    if known is not None and (<tuple> known)[0] is cdf and (<tuple> known)[1] is knots:
        return <InverseCdf> (<tuple> known)[2]
    if len(_INVERSES) > 4096:
        _INVERSES.clear()
    inverse = InverseCdf(cdf, knots)
    _INVERSES[key] = (cdf, knots, inverse)
    return inverse


cdef class InverseCdf:
    """``np.interp(u, cdf, knots)`` for a uniform ``u``, step for step as numpy
    computes it, with the bisection started from a table: ``start[k]`` is
    how many CDF values are at most ``k / INDEX_BUCKETS``, so a ``u`` in
    bucket ``k`` is bisected between ``start[k]`` and ``start[k + 1]`` only
    (the same index as a bisection of the whole array, found in a step or
    two instead of ten).

    >>> InverseCdf([0.0, 0.5, 1.0], [1.0, 2.0, 4.0]).at(0.75)
    3.0
    """
    cdef object xp_array, fp_array
    cdef const double *xp
    cdef const double *fp
    cdef Py_ssize_t n
    cdef int start[INDEX_BUCKETS + 1]

    def __init__(self, cdf, knots):
        cdef const double[::1] xp = np.ascontiguousarray(cdf, dtype=np.float64)
        cdef const double[::1] fp = np.ascontiguousarray(knots, dtype=np.float64)
        cdef Py_ssize_t k, j = 0
        if xp.shape[0] != fp.shape[0] or xp.shape[0] == 0:
            raise Unsupported("an empirical CDF that is not increasing")
        self.xp_array, self.fp_array = xp, fp       # keep the buffers alive
        self.xp, self.fp, self.n = &xp[0], &fp[0], xp.shape[0]
        for k in range(INDEX_BUCKETS + 1):
            while j < self.n and self.xp[j] <= <double> k / INDEX_BUCKETS:
                j += 1
            self.start[k] = j

    def at(self, double x):
        return self.interp(x)

    @cython.boundscheck(False)
    @cython.wraparound(False)
    cdef double interp(self, double x) noexcept:
        cdef const double *xp = self.xp
        cdef const double *fp = self.fp
        cdef Py_ssize_t n = self.n, lo, hi, mid, j
        cdef long bucket
        cdef double slope, res
        if x != x:
            return x
        if n == 1:
            return fp[0]
        if x < xp[0]:
            return fp[0]
        if x > xp[n - 1]:
            return fp[n - 1]
        lo, hi = 0, n                   # j: the last index with xp[j] <= x
        if 0.0 <= x < 1.0:              # bisect within x's bucket only
            bucket = <long> (x * INDEX_BUCKETS)
            lo, hi = self.start[bucket], self.start[bucket + 1]
        while lo < hi:
            mid = (lo + hi) >> 1
            if xp[mid] <= x:
                lo = mid + 1
            else:
                hi = mid
        j = lo - 1
        if j == n - 1:
            return fp[j]
        if xp[j] == x:
            return fp[j]
        slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j])
        res = slope * (x - xp[j]) + fp[j]
        if res != res:
            res = slope * (x - xp[j + 1]) + fp[j + 1]
            if res != res and fp[j] == fp[j + 1]:
                res = fp[j]
        return res


cdef int *_ints(Py_ssize_t n, int value) except NULL:
    """A malloc'ed array of ``n`` ints, all ``value`` (free it)."""
    cdef int *a = <int *> malloc(max(n, 1) * sizeof(int))
    cdef Py_ssize_t k
    if a == NULL:
        raise MemoryError()
    for k in range(n):
        a[k] = value
    return a


# ------------------------------------------------------------------ instructions

cdef union Operands:
    int iv[10]          # per operand slot (its field number in the record): a constant
    double dv[5]        # SERIAL: dv[0] a constant time, or a draw's two parameters;
                        #   LOOP: dv[0] a constant count
    long long lv[5]     # an array code's (INTEGER_NAMES): SEND/RECV: lv[M_REQUEST_LV] its
                        #   request; WAIT: lv[0], lv[1] its first request and their count


cdef struct Ins:
    # One cache line (64 bytes, the user codes' arrays aligned to lines): a
    # rank just woken reads its next instruction with one miss at most.
    unsigned char op
    unsigned char blocking  # SEND/RECV: blocking; SERIAL: a sleep; COLLECTIVE: rooted
    unsigned char named     # SEND/RECV: the call names a request (reading it touches the
                            #   record), INTEGER_NAMES: an integer in u.lv; WAIT: the same
    unsigned char draw      # SERIAL: its time is a draw (DRAW_*) with parameters dv[0], dv[1];
                            #   SEND/RECV/SENDRECV: bit k: slot k's constant peer is relative,
                            #   the rank's own plus iv[k] modulo the ranks (_shared_codes),
                            #   or with XOR_PEERS too, iv[k] XOR the rank's virtual number
                            #   (_class_expansion)
    unsigned char status    # RECV: the matched sender and tag are bound to its status names
    unsigned char konst     # bit k: operand slot k is a valid constant in iv/dv
    unsigned short opid     # index of the MPI op name in OP_NAMES
    int target              # JUMP target, LOOP exit, NEXT and UNTIL body
    int on                  # SERIAL: EVERYWHERE, or its ``on`` value's number (place_number)
    void **cx               # NULL, or per operand slot its CExpr (NULL: constant or closure)
    Operands u


cdef enum:
    XOR_PEERS = 0x80            # Ins.draw: relative peers are XORs (no operand slot is 7)
    NO_DRAW = 0
    DRAW_UNIFORM = 1            # dv: low, dv2: high
    DRAW_EXPONENTIAL = 2        # dv: mean
    DRAW_GAMMA = 3              # dv: shape, dv2: scale
DRAW_KINDS = {"uniform": DRAW_UNIFORM, "exponential": DRAW_EXPONENTIAL, "gamma": DRAW_GAMMA}


OP_NAMES = []
cdef dict OP_IDS = {}
SYNCHRONOUS = frozenset({"MPI_Ssend", "MPI_Issend"})
cdef enum:
    MAX_OPS = 4096
cdef char _synchronous[MAX_OPS]     # per op id: a synchronous send (never eager)


cdef int op_id(str name) except -1:
    i = OP_IDS.get(name)
    if i is None:
        if len(OP_NAMES) == MAX_OPS:
            raise Unsupported(f"more than {MAX_OPS:,} distinct MPI operation names")
        i = OP_IDS[name] = len(OP_NAMES)
        _synchronous[i] = name in SYNCHRONOUS
        OP_NAMES.append(name)
    return i


cdef int SENDRECV_OP = op_id("MPI_Sendrecv")
cdef enum:
    INTEGER_NAMES = 2           # Ins.named: an array code's integer request names, in u.lv

# Operand slots: an operand's field number in its instruction record
# (pevpm.vm.kernel.instructions), where Ins keeps it (iv, konst and cx by slot).
cdef int S_TIME = Serial._fields.index("time")
cdef int L_COUNT = Loop._fields.index("count"), U_UNTIL = Until._fields.index("until")
cdef int M_SIZE = Message._fields.index("size"), M_PEER = Message._fields.index("peer")
cdef int M_TAG = Message._fields.index("tag")
cdef int X_SIZE = Exchange._fields.index("size"), X_DST = Exchange._fields.index("dst")
cdef int X_RECV_SIZE = Exchange._fields.index("recv_size")
cdef int X_SRC = Exchange._fields.index("src")
cdef int X_SEND_TAG = Exchange._fields.index("send_tag")
cdef int X_RECV_TAG = Exchange._fields.index("recv_tag")
cdef int C_SIZE = Collective._fields.index("size"), C_ROOT = Collective._fields.index("root")
# A message's integer request: the long long past its three int operands (iv[6], iv[7]).
cdef int M_REQUEST_LV = Message._fields.index("request") // 2
if M_REQUEST_LV * 2 <= max(M_SIZE, M_PEER, M_TAG):
    raise ImportError("fastcore: a message's request would share a C slot with an operand")


# ------------------------------------------------------------------ expressions
# Operands that change during a run (a loop index, a receive status) written
# by pevpm.vm.kernel.cexpr as postfix operations, evaluated here with Python's
# arithmetic on C integers and doubles; anything the C form cannot promise
# to give exactly as the closure does falls back to the closure.

cdef enum:
    X_NUM = 0
    X_NAME = 1
    X_NEG = 2
    X_NOT = 3
    X_BIN = 4
    X_PICK = 5
    X_MIN = 6
    X_MAX = 7
    X_STACK = 32                # deepest stack evaluated in C
cdef dict X_CODES = {"num": X_NUM, "name": X_NAME, "neg": X_NEG, "not": X_NOT, "bin": X_BIN,
                     "pick": X_PICK, "min": X_MIN, "max": X_MAX}
cdef dict X_BINARY = {op: k for k, op in enumerate(
    ("+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||"))}
cdef long long EXACT = 1LL << 53   # integers up to this meet doubles exactly
cdef long long EXACT_SQRT = 1LL << 26  # ... and their squares too (a gamma's sd * sd)



cdef struct XVal:
    int isf                     # a double (d), else an integer (i)
    long long i
    double d


cdef struct XOp:
    int code
    int arg                     # X_BIN: the operator's number
    XVal v                      # X_NUM: the number
    PyObject *name              # X_NAME: the key (kept alive by CExpr.names)


cdef class CExpr:
    """One operand's postfix operations (:func:`pevpm.vm.kernel.cexpr.postfix`) in C."""
    cdef XOp *ops
    cdef int n                  # operations before the draw, if any
    cdef int draw               # NO_DRAW, or the DRAW_* the last operation makes
    cdef int nargs              # the draw's arguments (on the stack)
    cdef list names

    def __cinit__(self, tuple code):
        cdef int k, depth = 0, deepest = 0
        self.names = []
        self.ops = <XOp *> malloc(max(len(code), 1) * sizeof(XOp))
        if self.ops == NULL:
            raise MemoryError()
        self.draw = NO_DRAW
        self.n = len(code)
        if code and code[-1][0] == "draw":
            self.draw = DRAW_KINDS[code[-1][1]]
            self.n -= 1
        for k in range(self.n):
            op = code[k]
            self.ops[k].code = X_CODES[op[0]]
            self.ops[k].arg = 0
            self.ops[k].name = NULL
            if op[0] == "num":
                value = op[1]
                self.ops[k].v.isf = type(value) is float
                self.ops[k].v.i = value if type(value) is int else 0
                self.ops[k].v.d = value if type(value) is float else 0.0
                depth += 1
            elif op[0] == "name":
                self.names.append(op[1])
                self.ops[k].name = <PyObject *> op[1]
                depth += 1
            elif op[0] == "bin":
                self.ops[k].arg = X_BINARY[op[1]]
                depth -= 1
            elif op[0] == "pick":
                depth -= 2
            elif op[0] in ("min", "max"):
                depth -= 1
            deepest = max(deepest, depth)
        self.nargs = depth
        if deepest > X_STACK:
            raise ValueError("too deep")

    def __dealloc__(self):
        free(self.ops)


cdef inline double _xd(XVal *v) noexcept:
    return v.d if v.isf else <double> v.i


cdef inline bint _xmixed_exact(XVal *a, XVal *b) noexcept:
    """Whether a and b are both integers, or an integer meeting a double exactly."""
    if a.isf == b.isf:
        return True
    if a.isf:
        return -EXACT <= b.i <= EXACT
    return -EXACT <= a.i <= EXACT


cdef inline int _xless(XVal *a, XVal *b) noexcept:
    if not a.isf and not b.isf:
        return a.i < b.i
    return _xd(a) < _xd(b)


cdef int _xbinary(int op, XVal *a, XVal *b) noexcept:
    """a = a op b as Python and the model language compute it; 1: not in C."""
    cdef long long q, r
    cdef double x, y
    cdef bint ints = not a.isf and not b.isf
    if op >= 5 and op <= 10:            # comparisons
        if not _xmixed_exact(a, b):
            return 1
        if ints:
            q = (a.i == b.i if op == 5 else a.i != b.i if op == 6 else a.i < b.i if op == 7
                 else a.i <= b.i if op == 8 else a.i > b.i if op == 9 else a.i >= b.i)
        else:
            x, y = _xd(a), _xd(b)
            q = (x == y if op == 5 else x != y if op == 6 else x < y if op == 7
                 else x <= y if op == 8 else x > y if op == 9 else x >= y)
        a.isf, a.i = 0, q
        return 0
    if op == 11 or op == 12:            # && ||: both sides evaluated (no draws in them)
        q = (_xd(a) != 0) and (_xd(b) != 0) if op == 11 else (_xd(a) != 0) or (_xd(b) != 0)
        a.isf, a.i = 0, q
        return 0
    if (op == 3 or op == 4) and _xd(b) == 0:
        return 1                        # division by zero: the closure reports it
    if ints:
        if op == 0:
            if __builtin_add_overflow(a.i, b.i, &q):
                return 1
        elif op == 1:
            if __builtin_sub_overflow(a.i, b.i, &q):
                return 1
        elif op == 2:
            if __builtin_mul_overflow(a.i, b.i, &q):
                return 1
        else:
            if a.i == LLONG_MIN and b.i == -1:
                return 1
            q = a.i / b.i               # C truncates, as the model language does
            r = a.i % b.i
            if op == 4:
                q = r
        a.i = q
        return 0
    if not _xmixed_exact(a, b):
        return 1
    x, y = _xd(a), _xd(b)
    a.isf = 1
    a.d = (x + y if op == 0 else x - y if op == 1 else x * y if op == 2 else x / y if op == 3
           else fmod(x, y))
    return 0


cdef int xeval(CExpr x, dict env, XVal *stack) noexcept:
    """Run ``x``'s operations (its draw aside) on ``stack``: the values left
    on it, or -1 where the closure must evaluate instead."""
    cdef int k, top = 0, overflow
    cdef XOp *op
    cdef PyObject *found
    cdef XVal *a
    for k in range(x.n):
        op = &x.ops[k]
        if op.code == X_NUM:
            stack[top] = op.v
            top += 1
        elif op.code == X_NAME:
            found = PyDict_GetItem(env, <object> op.name)
            a = &stack[top]
            top += 1
            if found == NULL:
                return -1
            elif PyLong_CheckExact(<object> found):
                a.isf = 0
                a.i = PyLong_AsLongLongAndOverflow(<object> found, &overflow)
                if overflow:
                    return -1
            elif PyFloat_CheckExact(<object> found):
                a.isf = 1
                a.d = PyFloat_AS_DOUBLE(<object> found)
            else:
                return -1
        elif op.code == X_BIN:
            top -= 1
            if _xbinary(op.arg, &stack[top - 1], &stack[top]):
                return -1
        elif op.code == X_NEG:
            a = &stack[top - 1]
            if a.isf:
                a.d = -a.d
            elif a.i == LLONG_MIN:
                return -1
            else:
                a.i = -a.i
        elif op.code == X_NOT:
            a = &stack[top - 1]
            a.i = _xd(a) == 0
            a.isf = 0
        elif op.code == X_PICK:
            top -= 2
            stack[top - 1] = stack[top] if _xd(&stack[top - 1]) != 0 else stack[top + 1]
        else:                           # Python's min(a, b) keeps a unless b < a
            top -= 1
            if not _xmixed_exact(&stack[top - 1], &stack[top]):
                return -1
            if (_xless(&stack[top], &stack[top - 1]) if op.code == X_MIN
                    else _xless(&stack[top - 1], &stack[top])):
                stack[top - 1] = stack[top]
    return top


def evaluate_postfix(tuple code, dict env):
    """The value the core computes in C for :func:`pevpm.vm.kernel.cexpr.postfix`'s
    ``code`` (no draw) in ``env``, or None where it leaves the value to the
    closure.

    >>> evaluate_postfix((("name", "i"), ("num", 7), ("bin", "/")), {"i": -15})
    -2
    """
    cdef XVal stack[X_STACK]
    cdef CExpr x = CExpr(code)
    if x.draw or xeval(x, env, stack) != 1:
        return None
    if not stack[0].isf:
        return stack[0].i
    return stack[0].d if stack[0].d - stack[0].d == 0 else None


cdef class XSlots:
    """The C operands of one instruction, per operand slot (a Runon's: per arm);
    NULL: a constant, or left to its closure."""
    cdef void **cx
    cdef list keep

    def __cinit__(self, int n):
        self.cx = <void **> calloc(n, sizeof(void *))
        if self.cx == NULL:
            raise MemoryError()
        self.keep = []

    def __dealloc__(self):
        free(self.cx)


cdef XSlots _c_operands(Ins *i, ins):
    """Point ``i``'s changing operands that :mod:`pevpm.vm.kernel.cexpr` wrote at their
    C form; None when it has none."""
    cdef XSlots slots = None
    cdef int slot
    if i.op == RUNON:                   # its guards, arm by arm
        operands = [guard for guard, _ in ins.arms]
    else:
        operands = [None] * 7
        for name in vm.VALUE_FIELDS.get(i.op, ()):
            slot = ins._fields.index(name)
            if not (i.konst & (1 << slot) or (i.op == SERIAL and i.draw)):
                operands[slot] = getattr(ins, name)
    for slot, fn in enumerate(operands):
        code = getattr(fn, "c_code", None)
        if code is None:
            continue
        try:
            cx = CExpr(code)
        except ValueError:              # deeper than the C stack: the closure runs
            continue
        if slots is None:
            slots = XSlots(len(operands))
        slots.keep.append(cx)
        slots.cx[slot] = <void *> cx
    if slots is not None:
        i.cx = slots.cx
    return slots


cdef class InsBox:
    """One instruction tuple as a C instruction; equal tuples (a collective's
    expansions share theirs across ranks) share one box."""
    cdef Ins ins
    cdef readonly object py

    def __cinit__(self, py, bint collective):
        self.py = py
        _translate(&self.ins, py, collective)


cdef class Code:
    """One compiled code tuple as pointers to C instructions (shared by every
    rank that runs it): a user's code keeps its instructions side by side
    (a rank runs them in a row); a collective's point into shared boxes (its
    ranks' long codes repeat the same few instructions)."""
    cdef Ins **ins
    cdef Ins *own               # a user code's instructions, or NULL
    cdef int n
    cdef readonly object code   # the code tuple, or an array code (its records made when read)
    cdef list boxes             # keeps a collective's instructions alive (a box generation)
    cdef list exprs             # the XSlots of a user code's operands evaluated in C
    cdef const int64_t *reqids  # an array code's Waits' requests (in held)
    cdef object held
    cdef int xor_extra          # a class expansion's ranks folded away (XOR_PEERS)

    def __cinit__(self, code, bint collective, statuses=frozenset()):
        cdef int pc
        cdef InsBox box
        self.code = code
        self.n = len(code)
        self.own = NULL
        self.reqids = NULL
        self.ins = <Ins **> malloc(max(self.n, 1) * sizeof(Ins *))
        if self.ins == NULL:
            raise MemoryError()
        self.boxes = []
        self.exprs = []
        if not collective:
            if posix_memalign(<void **> &self.own, 64, max(self.n, 1) * sizeof(Ins)) != 0:
                self.own = NULL
                raise MemoryError()
            if type(code) is not tuple:
                _array_instructions(self, code)
                return
            last = None
            for pc in range(self.n):
                py = code[pc]
                if py is last:          # the same tuple again (a rank's skipped arms)
                    self.own[pc] = self.own[pc - 1]
                else:
                    _translate(&self.own[pc], py, False)
                    if py.op == RECV and py.request is not None:
                        self.own[pc].status = status_fields(py.request)[0] in statuses
                    slots = _c_operands(&self.own[pc], py)
                    if slots is not None:
                        self.exprs.append(slots)
                    last = py
                self.ins[pc] = &self.own[pc]
            return
        if len(_BOX_LIST) > BOX_LIMIT:
            _new_box_generation()
        self.boxes = _BOX_LIST          # every box this code points into
        last = None
        for pc in range(self.n):
            py = code[pc]
            if py is not last:          # a ring's steps repeat one instruction
                box = box_for(py)
                last = py
            self.ins[pc] = &box.ins

    def __dealloc__(self):
        free(self.ins)
        free(self.own)


# Collective instructions' boxes: a C table from the instruction tuple's
# address to the box's place in the current generation's list (the box keeps
# the tuple alive, so no other tuple takes its address meanwhile).  Past
# BOX_LIMIT boxes a new generation starts; codes keep their generation's list.
cdef pevpm_htab_t _box_index      # zeroed: no table until the first generation
cdef list _BOX_LIST = []
# A message step's fields but its place and statement (the last two, which
# the C instruction does not hold) -> the first such tuple, whose box every
# such step shares: a rank's three Allreduce places run one set of boxes.
cdef dict _SHAPES = {}
if Message._fields[-2:] != ("where", "stmt") or Exchange._fields[-2:] != ("where", "stmt"):
    raise ImportError("fastcore: a message record no longer ends with its where and stmt")


cdef int _new_box_generation() except -1:
    global _BOX_LIST, _SHAPES
    pevpm_ht_free(&_box_index)
    if pevpm_ht_init(&_box_index, 1024) < 0:
        raise MemoryError()
    _BOX_LIST = []
    _SHAPES = {}
    return 0


_new_box_generation()


cdef InsBox box_for(py):
    """The shared box of a collective's instruction ``py`` (in the current generation)."""
    if type(py) is Exchange or type(py) is Message:
        py = _SHAPES.setdefault((type(py),) + (<tuple> py)[:-2], py)
    cdef uint64_t key = <uint64_t> <size_t> <void *> py
    cdef pevpm_hent_t *entry = pevpm_ht_get(&_box_index, key)
    if entry == NULL:
        raise MemoryError()
    if entry.v1 >= 0:
        return <InsBox> _BOX_LIST[entry.v1]
    box = InsBox(py, True)
    entry.v1 = len(_BOX_LIST)
    _BOX_LIST.append(box)
    return box


cdef int EVERYWHERE = -1          # Ins.on of a Serial that runs on every rank
cdef dict _PLACES = {}              # a Serial's ``on`` value, or a rank's processor -> its number


cdef int place_number(value) except -2:
    """``value``'s number: equal values (a Serial's ``on``, a rank's processor
    name) get equal numbers, so the core compares them as ints."""
    try:
        return _PLACES.setdefault(value, len(_PLACES))
    except TypeError:
        raise Unsupported(f"a processor name that is not hashable ({value!r})") from None


cdef int _translate(Ins *i, ins, bint collective) except -1:
    i.op = ins.op
    i.konst = 0
    i.target = 0
    i.blocking = 0
    i.on = EVERYWHERE
    i.named = 0
    i.opid = 0
    i.u.dv[0] = i.u.dv[1] = 0.0
    i.draw = NO_DRAW
    i.status = 0
    i.cx = NULL
    op = i.op
    if op == SERIAL:
        value = getattr(ins.time, "value", None)
        plan = getattr(ins.time, "draw", None)
        if _is_number(value) and value >= 0:
            i.u.dv[0] = value
            i.konst = 1 << S_TIME
        elif plan is not None:          # program.drawn_fn: drawn here, in C
            i.draw = DRAW_KINDS[plan[0]]
            i.u.dv[0], i.u.dv[1] = plan[1], plan[2]
        i.blocking = 1 if ins.stmt is not None and ins.stmt.sleep else 0
        i.on = EVERYWHERE if ins.on is None else place_number(ins.on)
    elif op == SEND or op == RECV:
        i.opid = op_id(ins.call)
        i.blocking = 1 if ins.blocking else 0
        i.named = ins.request is not None
        _integer_slot(i, M_SIZE, ins.size, 1)
        _peer_slot(i, M_PEER, ins.peer, op == RECV)
        _integer_slot(i, M_TAG, ins.tag, 3 if collective else 0 if op == SEND else 2)
    elif op == SENDRECV:
        i.opid = op_id("MPI_Sendrecv")
        _integer_slot(i, X_SIZE, ins.size, 1)
        _peer_slot(i, X_DST, ins.dst, False)
        _integer_slot(i, X_RECV_SIZE, ins.recv_size, 1)
        _peer_slot(i, X_SRC, ins.src, True)
        _integer_slot(i, X_SEND_TAG, ins.send_tag, 3 if collective else 0)
        _integer_slot(i, X_RECV_TAG, ins.recv_tag, 3 if collective else 2)
    elif op == LOOP:
        i.target = ins.exit
        value = getattr(ins.count, "value", None)
        if _is_number(value) and value == int(value):
            i.u.dv[0] = value
            i.konst = 1 << L_COUNT
    elif op == NEXT or op == NEXT_MARKED:
        i.target = ins.body
    elif op == JUMP:
        i.target = ins.target
    elif op == UNTIL:
        i.target = ins.body
    elif op == RUNON:
        i.target = ins.exit
    elif op == WAIT:
        i.opid = op_id(ins.call)
    elif op == COLLECTIVE:
        i.opid = op_id(ins.call)
        i.blocking = ins.call in ROOTED_COLLECTIVES       # here: the call has a root
        for slot, fn in ((C_SIZE, ins.size), (C_ROOT, ins.root)):
            value = getattr(fn, "value", None)        # whole numbers, as at run time
            if type(value) is int and INT_MIN <= value <= INT_MAX:
                _put_integer(i, slot, value, 1)
    return 0


cdef long long loop_count(count) except -1:
    """A loop's count (a whole number) as a C integer."""
    if count > 1LL << 62:
        raise Unsupported("a loop of more than 2**62 iterations")
    return <long long> int(count)


cdef bint _is_number(value):
    return value is not None and (type(value) is int or type(value) is float)


cdef int _integer_slot(Ins *i, int slot, fn, int kind) except -1:
    """A record's whole-number operand kept as a constant (:func:`_put_integer`)
    where ``fn`` is a known number the core may keep: a whole one, an int unless
    a size (a float tag: the reference keeps it a float), within C's int (a size
    past 2 GiB is read from the closure; a tag fails there)."""
    value = getattr(fn, "value", None)
    if not _is_number(value) or value != int(value):
        return 0
    if kind != 1 and type(value) is not int:
        return 0
    if INT_MIN <= value <= INT_MAX:
        _put_integer(i, slot, <int64_t> int(value), kind)
    return 0


cdef int _peer_slot(Ins *i, int slot, fn, bint source) except -1:
    """A record's rank operand kept as a constant (:func:`_put_peer`) where
    ``fn`` is a known int (past every rank: the closure's value fails the check)."""
    value = getattr(fn, "value", None)
    if type(value) is int and INT_MIN <= value <= INT_MAX:
        _put_peer(i, slot, value, source)
    return 0


cdef inline void _put_integer(Ins *i, int slot, int64_t value, int kind) noexcept:
    """Keep ``value`` as ``slot``'s constant if the operand may be it: kind 0: a
    send's tag (>= 0), 1: a size or a collective's root (>= 0), 2: a receive's tag
    (or ANY_TAG), 3: a tag inside a collective (any whole number); within C's int."""
    if value < 0 and not (kind == 3 or (kind == 2 and value == ANY_TAG)):
        return
    if INT_MIN <= value <= INT_MAX:
        i.u.iv[slot] = <int> value
        i.konst |= 1 << slot


cdef inline void _put_peer(Ins *i, int slot, int64_t value, bint source) noexcept:
    """Keep rank ``value`` as ``slot``'s constant: a rank, MPI_PROC_NULL, or for a
    ``source`` MPI_ANY_SOURCE (the upper bound is checked per run)."""
    if value < 0 and not (value == PROC_NULL or (source and value == ANY_SOURCE)):
        return
    if value <= INT_MAX:
        i.u.iv[slot] = <int> value
        i.konst |= 1 << slot


@cython.boundscheck(False)
@cython.wraparound(False)
cdef int _array_instructions(Code c, code) except -1:
    """Fill ``c``'s instructions from an array code's fields
    (:class:`pevpm.vm.kernel.arrays.ArrayCode`) in one typed loop, no record made:
    operands are constants where they fit their C slots (as :func:`_translate`
    keeps a record's), the rest are read from the record when run."""
    f = code.fields
    cdef const signed char[::1] op = f["op"], flag = f["flag"]
    cdef const int[::1] name = f["name"]
    cdef const int64_t[::1] size = f["size"], tag = f["tag"], recv_size = f["recv_size"]
    cdef const int[::1] peer = f["peer"], src = f["src"], count = f["count"]
    cdef const int64_t[::1] recv_tag = f["recv_tag"], request = f["request"]
    cdef const int64_t[::1] first = f["first"]
    cdef const double[::1] seconds = f["seconds"]
    cdef const int64_t[::1] reqs = code.requests
    cdef int pc, nid, o, nnames = len(code.names)
    cdef Ins *i
    opids = [op_id(n) for n in code.names]
    cdef int[::1] opid = array("i", opids or [0])
    cdef signed char[::1] rooted = array("b", [n in ROOTED_COLLECTIVES for n in code.names]
                                         or [0])
    if len(reqs):
        c.reqids = &reqs[0]
    for pc in range(c.n):
        i = &c.own[pc]
        c.ins[pc] = i
        memset(i, 0, sizeof(Ins))
        o = op[pc]
        i.op = o
        i.on = EVERYWHERE
        if o == SERIAL:
            if seconds[pc] >= 0:
                i.u.dv[0] = seconds[pc]
                i.konst = 1 << S_TIME
            i.blocking = flag[pc] == 1
            continue
        if o == SENDRECV:
            i.opid = SENDRECV_OP
            _put_integer(i, X_SIZE, size[pc], 1)
            _put_peer(i, X_DST, peer[pc], False)
            _put_integer(i, X_RECV_SIZE, recv_size[pc], 1)
            _put_peer(i, X_SRC, src[pc], True)
            _put_integer(i, X_SEND_TAG, tag[pc], 0)
            _put_integer(i, X_RECV_TAG, recv_tag[pc], 2)
            continue
        nid = name[pc]
        if not 0 <= nid < nnames:
            raise ValueError(f"instruction {pc} names call {nid}, past the {nnames} names")
        i.opid = opid[nid]
        if o == SEND or o == RECV:
            i.blocking = flag[pc] == 1
            if request[pc] != -1:
                i.named = INTEGER_NAMES
                i.u.lv[M_REQUEST_LV] = request[pc]
            _put_integer(i, M_SIZE, size[pc], 1)
            _put_peer(i, M_PEER, peer[pc], o == RECV)
            _put_integer(i, M_TAG, tag[pc], 0 if o == SEND else 2)
        elif o == WAIT:
            if first[pc] < 0 or count[pc] < 0 or first[pc] + count[pc] > len(reqs):
                raise ValueError(f"instruction {pc} waits on requests past the list's end")
            i.named = INTEGER_NAMES
            i.u.lv[0], i.u.lv[1] = first[pc], count[pc]
        elif o == COLLECTIVE:
            i.blocking = rooted[nid]        # here: the call has a root
            _put_integer(i, C_SIZE, size[pc], 1)
            _put_integer(i, C_ROOT, peer[pc], 1)
        else:
            raise ValueError(f"opcode {o} in an instruction array")
    c.held = code.requests
    return 0


cdef inline object request_name(Code code, int pc, Ins *ins):
    """The request a send or receive names, or None (an array code's numbered
    requests: :meth:`Core.keep_numbered`)."""
    return code.code[pc].request if ins.named else None


cdef inline uint64_t numbered_key(int64_t number) noexcept:
    """An array code's request number as a key of a rank's ``numbered`` table
    (numbers 2**63 - 2 and 2**63 - 1 give its two reserved keys)."""
    return (<uint64_t> number) ^ (1ULL << 63)


cdef dict _CODES = {}
cdef dict _SHARED = {}          # id(a rank's code) -> (the code, rank, ranks, its shared Code)
cdef dict _NO_NAMES = {}        # a collective's requests: never named, so never written


cdef Code code_for(code, bint collective, statuses=frozenset()):
    """The C form of ``code`` (kept per code tuple: one program's, so its
    ``statuses``, the status names bound, are always the same)."""
    c = _CODES.get(id(code))
    if c is None or (<Code> c).code is not code:
        if len(_CODES) > 65536:
            _CODES.clear()
            _new_box_generation()   # the codes still running keep theirs
        c = _CODES[id(code)] = Code(code, collective, statuses)
    return <Code> c


cdef list _shared_codes(list codes, statuses):
    """Each rank's Code, one for every rank whose folded code differs from
    another's only in peers at the same distance (modulo the ranks): a halo's
    interior ranks, a ring's every rank.  The first code is the reference: where
    a rank's record is the reference's own object it is the same for every rank;
    elsewhere its constant peers are kept relative to the rank (Ins.draw's bits),
    so ranks whose records there agree but for those distances run one Code and
    the core's working set stays the same size as the ranks grow.  A code run by
    more than one rank (its peers the same for each), or an array code, keeps
    its own Code (:func:`code_for`), as does the reference."""
    cdef Py_ssize_t r, P = len(codes)
    uses = {}
    for code in codes:
        uses[id(code)] = uses.get(id(code), 0) + 1
    ref = next((code for code in codes if type(code) is tuple), None)
    groups = {}
    out = []
    for r in range(P):
        code = codes[r]
        if (type(code) is not tuple or code is ref or uses[id(code)] > 1
                or len(<tuple> code) != len(<tuple> ref)):
            out.append(code_for(code, False, statuses))
            continue
        kept = _SHARED.get(id(code))
        if kept is not None and kept[0] is code and kept[1] == r and kept[2] == P:
            out.append(kept[3])
            continue
        key = _relative_key(<tuple> code, <tuple> ref, r, P)
        c = groups.get(key)
        if c is None:
            c = groups[key] = _relative_code(<tuple> code, <tuple> ref, r, P, statuses)
        if len(_SHARED) > 65536:
            _SHARED.clear()
        _SHARED[id(code)] = (code, r, P, c)
        out.append(c)
    return out


cdef dict _PEER_SLOTS = {SEND: (M_PEER,), RECV: (M_PEER,), SENDRECV: (X_DST, X_SRC)}


cdef tuple _relative_key(tuple code, tuple ref, Py_ssize_t r, Py_ssize_t P):
    """What rank ``r``'s ``code`` runs, its peers where it differs from ``ref``
    as distances: equal keys, equal runs for their ranks."""
    cdef Py_ssize_t pc
    parts = []
    last = key = None
    for pc in range(len(code)):
        ins = code[pc]
        if ins is ref[pc]:
            continue
        if ins is not last:     # a rank's skipped arms: one jump again and again
            slots = _PEER_SLOTS.get(ins[0], ())
            key = tuple([_value_key(x) if k not in slots else _peer_key(x, r, P)
                         for k, x in enumerate(ins)])
            last = ins
        parts.append((pc, type(ins), key))
    return tuple(parts)


cdef object _peer_key(fn, Py_ssize_t r, Py_ssize_t P):
    """A peer operand's key: a constant rank as its distance from rank ``r``."""
    value = getattr(fn, "value", None)
    if type(value) is int and 0 <= value < P:
        return ("rel", (value - r) % P)
    return _value_key(fn)


cdef object _value_key(x):
    """A record field's key: numbers and strings by value (and type), tuples by
    their items, anything else by identity (alive while the codes are)."""
    t = type(x)
    if t is int or t is str or t is bool or x is None:
        return (t, x)
    if t is float:
        return (t, x.hex())
    if t is tuple:
        return (t, tuple([_value_key(y) for y in <tuple> x]))
    return id(x)


cdef Code _relative_code(tuple code, tuple ref, Py_ssize_t r, Py_ssize_t P, statuses):
    """Rank ``r``'s Code with its constant peers where ``code`` differs from
    ``ref`` made relative (:func:`_relative_key`'s distances)."""
    cdef Code c = Code(code, False, statuses)
    cdef Py_ssize_t pc
    cdef int slot
    cdef Ins *i
    for pc in range(c.n):
        i = &c.own[pc]
        if code[pc] is ref[pc] or (i.op != SEND and i.op != RECV and i.op != SENDRECV):
            continue
        for slot in _PEER_SLOTS[i.op]:
            if i.konst & (1 << slot) and 0 <= i.u.iv[slot] < P:
                i.u.iv[slot] = <int> ((i.u.iv[slot] - r + P) % P)
                i.draw |= 1 << slot
    return c


cdef inline long _virtual(long rank, long extra) noexcept:
    """``rank``'s number among recursive doubling's ranks (collectives.classes.virtual)."""
    return rank // 2 if rank < 2 * extra else rank - extra


cdef inline long _folded_xor(long rank, long mask, long extra) noexcept:
    """The rank whose virtual number is ``rank``'s XOR ``mask``."""
    cdef long new = _virtual(rank, extra) ^ mask
    return 2 * new + 1 if new < extra else new + extra


cdef class ClassCodes:
    """One collective call's Codes: one per class of ranks
    (:mod:`pevpm.vm.kernel.collectives.classes`), and each rank's class."""
    cdef const int[::1] of
    cdef list codes

    cdef inline Code code_of(self, int rank):
        return <Code> self.codes[self.of[rank]]


cdef dict _CLASS_CODES = {}     # (op, size, root, ranks, config, place) -> ClassCodes or False
cdef dict _CLASSES = {}         # (op, size, root, ranks, config) -> RankClasses or None


cdef object class_expansions(op, long size, long root, long P, config, where):
    """The ClassCodes of one collective call (kept for the process's later runs;
    the ranks' classes shared by every place of the call's shape), or False
    where its algorithm has no classes: each rank is expanded alone."""
    key = (op, size, root, P, config, where)
    found = _CLASS_CODES.get(key)
    if found is not None:
        return found
    shape = key[:5]
    if shape in _CLASSES:
        classes = _CLASSES[shape]
    else:
        if len(_CLASSES) > 256:
            _CLASSES.clear()
        classes = _CLASSES[shape] = collectives.rank_classes(op, size, root, P, config)
    if classes is None:
        found = False
    else:
        found = ClassCodes()
        (<ClassCodes> found).of = classes.of
        (<ClassCodes> found).codes = [
            _class_expansion(engine._expansion(op, size, root, rep, P, config, where),
                             rep, P, classes.xor_extra) for rep in classes.reps]
    if len(_CLASS_CODES) > 4096:
        _CLASS_CODES.clear()
    _CLASS_CODES[key] = found
    return found


cdef Code _class_expansion(tuple code, long rep, long P, xor_extra):
    """Rank ``rep``'s expansion ``code`` as the Code of its whole class: every
    constant peer relative to the rank (a distance modulo the ranks; with
    ``xor_extra`` an exchange's an XOR of virtual numbers, XOR_PEERS)."""
    cdef Code c = Code(code, True)
    cdef Ins *own
    cdef Ins *i
    cdef int pc, slot
    cdef long v, extra = -1 if xor_extra is None else xor_extra
    if posix_memalign(<void **> &own, 64, max(c.n, 1) * sizeof(Ins)) != 0:
        raise MemoryError()
    c.own = own
    c.xor_extra = max(extra, 0)
    for pc in range(c.n):
        own[pc] = c.ins[pc][0]
        i = c.ins[pc] = &own[pc]
        if i.op != SEND and i.op != RECV and i.op != SENDRECV:
            continue
        for slot in _PEER_SLOTS[i.op]:
            v = i.u.iv[slot]
            if not (i.konst & (1 << slot) and 0 <= v < P):
                raise Unsupported("a collective step whose peer is not a rank")
            if i.op == SENDRECV and extra >= 0:
                i.u.iv[slot] = <int> (_virtual(rep, extra) ^ _virtual(v, extra))
                i.draw |= XOR_PEERS
            else:
                i.u.iv[slot] = <int> ((v - rep + P) % P)
            i.draw |= 1 << slot
    return c


# -------------------------------------------------------------------- requests

cdef struct Req:
    double posted
    double transfer     # a send's drawn time; a receive's communication time
    double completion   # (an EAGER send: the local time it took)
    double path[3]      # the rank's critical path at posting, then at completion
                        # (an EAGER send keeps the first: see completion_of)
    long seq
    long size
    int tag
    int rank            # sender (send) or receiver (recv)
    int peer            # destination (send) or source (recv)
    int qnext, qprev    # the (destination, source) send queue, or the receive's bucket
    int dnext, dprev    # a send: every queued send to its destination, in post order
    int opos            # index in the owner's outstanding list, or -1
    unsigned short opid
    unsigned short refs
    unsigned char flags
    unsigned char context


# Req.flags
DEF IS_SEND = 1
DEF DRAWN = 2
DEF DONE = 4
DEF QUEUED = 8
DEF WAITED = 16        # its own rank waits on it
DEF ZERO_COMM = 32     # a send completed before it was delivered: no communication time
DEF HAS_STATUS = 64    # a receive with a status (Core.status_of)
DEF EAGER = 128        # a send done when posted, before its delivery needs its origin
DEF ROUTES_ONE_AT_A_TIME = 16   # and a 16th of the nodes: then that node's routes to all, at once


cdef struct Queues:
    # A rank's matching state in two cache lines (the array is line-aligned):
    # its counts and the send queues to it, then its receive buckets.  A
    # queue or bucket in use sits in one of the CHANNELS slots (head >= 0)
    # while one is free, else in the Core's hash table (``far`` counts those
    # per rank): a stencil's neighbours and a collective round's partner are
    # found with no hashing, a message's post and delivery read one line each.
    int dhead, dtail    # every send queued to the rank, in post order (dnext)
    int nposted         # receives in its buckets
    int nwild           # those with ANY_SOURCE or ANY_TAG
    int ssrc[CHANNELS]  # a send queue to the rank: its source,
    int shead[CHANNELS] #   its first send (-1: a free slot)
    int stail[CHANNELS] #   and its last
    int rkey[CHANNELS]  # a receive bucket: 2 * its source (ANY_SOURCE too) + its context & 1,
    int rtag[CHANNELS]  #   its tag,
    int rhead[CHANNELS] #   its first receive (-1: a free slot)
    int rtail[CHANNELS] #   and its last


cdef struct Decision:
    # 16 bytes: a heap node's four children fill one cache line (HEAP_PAD); in
    # this order, read as one 128-bit number, the order the heap keeps
    # (pevpm_before).
    int req
    uint32_t seq        # the receive's seq (heap_push stops a run past 2**32 requests)
    double time         # the receive's posted time (>= 0); ties go to the lower seq


cdef enum:
    HEAP_PAD = 3        # entries before the root: node i's children 4i+1..4i+4 start a line


cdef struct Transit:
    double end          # a message on a link until ``end``, from ``src`` to ``dst``
    int src
    int dst


# ------------------------------------------------------------ shared cores

cdef int SHARING_KEEP = 256     # pevpm.vm.kernel.sharing._KEEP
cdef int FLOW_KEEP = 1024       # a link's breakpoints before the core first prunes them
cdef int FLOOR_REUSE = 8        # prunings that reuse one flow_earliest (Core.flow_floor)


cdef inline Py_ssize_t _bisect_right(const double *a, Py_ssize_t n, double x) noexcept:
    return _bisect_right_in(a, 0, n, x)


cdef Py_ssize_t _bisect_right_in(const double *a, Py_ssize_t lo, Py_ssize_t hi,
                                 double x) noexcept:
    """The first index in ``[lo, hi)`` whose entry is above ``x`` (``hi``:
    none), when every entry before ``lo`` is at most ``x``."""
    cdef Py_ssize_t mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if x < a[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


cdef Py_ssize_t _gallop_right(const double *a, Py_ssize_t lo, Py_ssize_t n, double x) noexcept:
    """``_bisect_right(a, n, x)`` when no ``a[k]`` before ``lo`` is above ``x``,
    in steps doubling from ``lo`` (cheap when the answer is near it; from 0,
    in steps doubling back from the end, where a link's newest flows are)."""
    cdef Py_ssize_t step = 1, hi = lo
    if lo == 0:
        return _gallop_back(a, n, x)
    while hi < n and not x < a[hi]:
        lo = hi + 1
        hi = lo + step
        step *= 2
    return _bisect_right_in(a, lo, hi if hi < n else n, x)


cdef Py_ssize_t _gallop_back(const double *a, Py_ssize_t n, double x) noexcept:
    """``_bisect_right(a, n, x)`` in steps doubling back from the end (cheap
    when the answer is near it)."""
    cdef Py_ssize_t step = 1, lo, hi = n - 1
    if n == 0 or not x < a[hi]:
        return n
    lo = hi - 1
    while lo >= 0 and x < a[lo]:            # a[hi] > x throughout
        hi = lo
        step *= 2
        lo = hi - step
    return _bisect_right_in(a, lo + 1 if lo >= 0 else 0, hi, x)


cdef Py_ssize_t _bisect_left(const double *a, Py_ssize_t lo, Py_ssize_t n, double x) noexcept:
    cdef Py_ssize_t hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef class Sharing:
    """:class:`pevpm.vm.kernel.sharing.CpuSharing` in C arrays: the same changes, folds
    and arithmetic in the same order, so the core and the reference engine
    agree to the bit (each oversubscribed node: its idle-count changes, time
    ordered, and the count before the first)."""
    cdef int cores, nnodes
    cdef bint poll
    cdef int *node_at           # per rank: its shared node, or -1
    cdef double *seen           # per rank: a time no later than its clock
    cdef char *ended
    cdef list members           # per shared node: its ranks
    cdef double **times
    cdef int **deltas
    cdef Py_ssize_t *count
    cdef Py_ssize_t *cap
    cdef Py_ssize_t *keep
    cdef long *base

    def __cinit__(self, node_of, int cores, bint poll):
        cdef int r, n, numprocs = len(node_of)
        self.cores, self.poll = cores, poll
        by_node = {}
        for r, node in enumerate(node_of):
            by_node.setdefault(node, []).append(r)
        shared = {node: ranks for node, ranks in by_node.items() if len(ranks) > cores}
        self.members = list(shared.values())
        self.nnodes = len(self.members)
        self.node_at = _ints(numprocs, -1)
        self.seen = <double *> malloc(max(numprocs, 1) * sizeof(double))
        self.ended = <char *> malloc(max(numprocs, 1))
        k = max(self.nnodes, 1)
        self.times = <double **> malloc(k * sizeof(double *))
        self.deltas = <int **> malloc(k * sizeof(int *))
        self.count = <Py_ssize_t *> malloc(k * sizeof(Py_ssize_t))
        self.cap = <Py_ssize_t *> malloc(k * sizeof(Py_ssize_t))
        self.keep = <Py_ssize_t *> malloc(k * sizeof(Py_ssize_t))
        self.base = <long *> malloc(k * sizeof(long))
        if (self.seen == NULL or self.ended == NULL or self.times == NULL
                or self.deltas == NULL or self.count == NULL or self.cap == NULL
                or self.keep == NULL or self.base == NULL):
            raise MemoryError()
        for r in range(numprocs):
            self.seen[r] = 0.0
            self.ended[r] = 0
        for n, ranks in enumerate(self.members):
            for r in ranks:
                self.node_at[r] = n
            self.cap[n] = 64
            self.count[n] = 0
            self.keep[n] = SHARING_KEEP
            self.base[n] = 0
            self.times[n] = <double *> malloc(64 * sizeof(double))
            self.deltas[n] = <int *> malloc(64 * sizeof(int))
            if self.times[n] == NULL or self.deltas[n] == NULL:
                raise MemoryError()

    def __dealloc__(self):
        cdef int n
        if self.times != NULL:
            for n in range(self.nnodes):
                free(self.times[n])
                free(self.deltas[n])
        free(self.times)
        free(self.deltas)
        free(self.count)
        free(self.cap)
        free(self.keep)
        free(self.base)
        free(self.node_at)
        free(self.seen)
        free(self.ended)

    cdef int change(self, int n, double at, int delta) except -1:
        cdef Py_ssize_t i, c = self.count[n]
        cdef double *t
        cdef int *d
        if c == self.cap[n]:
            t = <double *> realloc(self.times[n], 2 * c * sizeof(double))
            if t == NULL:
                raise MemoryError()
            self.times[n] = t
            d = <int *> realloc(self.deltas[n], 2 * c * sizeof(int))
            if d == NULL:
                raise MemoryError()
            self.deltas[n] = d
            self.cap[n] = 2 * c
        t, d = self.times[n], self.deltas[n]
        i = _bisect_right(t, c, at)
        memmove(t + i + 1, t + i, (c - i) * sizeof(double))
        memmove(d + i + 1, d + i, (c - i) * sizeof(int))
        t[i] = at
        d[i] = delta
        self.count[n] = c + 1
        return 0

    cdef int fold(self, int n) except -1:
        """Fold the changes no live rank of the node can still ask about."""
        cdef Py_ssize_t k, j, c = self.count[n]
        cdef double least = 0.0
        cdef bint live = False
        cdef int q
        if c <= self.keep[n]:
            return 0
        for q in self.members[n]:
            if not self.ended[q] and (not live or self.seen[q] < least):
                least, live = self.seen[q], True
        if live:
            k = _bisect_right(self.times[n], c, least)
            for j in range(k):
                self.base[n] += self.deltas[n][j]
            memmove(self.times[n], self.times[n] + k, (c - k) * sizeof(double))
            memmove(self.deltas[n], self.deltas[n] + k, (c - k) * sizeof(int))
            self.count[n] = c = c - k
        self.keep[n] = max(SHARING_KEEP, 2 * c)
        return 0

    cdef int sleep(self, int rank, double start, double seconds) except -1:
        cdef int n = self.node_at[rank]
        if n >= 0 and seconds > 0:
            self.seen[rank] = start
            self.change(n, start, 1)
            self.change(n, start + seconds, -1)
            self.fold(n)
        return 0

    cdef int block(self, int rank, double at) except -1:
        cdef int n = self.node_at[rank]
        if n >= 0:
            self.seen[rank] = at
            if not self.poll:
                self.change(n, at, 1)
        return 0

    cdef int resume(self, int rank, double at) except -1:
        cdef int n = self.node_at[rank]
        if n >= 0:
            self.seen[rank] = at
            if not self.poll:
                self.change(n, at, -1)
                self.fold(n)
        return 0

    cdef int finish(self, int rank, double at) except -1:
        cdef int n = self.node_at[rank]
        if n >= 0:
            self.ended[rank] = 1
            self.change(n, at, 1)
            self.fold(n)
        return 0

    cdef double run_for(self, int rank, double start, double work) except? -1.0:
        """Wall seconds ``work`` CPU-seconds of ``rank`` take from ``start``."""
        cdef int n = self.node_at[rank]
        cdef Py_ssize_t first, last, k, c
        cdef long size, wanting
        cdef double now, left, rate, at
        cdef bint stretched = False
        cdef const double *t
        if n < 0 or work <= 0:
            return work
        self.seen[rank] = start
        t, c = self.times[n], self.count[n]
        size = len(self.members[n])
        first = _bisect_right(t, c, start)
        last = _bisect_left(t, first, c, start + work * size / self.cores)
        wanting = size - self.base[n]
        for k in range(first):
            wanting -= self.deltas[n][k]
        if wanting <= self.cores and first == last:
            return work
        now, left = start, work
        for k in range(first, last):
            at = t[k]
            rate = 1.0 if wanting <= self.cores else <double> self.cores / wanting
            if (at - now) * rate >= left:
                break
            left -= (at - now) * rate
            stretched = stretched or rate < 1.0
            now = at
            wanting -= self.deltas[n][k]
        rate = 1.0 if wanting <= self.cores else <double> self.cores / wanting
        if rate == 1.0 and not stretched:
            return work
        return now + left / rate - start


cdef class Frame:
    """Where a rank left its own code to run a collective's expansion, and
    where it writes its completion time of that call (CallTimes)."""
    cdef Code code
    cdef int pc
    cdef int loopbase
    cdef dict requests
    cdef int outbase            # where the collective's outstanding records start
    cdef double *completion


cdef class CallTimes:
    """One collective call's per-rank completion times: its record's array,
    written in place through ``at``."""
    cdef object times
    cdef double *at

    def __cinit__(self, times):
        if not (isinstance(times, np.ndarray) and times.dtype == np.float64
                and times.flags.c_contiguous and times.flags.writeable):
            raise Unsupported("a collective timed at one call and expanded at another")
        self.times = times
        self.at = <double *> <size_t> times.ctypes.data


cdef class PlaceCounts:
    """Every rank's calls so far at one collective's place, one C long a rank
    (shared by a rank's call sites with that place: the reference engine
    counts occurrences per place)."""
    cdef long *n

    def __cinit__(self, int numprocs):
        self.n = <long *> calloc(max(numprocs, 1), sizeof(long))
        if self.n == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.n)


cdef class Site:
    """A rank's collective call at one pc of its code, as its last call there
    was: size and root, the expansion (None: timed whole), op and place, the
    rank's count of calls at that place (in the place's PlaceCounts) and the
    run's CallTimes of the calls there by occurrence; nothing is hashed on the
    call's way in."""
    cdef long size, root
    cdef Code expansion
    cdef str op
    cdef object where
    cdef PlaceCounts counts     # the calls at its place, every rank's
    cdef long *calls            # this rank's there
    cdef list times


cdef class Rank:
    cdef public int id
    cdef double clock
    cdef double path[3]
    cdef double spent[3]
    cdef Code code
    cdef int pc
    cdef long long *loop        # per open loop: its iteration, its count, whether it is named
    cdef int nloops, caploops
    cdef int loopbase           # the running collective's loops start here
    # A rank's containers are made when first used (None until then: at a
    # million ranks, empty lists and dicts made up front cost hundreds of MB).
    cdef list loop_names        # per open loop: (its index variable or None, its place)
    cdef list marks
    cdef list frames            # Frames of the collectives the rank is inside
    cdef Frame spare            # a Frame to reuse (a rank is in one collective at a time)
    cdef dict env
    cdef int place              # its processor name's place_number (a Serial's ``on``)
    cdef double factor
    cdef dict requests          # request name -> record (user code only)
    cdef pevpm_htab_t numbered  # an array code's request number -> record (v1); e NULL: none yet
    cdef int *out               # outstanding records in post order (-1: waited by name)
    cdef int nout, capout
    cdef int outbase            # where the running collective's records start
    cdef int nlive, ntomb       # live entries and holes in out
    cdef int *waits             # the records of the current wait: in ``few`` up to
    cdef int nwait, capwait     #   INLINE_WAITS (no miss of its own when the rank wakes)
    cdef int few[INLINE_WAITS]
    cdef int pending
    cdef int blocked
    cdef int done
    cdef int context
    cdef list sites             # per pc of its own code: its collective Site, or None
    cdef int timed_calls        # hardware or measured collectives joined

    def __cinit__(self):
        self.out = NULL
        self.waits = self.few
        self.loop = NULL
        self.nloops = self.caploops = self.loopbase = 0
        self.nout = self.capout = self.outbase = self.nlive = self.ntomb = 0
        self.nwait, self.capwait = 0, INLINE_WAITS
        self.timed_calls = 0
        self.numbered.e = NULL

    def __dealloc__(self):
        free(self.out)
        pevpm_ht_free(&self.numbered)
        if self.waits != self.few:
            free(self.waits)
        free(self.loop)

    cdef int add_wait(self, int i) except -1:
        """Append record ``i`` to the current wait (moved out of ``few`` when full)."""
        cdef int *grown
        if self.nwait == self.capwait:
            if self.waits == self.few:
                grown = <int *> malloc(2 * self.capwait * sizeof(int))
                if grown != NULL:
                    memcpy(grown, self.few, self.nwait * sizeof(int))
            else:
                grown = <int *> realloc(self.waits, 2 * self.capwait * sizeof(int))
            if grown == NULL:
                raise MemoryError()
            self.waits = grown
            self.capwait *= 2
        self.waits[self.nwait] = i
        self.nwait += 1
        return 0

    cdef int open_loop(self, long long count, index, where) except -1:
        """Enter a loop of ``count`` iterations (index variable ``index``, or None)."""
        cdef long long *grown
        if self.nloops == self.caploops:
            self.caploops = max(4, 2 * self.caploops)
            grown = <long long *> realloc(self.loop, 3 * self.caploops * sizeof(long long))
            if grown == NULL:
                raise MemoryError()
            self.loop = grown
        self.loop[3 * self.nloops] = 0
        self.loop[3 * self.nloops + 1] = count
        self.loop[3 * self.nloops + 2] = bool(index)
        self.nloops += 1
        if self.loop_names is None:
            self.loop_names = []
        self.loop_names.append((index, where))
        if index:
            self.env[index] = 0
        return 0

    cdef inline int close_loop(self) except -1:
        self.nloops -= 1
        self.loop_names.pop()
        return 0

    cdef int bind_index(self) except -1:
        """Bind the innermost loop's index variable to its iteration."""
        self.env[(<tuple> self.loop_names[-1])[0]] = self.loop[3 * (self.nloops - 1)]
        return 0

    cdef list open_loops(self):
        """The running code's open loops as the reference lists them:
        [iteration, count, index variable, place] each."""
        return [[self.loop[3 * k], self.loop[3 * k + 1], self.loop_names[k][0],
                 self.loop_names[k][1]] for k in range(self.loopbase, self.nloops)]


cdef class Core:
    cdef int numprocs
    cdef object machine, comm, rng, placement, limits
    cdef Sharing sharing        # on oversubscribed nodes, else None
    cdef pevpm_bitgen_t *bitgen
    cdef list ranks
    cdef Req *reqs
    cdef int nreqs, capreqs
    cdef int *free_reqs         # records to reuse
    cdef int nfree, capfree
    cdef Decision *heap         # the decision heap's root (HEAP_PAD entries into heapmem)
    cdef Decision *heapmem
    cdef int nheap, capheap
    # matching: no Python objects per message
    cdef pevpm_htab_t send_queues   # destination * P + source -> first, last queued send
    cdef Queues *queues         # per rank: its sends queued to it, its posted receives
    cdef int *far               # per rank: its send queues, then its buckets, in the tables
    cdef pevpm_htab_t buckets   # bucket_key(rank, context, source, tag) -> first, last recv
    cdef pevpm_htab_t tag_ids   # beyond PACKED_RANKS ranks: a tag -> its number in the keys
    cdef bint wide              # numprocs > PACKED_RANKS
    cdef int *candidates        # an ANY_SOURCE receive's candidate sends
    cdef int ncand, capcand
    cdef int *seen              # per source: the stamp of the last ANY_SOURCE search
    cdef int stamp
    cdef int *runnable          # ranks to run, from runhead on
    cdef int nrun, caprun, runhead
    cdef long seq
    cdef long events
    cdef long next_check        # when count_event next looks at limits and signals
    cdef long max_events
    cdef double max_time
    cdef double max_wall, deadline      # deadline < 0: no wall-clock limit
    cdef public long messages
    cdef list records
    cdef dict status_of         # receive record -> its status names (HAS_STATUS)
    cdef dict timed             # (op, size) -> whether the machine times the call whole
    cdef dict expansions        # (op, size, root, place) -> its ClassCodes, or False
    cdef dict place_counts      # a collective's place -> every rank's calls there
    cdef dict timed_arrivals    # k-th timed collective -> the ranks in it so far
    cdef dict collectives
    cdef dict calls_at          # a collective's place -> its CallTimes by occurrence
    cdef dict transfers
    cdef dict plans
    cdef bint planned
    cdef long plan_keys[5 * PLAN_SLOTS]  # a direct-mapped cache in front of ``plans``
    cdef list plan_slots
    # communication model
    cdef int comm_kind
    cdef bint contention_matters
    cdef double latency, bandwidth, intra_latency, intra_bandwidth, local_time
    cdef bint has_intra_latency, has_intra_bandwidth, share_bandwidth
    cdef double L, o, g, G
    cdef int eager_limit
    # contention scoreboard
    cdef int nodes
    cdef int *node_of
    cdef int nlinks
    cdef int *capacity
    cdef Transit **ends
    cdef int *nends
    cdef int *capends
    cdef long *load            # per link: sum over rank pairs of the busier direction
    cdef pevpm_htab_t pair_counts   # (link * P + low) * P + high -> messages in transit
                                    #   from low to high (v1) and from high to low (v2)
    cdef bint duplex           # the last contention() query met an opposite message
    cdef pevpm_htab_t routes   # a * nodes + b -> where node a's route to b starts, its length
    cdef int *route_links      # every route asked so far, one after another
    cdef int nroute_links, caproute_links
    cdef int *route_asks       # per node: routes from it made one at a time (NULL: none yet)
    cdef object route_rows     # the placement's node_routes_from, or None
    # flow-level sharing (pevpm.vm.kernel.flows) on a network with link bandwidths
    cdef bint network
    cdef bint flow_from_match  # Machine.flow_start == "match"
    cdef double *link_bandwidth
    cdef double *link_latency
    cdef double **flow_times   # per link: breakpoints of its reserved rate
    cdef double **flow_rates   # per link: the rate from each breakpoint on
    cdef int *nflow
    cdef int *capflow
    cdef int *flow_kept        # per link: breakpoints left by its last pruning
    cdef double *segments      # a flow's (start, end, rate) spans while it is placed
    cdef int capsegments
    cdef int *walk             # per link of the route: the walk's segment index
    cdef double *walk_at       # per link of the route: its free rate there, its next breakpoint
    cdef int capwalk
    cdef double flow_floor     # a flow_earliest, reused by the next prunings (still a floor)
    cdef int floor_uses        # prunings left before flow_earliest is asked again
    cdef FluidNetwork maxmin   # Machine.flow_sharing "max-min"/"simgrid": maxmin.network_for
    cdef pevpm_htab_t flow_of  # max-min: a send's request -> its flow (v1)
    cdef pevpm_htab_t wait_of  # max-min: a receive queued until a flow ends -> the flow (v1)
    cdef dict maxmin_stale     # max-min: a receive -> the times of its outdated heap entries
    cdef double copy_rate

    def __cinit__(self):
        self.reqs = NULL
        self.free_reqs = NULL
        self.heap = self.heapmem = NULL
        self.send_queues.e = NULL
        self.buckets.e = NULL
        self.tag_ids.e = NULL
        self.pair_counts.e = NULL
        self.queues = NULL
        self.far = NULL
        self.seen = NULL
        self.candidates = self.runnable = NULL
        self.node_of = NULL
        self.capacity = NULL
        self.ends = NULL
        self.nends = NULL
        self.capends = NULL
        self.load = NULL
        self.nlinks = 0
        self.routes.e = NULL
        self.route_links = NULL
        self.nroute_links = self.caproute_links = 0
        self.route_asks = NULL
        self.network = False
        self.link_bandwidth = self.link_latency = NULL
        self.flow_times = self.flow_rates = NULL
        self.nflow = self.capflow = self.flow_kept = NULL
        self.segments = NULL
        self.walk = NULL
        self.walk_at = NULL
        self.capsegments = self.capwalk = 0
        self.floor_uses = 0

    def __dealloc__(self):
        cdef int k
        free(self.reqs)
        free(self.free_reqs)
        free(self.heapmem)
        pevpm_ht_free(&self.send_queues)
        pevpm_ht_free(&self.buckets)
        pevpm_ht_free(&self.tag_ids)
        pevpm_ht_free(&self.pair_counts)
        free(self.queues)
        free(self.far)
        free(self.seen)
        free(self.candidates)
        free(self.runnable)
        free(self.node_of)
        free(self.capacity)
        if self.ends != NULL:
            for k in range(self.nlinks):
                free(self.ends[k])
        free(self.ends)
        free(self.nends)
        free(self.capends)
        free(self.load)
        pevpm_ht_free(&self.routes)
        pevpm_ht_free(&self.flow_of)
        pevpm_ht_free(&self.wait_of)
        free(self.route_links)
        free(self.route_asks)
        if self.flow_times != NULL:
            for k in range(self.nlinks):
                free(self.flow_times[k])
                free(self.flow_rates[k])
        free(self.flow_times)
        free(self.flow_rates)
        free(self.nflow)
        free(self.capflow)
        free(self.flow_kept)
        free(self.link_bandwidth)
        free(self.link_latency)
        free(self.segments)
        free(self.walk)
        free(self.walk_at)

    def __init__(self, list codes, list envs, list proc_ids, list factors, machine, comm, rng,
                 placement, max_events, max_time, bint records, max_wall=None,
                 statuses=frozenset()):
        cdef int r, k
        cdef Rank rank
        self.numprocs = len(codes)
        self.machine, self.comm, self.rng, self.placement = machine, comm, rng, placement
        self.bitgen = <pevpm_bitgen_t *> PyCapsule_GetPointer(rng.bit_generator.capsule,
                                                              "BitGenerator")
        self.max_events = -1 if max_events is None else max_events
        self.max_time = INFINITY if max_time is None else max_time
        self.max_wall = -1.0 if max_wall is None else max_wall
        self.deadline = -1.0 if max_wall is None else time.monotonic() + max_wall
        self.ranks = []
        shared = _shared_codes(codes, statuses)
        for r in range(self.numprocs):
            rank = Rank()
            rank.id = r
            rank.clock = 0.0
            for k in range(3):
                rank.path[k] = 0.0
                rank.spent[k] = 0.0
            rank.code = shared[r]
            rank.pc = 0
            rank.loop_names = rank.marks = rank.frames = None
            rank.env = envs[r]
            rank.place = place_number(proc_ids[r])
            rank.factor = factors[r]
            rank.requests = {}
            rank.pending = 0
            rank.blocked = 0
            rank.done = 0
            rank.context = USER
            rank.sites = None
            self.ranks.append(rank)
        self.capreqs = 1024
        self.reqs = <Req *> malloc(self.capreqs * sizeof(Req))
        self.nreqs = 0
        self.nfree = self.capfree = 0
        self.capheap = 0
        self.nheap = 0
        self.grow_heap()
        if self.numprocs > MAX_RANKS:
            raise Unsupported(f"more than {MAX_RANKS:,} ranks (its packed keys hold no more)")
        self.wide = self.numprocs > PACKED_RANKS
        if (pevpm_ht_init(&self.send_queues, 1024) < 0 or pevpm_ht_init(&self.buckets, 1024) < 0
                or pevpm_ht_init(&self.pair_counts, 64) < 0
                or pevpm_ht_init(&self.tag_ids, 64) < 0):
            raise MemoryError()
        if posix_memalign(<void **> &self.queues, 64,
                          max(self.numprocs, 1) * sizeof(Queues)) != 0:
            self.queues = NULL
            raise MemoryError()
        for r in range(self.numprocs):
            self.queues[r].dhead = self.queues[r].dtail = -1
            self.queues[r].nposted = self.queues[r].nwild = 0
            for k in range(CHANNELS):
                self.queues[r].shead[k] = self.queues[r].rhead[k] = -1
        self.far = _ints(2 * self.numprocs, 0)
        self.seen = _ints(self.numprocs, 0)
        self.stamp = 0
        self.ncand = self.capcand = 0
        self.caprun = max(self.numprocs, 8)
        self.runnable = _ints(self.caprun, 0)
        for r in range(self.numprocs):
            self.runnable[r] = r
        self.nrun, self.runhead = self.numprocs, 0
        self.seq = 0
        self.events = 0
        self.next_check = self.events_to_check()
        self.messages = 0
        self.records = [] if records else None
        self.status_of = {}
        self.collectives = {}
        self.calls_at = {}
        self.transfers = {}
        self.timed = {}
        self.expansions = {}
        self.place_counts = {}
        self.timed_arrivals = {}
        self.plans = {}
        self.plan_slots = [None] * PLAN_SLOTS
        for k in range(5 * PLAN_SLOTS):
            self.plan_keys[k] = -1
        self.eager_limit = machine.eager_limit
        from pevpm.machine.transfer import LOCAL_COPY_RATE
        self.copy_rate = LOCAL_COPY_RATE
        self._comm_model(comm)
        self.contention_matters = self.contention_matters and machine.node_contention
        self._scoreboard(placement)
        self.sharing = (Sharing(placement.node_of, placement.cores, placement.wait == "poll")
                        if placement.oversubscribed else None)

    cdef _comm_model(self, comm):
        from pevpm.machine.comm_models import Constant, Hockney, LogGP
        self.contention_matters = False
        if type(comm) is Constant:
            self.comm_kind = COMM_CONSTANT
            self.latency, self.local_time = comm.latency, comm.local
        elif type(comm) is Hockney:
            self.comm_kind = COMM_HOCKNEY
            self.latency, self.bandwidth, self.local_time = comm.latency, comm.bandwidth, comm.local
            self.has_intra_latency = comm.intra_latency is not None
            self.has_intra_bandwidth = comm.intra_bandwidth is not None
            self.intra_latency = comm.intra_latency if self.has_intra_latency else 0.0
            self.intra_bandwidth = comm.intra_bandwidth if self.has_intra_bandwidth else 0.0
            self.share_bandwidth = comm.share_bandwidth
            self.contention_matters = comm.share_bandwidth
        elif type(comm) is LogGP:
            self.comm_kind = COMM_LOGGP
            self.L, self.o, self.g, self.G = comm.L, comm.o, comm.g, comm.G
        else:
            self.comm_kind = COMM_PYTHON
            self.contention_matters = True
        self.planned = hasattr(comm, "draw_plan")

    cdef _scoreboard(self, placement):
        cdef int k
        self.nodes = placement.nodes
        self.node_of = <int *> malloc(max(self.numprocs, 1) * sizeof(int))
        for k in range(self.numprocs):
            self.node_of[k] = placement.node_of[k]
        self.nlinks = len(placement.capacities)
        self.capacity = <int *> malloc(self.nlinks * sizeof(int))
        self.ends = <Transit **> malloc(self.nlinks * sizeof(Transit *))
        self.nends = <int *> malloc(self.nlinks * sizeof(int))
        self.capends = <int *> malloc(self.nlinks * sizeof(int))
        self.load = <long *> malloc(self.nlinks * sizeof(long))
        for k in range(self.nlinks):
            self.capacity[k] = placement.capacities[k]
            self.ends[k] = NULL
            self.nends[k] = 0
            self.capends[k] = 0
            self.load[k] = 0
        if pevpm_ht_init(&self.routes, 64) < 0:
            raise MemoryError()
        self.route_rows = getattr(placement, "node_routes_from", None)
        self.network = placement.link_bandwidth is not None
        self.flow_from_match = self.machine.flow_start == "match"
        self.maxmin = network_for(self.machine, placement)
        if self.maxmin is not None and (pevpm_ht_init(&self.flow_of, 64) < 0
                                        or pevpm_ht_init(&self.wait_of, 64) < 0):
            raise MemoryError()
        self.maxmin_stale = {}
        if self.network:
            self._flow_links(placement.link_bandwidth, placement.link_latency)

    cdef _flow_links(self, bandwidth, latency):
        """The links' bandwidths and latencies, and empty reservations."""
        cdef int k
        self.link_bandwidth = <double *> malloc(max(self.nlinks, 1) * sizeof(double))
        self.link_latency = <double *> malloc(max(self.nlinks, 1) * sizeof(double))
        self.flow_times = <double **> malloc(max(self.nlinks, 1) * sizeof(double *))
        self.flow_rates = <double **> malloc(max(self.nlinks, 1) * sizeof(double *))
        self.nflow = _ints(self.nlinks, 0)
        self.capflow = _ints(self.nlinks, 0)
        self.flow_kept = _ints(self.nlinks, 0)
        for k in range(self.nlinks):
            self.flow_times[k] = self.flow_rates[k] = NULL
        for k in range(self.nlinks):
            self.link_bandwidth[k] = bandwidth[k]
            self.link_latency[k] = latency[k]
            if not self.link_bandwidth[k] > 0:
                raise Unsupported("a link without a positive bandwidth")

    @property
    def codes_shared(self):
        """How many C codes the ranks start with (ranks whose folded codes
        differ only in relative peers share one, :func:`_shared_codes`)."""
        return len({id((<Rank> rank).code) for rank in self.ranks})

    # -------------------------------------------------------------- main loop
    def run(self):
        """Simulate the run to its end; its RunResult.  Python's cycle collector
        is off meanwhile (what cycles a run makes wait for the next collection):
        its walks over every rank's objects cost more than the run's own work."""
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self.run_all()
        finally:
            if collecting:
                gc.enable()

    cdef run_all(self):
        cdef Rank rank
        while True:
            while self.runhead < self.nrun:
                rank = <Rank> self.ranks[self.runnable[self.runhead]]
                self.runhead += 1
                if self.runhead == self.nrun:
                    self.runhead = self.nrun = 0
                self.process(rank)
            if not self.match_sweep():
                break
        for rank in self.ranks:
            if not rank.done:
                raise Unsupported("a run that deadlocks (the pure-Python engine reports where)")
            if rank.nlive or self.queues[rank.id].dhead >= 0 or self.queues[rank.id].nposted:
                raise Unsupported("a run that ends with requests outstanding "
                                  "(the pure-Python engine lists them)")
        return self.result()

    cdef bint match_sweep(self) except -1:
        cdef Decision d
        cdef Req *r
        cdef int best, limit
        cdef double match
        while self.nheap > 0:
            if self.maxmin is not None:
                self.flow_events()
            d = self.heap_pop()
            if self.maxmin is not None:
                if self.maxmin_stale and self.flow_stale(d):
                    continue
                self.flow_unwait(d.req)
                self.maxmin.advance_c(d.time)
            limit = self.count_event()
            if limit:
                raise self.limit_error(limit, None, None)
            r = &self.reqs[d.req]
            r.flags &= ~QUEUED
            if r.flags & DONE:
                self.release(d.req)
                continue
            best = self.earliest_arrival(d.req)
            if best >= 0:
                r = &self.reqs[d.req]
                match = max(r.posted, self.reqs[best].posted + self.reqs[best].transfer)
                if r.peer == ANY_SOURCE and self.other_rank_decides_before(r.rank, match):
                    r.flags |= QUEUED       # decide later: an earlier source may still send
                    self.heap_push(match, d.req)
                    continue
                if self.maxmin is not None and self.flow_wait(self.flow_of_send(best), d.req):
                    continue
                self.deliver(best, d.req)
                self.release(d.req)
                return True
            self.release(d.req)
        return False

    cdef bint other_rank_decides_before(self, int rank, double time, int i=0) noexcept:
        """Whether a rank other than ``rank`` has a decision queued before ``time``
        (engine._other_rank_decides_before); the entries before ``time`` form a
        subtree at the 4-ary heap's root, so only they are visited."""
        cdef int child
        if i >= self.nheap or self.heap[i].time >= time:
            return False
        if self.reqs[self.heap[i].req].rank != rank:
            return True
        for child in range(4 * i + 1, 4 * i + 5):
            if self.other_rank_decides_before(rank, time, child):
                return True
        return False

    cdef inline int count_event(self) except -1:
        """Count an event; EVENT_LIMIT or WALL_LIMIT when that limit has passed, else 0
        (one comparison until the next event that has something to check)."""
        self.events += 1
        if self.events < self.next_check:
            return 0
        return self.check_limits()

    cdef int check_limits(self) except -1:
        """count_event at ``next_check``: the event limit, and every
        SIGNAL_CHECK_MASK + 1 events the signals and the wall-clock limit."""
        if self.max_events >= 0 and self.events > self.max_events:
            return EVENT_LIMIT
        if (self.events & SIGNAL_CHECK_MASK) == 0:
            with nogil:                 # let other threads run (timers, progress, executors)
                pass
            PyErr_CheckSignals()        # Ctrl-C (KeyboardInterrupt) reaches a long run
            if self.deadline >= 0 and time.monotonic() > self.deadline:
                return WALL_LIMIT
        self.next_check = self.events_to_check()
        return 0

    cdef inline long events_to_check(self) noexcept:
        """The next event count with a check due: the next multiple of
        SIGNAL_CHECK_MASK + 1, or the one past the event limit if sooner."""
        cdef long due = (self.events | SIGNAL_CHECK_MASK) + 1
        if 0 <= self.max_events < due - 1:
            return self.max_events + 1
        return due

    cdef limit_error(self, int which, Rank rank, ins):
        """The reference engine's error for the event (``which`` = EVENT_LIMIT) or
        wall-clock limit, built here: a rerun would take as long again. ``rank``
        was about to run ``ins`` (None in a match sweep)."""
        running = (None, None, ()) if rank is None else (rank.id, vm.place_of(ins),
                                                             rank.open_loops())
        if which == EVENT_LIMIT:
            return engine.event_limit(self.max_events, *running)
        return engine.wall_limit(self.max_wall, self.events, *running)

    cdef int earliest_arrival(self, int ri) except -2:
        """The candidate send the receive takes (alg. 2), or -1.

        For MPI_ANY_SOURCE the reference engine scans every source's first
        send in (posted, post order), drawing the transfers not drawn yet,
        until a send is posted no sooner than the best arrival so far, and
        takes the earliest arrival (the first in that order among equals).
        Here only the undrawn candidates are sorted, and the draws come in
        the same order and stop at the same send: a drawn send ``j`` after an
        undrawn ``u`` in that order arrives no sooner than ``u`` is posted
        (``j`` is posted no sooner and transfers take no negative time), so
        ``u`` is drawn exactly when it is posted before the best drawn
        arrival (in (arrival, posted, post order)) and before every arrival
        of the undrawn sends before it; a send the scan would not reach
        arrives no sooner than the best and after it in that order, so the
        best over every drawn send and the undrawn ones reached is the
        reference's."""
        cdef Req *r = &self.reqs[ri]
        cdef int s, best, k
        cdef double arrival, best_arrival = 0.0, fresh_min = INFINITY, matched = r.posted
        if r.peer != ANY_SOURCE:
            s = self.first_match(self.queue_head(r.rank, r.peer), ri)
            if s >= 0 and not self.reqs[s].flags & DRAWN:
                self.draw_transfer(s, matched)
            elif s >= 0 and self.maxmin is not None and self.flow_of_send(s) >= 0:
                self.rerate(s)
            return s
        best = self.any_source_candidates(ri)
        if best >= 0:
            best_arrival = self.reqs[best].posted + self.reqs[best].transfer
        if self.ncand == 0:
            return best
        global _sorting
        _sorting = self.reqs
        qsort(self.candidates, self.ncand, sizeof(int), _posted_order)
        for k in range(self.ncand):
            s = self.candidates[k]
            if self.reqs[s].posted >= fresh_min or (best >= 0 and _arrives_before(
                    &self.reqs[best], best_arrival, &self.reqs[s], self.reqs[s].posted)):
                break
            self.draw_transfer(s, matched)
            arrival = self.reqs[s].posted + self.reqs[s].transfer
            if arrival < fresh_min:
                fresh_min = arrival
            if best < 0 or _arrives_before(&self.reqs[s], arrival, &self.reqs[best],
                                           best_arrival):
                best, best_arrival = s, arrival
        return best

    cdef int any_source_candidates(self, int ri) except -2:
        """The first send from each source that an ANY_SOURCE receive matches
        (the destination's sends in post order): the undrawn ones in
        ``candidates``, unsorted; the drawn one arriving first (in (arrival,
        posted, post order), max-min flows re-rated), or -1."""
        cdef Req *r = &self.reqs[ri]
        cdef Req *q
        cdef int s = self.queues[r.rank].dhead
        cdef int k, best = -1
        cdef double arrival, best_arrival = 0.0
        if self.stamp == 0x7FFFFFFF:        # start the stamps again
            for k in range(self.numprocs):
                self.seen[k] = 0
            self.stamp = 0
        self.stamp += 1
        self.ncand = 0
        while s >= 0:
            q = &self.reqs[s]
            if self.seen[q.rank] != self.stamp and q.context == r.context and (
                    r.tag == ANY_TAG or r.tag == q.tag):
                self.seen[q.rank] = self.stamp
                if not q.flags & DRAWN:
                    if pevpm_push(&self.candidates, &self.ncand, &self.capcand, s) < 0:
                        raise MemoryError()
                else:
                    if self.maxmin is not None and self.flow_of_send(s) >= 0:
                        self.rerate(s)
                    arrival = q.posted + q.transfer
                    if best < 0 or _arrives_before(q, arrival, &self.reqs[best], best_arrival):
                        best, best_arrival = s, arrival
            s = q.dnext
        return best

    cdef inline int first_match(self, int s, int ri) noexcept:
        cdef Req *r = &self.reqs[ri]
        while s >= 0:
            if (self.reqs[s].context == r.context
                    and (r.tag == ANY_TAG or r.tag == self.reqs[s].tag)):
                return s
            s = self.reqs[s].qnext
        return -1

    # ---------------------------------------------------------- process sweep
    cdef int process(self, Rank rank) except -1:
        cdef Code code = rank.code
        cdef Ins *ins
        cdef int pc = rank.pc, op, limit, k
        cdef long long *loop
        cdef double seconds
        while True:
            if pc == code.n:
                if not rank.frames:
                    rank.done = 1
                    if self.sharing is not None:
                        self.sharing.finish(rank.id, rank.clock)
                    return 0
                rank.pc = pc
                self.end_collective(rank)
                code, pc = rank.code, rank.pc
                continue
            ins = code.ins[pc]
            op = ins.op
            limit = self.count_event()
            if limit:
                raise self.limit_error(limit, rank, code.code[pc])
            pc += 1
            if op == SERIAL:
                if ins.on == EVERYWHERE or ins.on == rank.place:
                    if ins.konst & (1 << S_TIME):
                        seconds = ins.u.dv[0]
                    elif ins.draw:
                        seconds = self.draw(ins)
                        if not seconds >= 0:
                            raise Unsupported("a negative Serial time")
                    else:
                        value = self.operand(ins, S_TIME, code.code[pc - 1].time, rank)
                        if not value >= 0:
                            raise Unsupported("a negative Serial time")
                        seconds = value
                    if ins.blocking:
                        if self.sharing is not None:
                            self.sharing.sleep(rank.id, rank.clock, seconds)
                    else:
                        seconds = seconds * rank.factor
                        if self.sharing is not None:
                            seconds = self.sharing.run_for(rank.id, rank.clock, seconds)
                    self.spend(rank, 0, seconds)
            elif op == NEXT or op == NEXT_MARKED:
                if op == NEXT_MARKED:
                    if rank.marks is None:
                        rank.marks = []
                    rank.marks.append((rank.clock, rank.spent[0], rank.spent[1], rank.spent[2],
                                       self.messages))
                loop = &rank.loop[3 * (rank.nloops - 1)]
                loop[0] += 1
                if loop[0] < loop[1]:
                    if loop[2]:
                        rank.bind_index()
                    pc = ins.target
                else:
                    rank.close_loop()
            elif op == LOOP:
                py = code.code[pc - 1]
                if ins.konst & (1 << L_COUNT):
                    count = ins.u.dv[0]
                else:
                    count = self.operand(ins, L_COUNT, py.count, rank)
                    if count != int(count):
                        raise Unsupported("a loop count that is not a whole number")
                if count > 0:
                    rank.open_loop(loop_count(count), py.index, py.where)
                else:
                    pc = ins.target
            elif op == REPEAT:
                py = code.code[pc - 1]
                count = self.operand(ins, L_COUNT, py.count, rank)
                if count != int(count) or count < 1:
                    raise Unsupported(REPEAT_CAP)
                rank.open_loop(loop_count(count), py.index, py.where)
            elif op == UNTIL:
                if self.operand(ins, U_UNTIL, code.code[pc - 1].until, rank):
                    rank.close_loop()
                else:
                    loop = &rank.loop[3 * (rank.nloops - 1)]
                    loop[0] += 1
                    if loop[0] >= loop[1]:
                        raise Unsupported(REPEAT_CAP)
                    if loop[2]:
                        rank.bind_index()
                    pc = ins.target
            elif op == JUMP:
                pc = ins.target
            elif op == RUNON:
                arms = code.code[pc - 1].arms
                pc = ins.target
                for k, (predicate, target) in enumerate(arms):
                    if self.operand(ins, k, predicate, rank):
                        pc = target
                        break
            elif op == CONDITION:
                pc = self.choose(code.code[pc - 1], rank.env)
            else:
                rank.pc = pc
                if self.communicate(rank, code, pc - 1):
                    return 0
                code, pc = rank.code, rank.pc

    cdef double draw(self, Ins *ins) except? -1.0:
        """A Serial time drawn as ``ins`` says (its plan folded per rank)."""
        return self.draw_plan(ins.draw, ins.u.dv[0], ins.u.dv[1])

    cdef double draw_plan(self, int kind, double a, double b) except? -1.0:
        """One number drawn by numpy's samplers from the run's bit generator as the
        plan (DRAW_* kind, a, b) says: what :func:`pevpm.model.expr.draw` gives."""
        cdef bitgen_t *bitgen = <bitgen_t *> self.bitgen
        cdef double value
        if kind == DRAW_UNIFORM:
            value = random_uniform(bitgen, a, b - a)
        elif kind == DRAW_EXPONENTIAL:
            value = random_exponential(bitgen, a)
        else:
            value = random_gamma(bitgen, a, b)
        if value - value != 0:
            raise Unsupported("a draw that is not a finite number")
        return value

    cdef object operand(self, Ins *ins, int slot, fn, Rank rank):
        """The value of the instruction's operand ``slot`` (closure ``fn``): in C
        where :mod:`pevpm.vm.kernel.cexpr` wrote it and C gives the closure's exact
        value, else from the closure."""
        cdef XVal stack[X_STACK]
        cdef CExpr x
        cdef int top
        if ins.cx != NULL and ins.cx[slot] != NULL:
            x = <CExpr> ins.cx[slot]
            top = xeval(x, rank.env, stack)
            if top >= 0:
                if x.draw:
                    value = self.drawn(x.draw, stack, top, rank.env)
                    if value is not None:
                        return value
                elif not stack[0].isf:
                    return stack[0].i
                elif stack[0].d - stack[0].d == 0:
                    return stack[0].d
        return fn(rank.env)

    cdef object drawn(self, int kind, XVal *args, int nargs, dict env):
        """A random function of these arguments drawn in C as
        :func:`pevpm.model.expr.draw_plan` and :func:`~pevpm.model.expr.draw` do, or
        None (nothing drawn) where the closure must: arguments out of range (it
        says why), integers beyond what doubles hold exactly, a bound run."""
        cdef double a, b, shape, scale
        cdef int k
        if <PyObject *> PyDict_GetItem(env, RNG_NAME) != <PyObject *> self.rng:
            return None                 # a bound run: the draws sit at quantiles
        for k in range(nargs):
            if not args[k].isf and not -EXACT_SQRT <= args[k].i <= EXACT_SQRT:
                return None
        a = _xd(&args[0])
        b = _xd(&args[1]) if nargs > 1 else 0.0
        if kind == DRAW_UNIFORM:
            if not (isfinite(a) and isfinite(b) and a <= b and isfinite(b - a)):
                return None
            return self.draw_plan(kind, a, b)
        if kind == DRAW_EXPONENTIAL:
            if not (isfinite(a) and a >= 0):
                return None
            return self.draw_plan(kind, a, 0.0)
        if not (isfinite(a) and isfinite(b) and a > 0 and b >= 0):
            return None
        if b == 0:
            return a                    # a gamma with sd 0: its mean, nothing drawn
        shape, scale = pow(a / b, 2.0), b * b / a
        if not (0 < shape < INFINITY and 0 < scale < INFINITY):
            return None
        return self.draw_plan(kind, shape, scale)

    cdef int choose(self, ins, dict env) except -1:
        arms = ins.arms
        weights = [weight(env) for weight, _ in arms]
        if min(weights) < 0 or sum(weights) <= 0:
            raise Unsupported("Condition weights that are negative or sum to 0")
        x = self.bitgen.next_double(self.bitgen.state) * sum(weights)
        for w, arm in zip(weights, arms):
            if x < w:
                return arm[1]
            x -= w
        return arms[-1][1]

    cdef long size_of(self, Code code, int pc, int slot, Rank rank) except -1:
        cdef Ins *ins = code.ins[pc]
        if ins.konst & (1 << slot):
            return ins.u.iv[slot]
        value = self.operand(ins, slot, code.code[pc][slot], rank)
        if type(value) is int and value >= 0:
            return value
        if value < 0 or value != int(value):
            raise Unsupported("a message size that is negative or not a whole number")
        return int(value)

    cdef long peer_of(self, Code code, int pc, int slot, Rank rank, bint source) except? -99:
        cdef Ins *ins = code.ins[pc]
        cdef long value
        if ins.konst & (1 << slot):
            value = ins.u.iv[slot]
            if ins.draw & (1 << slot):          # relative to the rank (_shared_codes)
                if ins.draw & XOR_PEERS:
                    return _folded_xor(rank.id, value, code.xor_extra)
                value += rank.id
                return value - self.numprocs if value >= self.numprocs else value
        else:
            v = self.operand(ins, slot, code.code[pc][slot], rank)
            if type(v) is not int:
                if v == int(v):
                    v = int(v)
                else:
                    raise Unsupported("a peer rank that is not a whole number")
            value = v
        if 0 <= value < self.numprocs or value == PROC_NULL or (source and value == ANY_SOURCE):
            return value
        raise Unsupported("a peer rank out of range")

    cdef long tag_of(self, Code code, int pc, int slot, Rank rank, bint receiving) except? -99:
        cdef Ins *ins = code.ins[pc]
        if ins.konst & (1 << slot):
            return ins.u.iv[slot]
        value = self.operand(ins, slot, code.code[pc][slot], rank)
        if type(value) is int and (value >= 0 or rank.context != USER
                                   or (receiving and value == ANY_TAG)):
            return value
        raise Unsupported("a tag that is negative or not a whole number")

    cdef bint communicate(self, Rank rank, Code code, int pc) except -1:
        cdef Ins *ins = code.ins[pc]
        cdef int op = ins.op, s, r, k, i
        cdef long size, recv_size, dst, src, tag, recv_tag
        cdef long long w
        if op == SEND:
            size = self.size_of(code, pc, M_SIZE, rank)
            s = self.post_send(rank, ins.opid, size, self.peer_of(code, pc, M_PEER, rank, False),
                               self.tag_of(code, pc, M_TAG, rank, False),
                               not ins.blocking or self.eager(ins.opid, size))
            if ins.blocking:
                rank.nwait = 0
                self.wait_on(rank, s)
                return self.wait(rank)
            if ins.named == INTEGER_NAMES:
                self.keep_numbered(rank, ins.u.lv[M_REQUEST_LV], s)
            else:
                self.keep_request(rank, request_name(code, pc, ins), s)
        elif op == RECV:
            r = self.post_recv(rank, ins.opid, self.size_of(code, pc, M_SIZE, rank),
                               self.peer_of(code, pc, M_PEER, rank, True),
                               self.tag_of(code, pc, M_TAG, rank, True),
                               code.code[pc].request if ins.status else None)
            if ins.blocking:
                rank.nwait = 0
                self.wait_on(rank, r)
                return self.wait(rank)
            if ins.named == INTEGER_NAMES:
                self.keep_numbered(rank, ins.u.lv[M_REQUEST_LV], r)
            else:
                self.keep_request(rank, request_name(code, pc, ins), r)
        elif op == SENDRECV:            # operands in the reference's order (a draw may be one)
            size = self.size_of(code, pc, X_SIZE, rank)
            dst = self.peer_of(code, pc, X_DST, rank, False)
            tag = self.tag_of(code, pc, X_SEND_TAG, rank, False)
            recv_size = self.size_of(code, pc, X_RECV_SIZE, rank)
            src = self.peer_of(code, pc, X_SRC, rank, True)
            recv_tag = self.tag_of(code, pc, X_RECV_TAG, rank, True)
            self.prefetch_exchange(rank, dst)
            s = self.post_send(rank, ins.opid, size, dst, tag, False)
            r = self.post_recv(rank, ins.opid, recv_size, src, recv_tag, None)
            rank.nwait = 0
            self.wait_on(rank, s)
            self.wait_on(rank, r)
            return self.wait(rank)
        elif op == WAIT:
            names = None if ins.named == INTEGER_NAMES else code.code[pc].requests
            rank.nwait = 0
            if names is None and ins.named != INTEGER_NAMES:    # all outstanding: they leave
                for k in range(rank.outbase, rank.nout):
                    i = rank.out[k]
                    if i >= 0:
                        self.reqs[i].opos = -1
                        self.wait_on(rank, i)
                        self.release(i)
                rank.ntomb -= rank.nout - rank.outbase - rank.nwait
                rank.nlive -= rank.nwait
                rank.nout = rank.outbase
            else:
                if names is None:       # an array code's: integers
                    for w in range(ins.u.lv[0], ins.u.lv[0] + ins.u.lv[1]):
                        self.wait_numbered(rank, code.reqids[w])
                else:
                    for name in names:
                        self.wait_named(rank, name)
                for k in range(rank.nwait):
                    i = rank.waits[k]
                    if self.reqs[i].opos >= 0:
                        self.drop_outstanding(rank, i)
                        self.release(i)
            return self.wait(rank)
        elif op == COLLECTIVE:
            return self.begin_collective(rank, code, pc)
        else:
            raise Unsupported("MPI_Test")
        return False

    cdef void prefetch_exchange(self, Rank rank, long dst) noexcept:
        """Start loading what an exchange's send and receive will look up (the
        destination's queues and buckets, the rank's own queues from its source
        and buckets): at a thousand ranks each is a miss, and they overlap this way."""
        cdef long P = self.numprocs
        if 0 <= dst < P:
            __builtin_prefetch(&self.queues[dst])
            __builtin_prefetch(&self.queues[dst].rkey)
        __builtin_prefetch(&self.queues[rank.id])
        __builtin_prefetch(&self.queues[rank.id].rkey)

    cdef int wait_named(self, Rank rank, name) except -1:
        """Add the rank's request ``name`` to its next wait."""
        record = rank.requests.get(name)
        if record is None:
            raise Unsupported("a wait on a request never posted")
        return self.wait_on(rank, record)

    cdef int wait_numbered(self, Rank rank, int64_t number) except -1:
        """Add the rank's request ``number`` (an array code's) to its next wait and
        forget the number: an array code waits on each request it posts once (a
        trace's completions), so the rank's table holds only open requests and a
        waited record's slot is reused once its wait is over."""
        cdef pevpm_hent_t *entry = NULL
        cdef int i
        if rank.numbered.e != NULL:
            entry = pevpm_ht_find(&rank.numbered, numbered_key(number))
        if entry == NULL:
            raise Unsupported("a wait on a request never posted or waited on already "
                              "(an array code's)")
        i = entry.v1
        pevpm_ht_del(&rank.numbered, entry)
        self.wait_on(rank, i)
        return self.release(i)          # the number's hold

    cdef inline int wait_on(self, Rank rank, int i) except -1:
        """Add record ``i`` to the rank's next wait (and hold it)."""
        rank.add_wait(i)
        self.reqs[i].refs += 1
        return 0

    cdef void drop_outstanding(self, Rank rank, int i) noexcept:
        """Take record ``i`` off its rank's outstanding list (waited by name)."""
        rank.out[self.reqs[i].opos] = -1
        self.reqs[i].opos = -1
        rank.nlive -= 1
        rank.ntomb += 1
        while rank.nout > rank.outbase and rank.out[rank.nout - 1] < 0:
            rank.nout -= 1
            rank.ntomb -= 1
        if rank.ntomb > 1024 and 2 * rank.ntomb > rank.nout and rank.outbase == 0:
            self.compact_outstanding(rank)

    cdef void compact_outstanding(self, Rank rank) noexcept:
        cdef int k, n = 0, i
        for k in range(rank.nout):
            i = rank.out[k]
            if i >= 0:
                rank.out[n] = i
                self.reqs[i].opos = n
                n += 1
        rank.nout = n
        rank.ntomb = 0

    cdef inline bint eager(self, int opid, long size) noexcept:
        return 0 < self.eager_limit and size <= self.eager_limit and not _synchronous[opid]

    # -------------------------------------------------------- posting messages
    cdef int new_req(self, Rank rank, int is_send, int opid, long size, long peer,
                     long tag) except -1:
        cdef int i, k
        cdef Req *q
        if tag != <int> tag:
            raise Unsupported("a tag beyond 32 bits")
        if self.nfree:
            self.nfree -= 1
            i = self.free_reqs[self.nfree]
        else:
            if self.nreqs == self.capreqs:
                q = <Req *> realloc(self.reqs, 2 * self.capreqs * sizeof(Req))
                if q == NULL:
                    raise MemoryError()
                self.reqs = q
                self.capreqs *= 2
            i = self.nreqs
            self.nreqs += 1
        self.seq += 1
        q = &self.reqs[i]
        q.flags = IS_SEND if is_send else 0
        q.rank = rank.id
        q.peer = peer
        q.tag = tag
        q.context = SUBCOMM if rank.context == USER and tag == SUBCOMM_TAG else rank.context
        q.size = size
        q.posted = rank.clock
        q.seq = self.seq
        q.opid = opid
        q.transfer = 0.0
        q.completion = 0.0
        for k in range(3):
            q.path[k] = rank.path[k]
        q.refs = 0
        q.qnext = q.qprev = q.dnext = q.dprev = -1
        q.opos = -1
        return i

    cdef inline int release(self, int i) except -1:
        self.reqs[i].refs -= 1
        if self.reqs[i].refs == 0:
            if self.reqs[i].flags & HAS_STATUS:
                del self.status_of[i]
            if pevpm_push(&self.free_reqs, &self.nfree, &self.capfree, i) < 0:
                raise MemoryError()
        return 0

    cdef inline void complete(self, int i, double time, double *path, double comm) noexcept:
        cdef Req *q = &self.reqs[i]
        q.flags |= DONE
        q.completion = time
        q.path[0], q.path[1], q.path[2] = path[0], path[1], path[2]
        if not q.flags & IS_SEND:
            q.transfer = comm
        elif comm == 0.0:               # a send's comm is its transfer time or nothing
            q.flags |= ZERO_COMM

    cdef inline double completion_of(self, int i) noexcept:
        """When the request completed (an EAGER send: when its local time ended,
        the same sum the rank's clock made)."""
        cdef Req *q = &self.reqs[i]
        return q.posted + q.completion if q.flags & EAGER else q.completion

    cdef inline double comm_of(self, int i) noexcept:
        """The communication time the request's completion carries."""
        cdef Req *q = &self.reqs[i]
        return 0.0 if q.flags & ZERO_COMM else q.transfer

    cdef int post_send(self, Rank rank, int opid, long size, long dst, long tag,
                       bint local) except -1:
        cdef int s = self.new_req(rank, 1, opid, size, dst, tag)
        cdef bint eager = self.eager(opid, size)
        cdef int contention, r, context = self.reqs[s].context, k
        cdef double spent = 0.0
        cdef Req *q
        if dst == PROC_NULL:
            self.complete(s, rank.clock, rank.path, 0.0)
            return s
        if local and dst != rank.id:
            contention = self.contention(rank.id, dst, rank.clock, opid)
            spent = self.local_completion(s, contention, self.duplex)
            self.spend(rank, 1, spent)
        q = &self.reqs[s]
        if eager:                       # done now: completion posted + spent, path origin + spent
            q.flags |= DONE | ZERO_COMM | EAGER
            q.completion = spent if spent > 0 else 0.0
        if (self.maxmin is not None and not self.flow_from_match and dst != rank.id
                and self.node_of[rank.id] != self.node_of[dst]):
            self.flow_for(s, self.flow_add(rank.id, dst, q.posted, size), 0.0)
            q = &self.reqs[s]
        q.refs += 1
        self.queue_append(dst, rank.id, s)
        if self.queues[dst].dhead < 0:
            self.queues[dst].dhead = s
        else:
            self.reqs[self.queues[dst].dtail].dnext = s
            q.dprev = self.queues[dst].dtail
        self.queues[dst].dtail = s
        if self.queues[dst].nposted:
            for k in range(4 if self.queues[dst].nwild else 1):
                if k % 2 and context == SUBCOMM:    # its receives name the tag
                    continue
                r = self.bucket_head(dst, context, rank.id if k < 2 else ANY_SOURCE,
                                     tag if k % 2 == 0 else ANY_TAG)
                if r >= 0:
                    while r >= 0:
                        if not self.reqs[r].flags & QUEUED:
                            self.queue_decision(r)
                        r = self.reqs[r].qnext
        return s

    cdef inline void link_last(self, int *head, int *tail, int req) noexcept:
        """Put request ``req`` at the end of the queue whose ends are ``head``, ``tail``."""
        if head[0] < 0:                 # a new or idle queue
            head[0] = tail[0] = req
        else:
            self.reqs[tail[0]].qnext = req
            self.reqs[req].qprev = tail[0]
            tail[0] = req

    cdef inline int queue_slot(self, Queues *d, long src) noexcept:
        """The slot of the send queue from ``src`` in ``d`` (its destination's), or -1."""
        cdef int k
        for k in range(CHANNELS):
            if d.shead[k] >= 0 and d.ssrc[k] == src:
                return k
        return -1

    cdef inline int queue_head(self, long dst, long src) noexcept:
        """The first send queued from ``src`` to ``dst``, or -1."""
        cdef Queues *d = &self.queues[dst]
        cdef int k = self.queue_slot(d, src)
        cdef pevpm_hent_t *entry
        if k >= 0:
            return d.shead[k]
        if self.far[2 * dst] == 0:
            return -1
        entry = pevpm_ht_find(&self.send_queues, <uint64_t> dst * self.numprocs + src)
        return -1 if entry == NULL else entry.v1

    cdef int queue_append(self, long dst, long src, int s) except -1:
        """Queue send ``s`` from ``src`` to ``dst``: in its queue's slot, a free
        slot when it has none, or the table when no slot is free."""
        cdef Queues *d = &self.queues[dst]
        cdef int k = self.queue_slot(d, src)
        cdef uint64_t key = <uint64_t> dst * self.numprocs + src
        if k < 0 and self.far[2 * dst] and self.far_join(&self.send_queues, key, s):
            return 0
        if k < 0:
            for k in range(CHANNELS):
                if d.shead[k] < 0:
                    d.ssrc[k] = src
                    break
            else:
                return self.far_open(&self.send_queues, key, &self.far[2 * dst], s)
        self.link_last(&d.shead[k], &d.stail[k], s)
        return 0

    cdef inline bint far_join(self, pevpm_htab_t *table, uint64_t key, int req) noexcept:
        """Put ``req`` last in ``table``'s queue under ``key`` if that queue
        holds a request; whether it did."""
        cdef pevpm_hent_t *entry = pevpm_ht_find(table, key)
        if entry == NULL or entry.v1 < 0:
            return False
        self.link_last(&entry.v1, &entry.v2, req)
        return True

    cdef int far_open(self, pevpm_htab_t *table, uint64_t key, int *far, int req) except -1:
        """Start ``table``'s queue under ``key`` with ``req`` (one more in ``far``)."""
        cdef pevpm_hent_t *entry = pevpm_ht_get(table, key)
        if entry == NULL:
            raise MemoryError()
        self.link_last(&entry.v1, &entry.v2, req)
        far[0] += 1
        return 0

    cdef void queue_remove(self, Req *q) noexcept:
        """Take send ``q`` out of its queue (a slot freed, or a table entry left)."""
        cdef Queues *d = &self.queues[q.peer]
        cdef int k = self.queue_slot(d, q.rank)
        cdef pevpm_hent_t *entry
        if k >= 0:
            self.unlink(&d.shead[k], &d.stail[k], q)
            return
        entry = pevpm_ht_find(&self.send_queues, <uint64_t> q.peer * self.numprocs + q.rank)
        if self.take_out(&self.send_queues, entry, q):
            self.far[2 * q.peer] -= 1

    cdef inline int bucket_slot(self, Queues *d, long context, long source,
                                long tag) noexcept:
        """The slot of the bucket (context, source, tag) in ``d`` (its rank's), or -1."""
        cdef int key = <int> (2 * source + (context & 1)), k
        for k in range(CHANNELS):
            if d.rhead[k] >= 0 and d.rkey[k] == key and d.rtag[k] == tag:
                return k
        return -1

    cdef inline int bucket_head(self, long rank, long context, long source,
                                long tag) noexcept:
        """The first receive in the rank's bucket (context, source, tag), or -1."""
        cdef Queues *d = &self.queues[rank]
        cdef int k = self.bucket_slot(d, context, source, tag)
        cdef pevpm_hent_t *entry
        if k >= 0:
            return d.rhead[k]
        if self.far[2 * rank + 1] == 0:
            return -1
        entry = pevpm_ht_find(&self.buckets, self.bucket_key(rank, context, source, tag, False))
        return -1 if entry == NULL else entry.v1

    cdef int bucket_append(self, long rank, long context, long source, long tag,
                           int r) except -1:
        """Put receive ``r`` last in its bucket: its slot, a free slot when it
        has none, or the table when no slot is free."""
        cdef Queues *d = &self.queues[rank]
        cdef int k = self.bucket_slot(d, context, source, tag)
        cdef uint64_t key
        if k < 0 and self.far[2 * rank + 1] and self.far_join(
                &self.buckets, self.bucket_key(rank, context, source, tag, False), r):
            return 0
        if k < 0:
            for k in range(CHANNELS):
                if d.rhead[k] < 0:
                    d.rkey[k] = <int> (2 * source + (context & 1))
                    d.rtag[k] = <int> tag
                    break
            else:
                key = self.bucket_key(rank, context, source, tag, True)
                if key == NO_KEY:
                    raise Unsupported(f"more than {MAX_TAG_IDS:,} distinct tags beyond "
                                      f"{PACKED_RANKS:,} ranks")
                return self.far_open(&self.buckets, key, &self.far[2 * rank + 1], r)
        self.link_last(&d.rhead[k], &d.rtail[k], r)
        return 0

    cdef void bucket_remove(self, Req *q) noexcept:
        """Take receive ``q`` out of its bucket (a slot freed, or a table entry left)."""
        cdef Queues *d = &self.queues[q.rank]
        cdef int k = self.bucket_slot(d, q.context, q.peer, q.tag)
        cdef pevpm_hent_t *entry
        if k >= 0:
            self.unlink(&d.rhead[k], &d.rtail[k], q)
            return
        entry = pevpm_ht_find(&self.buckets,
                              self.bucket_key(q.rank, q.context, q.peer, q.tag, False))
        if self.take_out(&self.buckets, entry, q):
            self.far[2 * q.rank + 1] -= 1

    cdef inline uint64_t bucket_key(self, long rank, long context, long source,
                                    long tag, bint adding) noexcept:
        """(rank, context, source, tag) as one number: ANY_SOURCE is source P,
        the SUBCOMM context shares the user's bit (its one tag, SUBCOMM_TAG,
        never names a user bucket), the tag (32 bits) is the high half, the source the lowest digit (a
        rank's buckets from consecutive sources are neighbours in the table).
        Beyond PACKED_RANKS ranks the low part takes 42 bits and the tag is
        replaced by its number in ``tag_ids`` (given when ``adding``); NO_KEY,
        which no bucket has: a tag no receive has posted, or no number left
        (``adding``: too many tags, or out of memory)."""
        cdef uint64_t src = self.numprocs if source == ANY_SOURCE else source
        cdef uint64_t low = (<uint64_t> rank * 2 + (context & 1)) * (self.numprocs + 1) + src
        cdef pevpm_hent_t *entry
        if not self.wide:
            return (<uint64_t> <uint32_t> (<int> tag) << 32) | low
        if adding:
            entry = pevpm_ht_get(&self.tag_ids, <uint64_t> <uint32_t> (<int> tag))
            if entry == NULL or (entry.v1 < 0 and self.tag_ids.n > MAX_TAG_IDS):
                return NO_KEY
            if entry.v1 < 0:
                entry.v1 = <int> self.tag_ids.n - 1
        else:
            entry = pevpm_ht_find(&self.tag_ids, <uint64_t> <uint32_t> (<int> tag))
            if entry == NULL:
                return NO_KEY
        return (<uint64_t> entry.v1 << 42) | low

    cdef int post_recv(self, Rank rank, int opid, long size, long src, long tag,
                       status) except -1:
        cdef int r = self.new_req(rank, 0, opid, size, src, tag)
        if status is not None:
            self.reqs[r].flags |= HAS_STATUS
            self.status_of[r] = status
        if src == PROC_NULL:
            self.complete(r, rank.clock, rank.path, 0.0)
            return r
        self.reqs[r].refs += 1
        self.bucket_append(rank.id, self.reqs[r].context, src, tag, r)
        self.queues[rank.id].nposted += 1
        if src == ANY_SOURCE or tag == ANY_TAG:
            self.queues[rank.id].nwild += 1
        if self.has_candidate(r):
            self.queue_decision(r)
        return r

    cdef bint has_candidate(self, int ri) noexcept:
        cdef Req *r = &self.reqs[ri]
        cdef Req *q
        cdef int s
        if r.peer != ANY_SOURCE:
            return self.first_match(self.queue_head(r.rank, r.peer), ri) >= 0
        s = self.queues[r.rank].dhead
        while s >= 0:
            q = &self.reqs[s]
            if q.context == r.context and (r.tag == ANY_TAG or r.tag == q.tag):
                return True
            s = q.dnext
        return False

    cdef int queue_decision(self, int r) except -1:
        self.reqs[r].flags |= QUEUED
        self.reqs[r].refs += 1
        return self.heap_push(self.reqs[r].posted, r)

    cdef int keep_numbered(self, Rank rank, int64_t number, int i) except -1:
        """:meth:`keep_request` for an array code's request ``number`` (kept in the
        rank's C table, as ``requests`` keeps a name)."""
        cdef uint64_t key = numbered_key(number)
        cdef pevpm_hent_t *entry
        if key >= PEVPM_TOMB:
            raise Unsupported(f"a request numbered {number} (past 2**63 - 3)")
        if rank.numbered.e == NULL and pevpm_ht_init(&rank.numbered, 64) < 0:
            raise MemoryError()
        entry = pevpm_ht_get(&rank.numbered, key)
        if entry == NULL:
            raise MemoryError()
        if entry.v1 >= 0:
            self.release(entry.v1)
        entry.v1 = i
        self.reqs[i].refs += 1
        return self.keep_request(rank, None, i)

    cdef int keep_request(self, Rank rank, name, int i) except -1:
        if name is not None:        # a collective's requests have no names
            old = rank.requests.get(name)
            if old is not None:
                self.release(old)
            rank.requests[name] = i
            self.reqs[i].refs += 1
        self.reqs[i].opos = rank.nout
        if pevpm_push(&rank.out, &rank.nout, &rank.capout, i) < 0:
            raise MemoryError()
        rank.nlive += 1
        self.reqs[i].refs += 1
        return 0

    # ---------------------------------------------------------------- matching
    cdef int contention(self, int src, long dst, double at, int opid) except -1:
        """The scoreboard's contention level for a message starting at ``at``
        (a pair exchanging both ways counts once per link); sets ``duplex``:
        an MPI_Sendrecv's message, or one meeting a message the other way."""
        self.duplex = opid == SENDRECV_OP
        if not self.contention_matters:
            return 1
        cdef int level = 1, link, k, c, mine, theirs, nl
        cdef int first = self.route_of(src, dst, &nl)
        for k in range(nl):
            link = self.route_links[first + k]
            while self.nends[link] > 0 and self.ends[link][0].end <= at:
                self.link_pop(link)
            if self.nends[link] == 0:           # an empty link: no counts to look up
                mine = theirs = 0
            else:
                mine = self.pairs_in_transit(link, src, dst, &theirs)
            if theirs > 0:
                self.duplex = True
            c = (self.load[link] + (mine >= theirs) + self.capacity[link] - 1) \
                // self.capacity[link]
            if c > level:
                level = c
        return level

    cdef int route_of(self, int src, long dst, int *length) except -1:
        """Where the route from ``src``'s node to ``dst``'s starts in
        ``route_links`` (its ``length`` links follow): the placement's
        ``node_route``, asked once per pair of nodes, or, once a node has
        asked for ROUTES_ONE_AT_A_TIME routes and a 16th of the nodes, its
        ``node_routes_from`` (if the topology makes rows)."""
        cdef int a = self.node_of[src], b = self.node_of[dst], k
        cdef pevpm_hent_t *e = pevpm_ht_find(&self.routes, <uint64_t> a * self.nodes + b)
        if e == NULL and self.route_rows is not None:
            if self.route_asks == NULL:
                self.route_asks = <int *> calloc(self.nodes, sizeof(int))
                if self.route_asks == NULL:
                    raise MemoryError()
            self.route_asks[a] += 1
            if self.route_asks[a] > max(ROUTES_ONE_AT_A_TIME, self.nodes >> 4):
                self.route_row(a)
                e = pevpm_ht_find(&self.routes, <uint64_t> a * self.nodes + b)
        if e != NULL:
            length[0] = e.v2
            return e.v1
        route = self.placement.node_route(a, b)
        cdef int n = len(route)
        cdef int *links = <int *> malloc(max(n, 1) * sizeof(int))
        if links == NULL:
            raise MemoryError()
        try:
            for k in range(n):
                link = route[k]
                if not 0 <= link < self.nlinks:
                    raise Unsupported(f"a route through link {link!r}, which the placement lacks")
                links[k] = link
            self.keep_route(a, b, links, n)
        finally:
            free(links)
        length[0] = n
        return self.nroute_links - n

    cdef int keep_route(self, int a, int b, const int *links, int n) except -1:
        """Put node ``a``'s route to ``b`` (``n`` link ids) at the end of the table."""
        cdef int k
        cdef pevpm_hent_t *e
        for k in range(n):
            if pevpm_push(&self.route_links, &self.nroute_links, &self.caproute_links,
                          links[k]) < 0:
                raise MemoryError()
        e = pevpm_ht_add(&self.routes, <uint64_t> a * self.nodes + b)
        if e == NULL:
            raise MemoryError()
        e.v1, e.v2 = self.nroute_links - n, n
        return 0

    cdef int route_row(self, int a) except -1:
        """Put node ``a``'s routes to every node not yet in the table there,
        made all at once (``Placement.node_routes_from``; a topology that
        makes none is not asked again)."""
        cdef int b, k, at = 0
        row = self.route_rows(a)
        if row is None:
            self.route_rows = None
            return 0
        lengths, links = row
        cdef const int[::1] length = np.ascontiguousarray(lengths, dtype=np.int32)
        cdef const int[::1] link = np.ascontiguousarray(links, dtype=np.int32)
        if length.shape[0] != self.nodes or link.shape[0] != np.sum(lengths):
            raise Unsupported(f"node {a}'s routes to all nodes do not match the network")
        for k in range(link.shape[0]):
            if not 0 <= link[k] < self.nlinks:
                raise Unsupported(f"a route through link {link[k]}, which the placement lacks")
        for b in range(self.nodes):
            if pevpm_ht_find(&self.routes, <uint64_t> a * self.nodes + b) == NULL:
                self.keep_route(a, b, &link[at] if length[b] else NULL, length[b])
            at += length[b]
        return 0

    cdef inline uint64_t pair_key(self, int link, long src, long dst) noexcept:
        """The key of the two ranks' counts on ``link``, both directions in one entry."""
        cdef uint64_t P = self.numprocs
        if src > dst:
            src, dst = dst, src
        return (<uint64_t> link * P + <uint64_t> src) * P + <uint64_t> dst

    cdef inline int pairs_in_transit(self, int link, long src, long dst, int *theirs) noexcept:
        """Messages on ``link`` from ``src`` to ``dst`` now; ``theirs``: the other way."""
        cdef pevpm_hent_t *e = pevpm_ht_find(&self.pair_counts, self.pair_key(link, src, dst))
        if e == NULL:
            theirs[0] = 0
            return 0
        theirs[0] = e.v2 if src < dst else e.v1
        return e.v1 if src < dst else e.v2

    cdef int scoreboard_add(self, int src, long dst, double end) except -1:
        if not self.contention_matters or src == dst:
            return 0
        cdef int nl, k
        cdef int first = self.route_of(src, dst, &nl)
        for k in range(nl):
            self.link_push(self.route_links[first + k], end, src, dst)
        return 0

    cdef int link_push(self, int link, double end, int src, int dst) except -1:
        cdef Transit *h
        cdef int i, parent, mine, theirs
        cdef pevpm_hent_t *e = pevpm_ht_get(&self.pair_counts, self.pair_key(link, src, dst))
        if e == NULL:
            raise MemoryError()
        if e.v1 < 0:                    # a new entry
            e.v1 = e.v2 = 0
        if src < dst:
            mine, theirs = e.v1, e.v2
            e.v1 += 1
        else:
            mine, theirs = e.v2, e.v1
            e.v2 += 1
        if mine >= theirs:
            self.load[link] += 1
        if self.nends[link] == self.capends[link]:
            h = <Transit *> realloc(self.ends[link],
                                    max(8, 2 * self.capends[link]) * sizeof(Transit))
            if h == NULL:
                raise MemoryError()
            self.ends[link] = h
            self.capends[link] = max(8, 2 * self.capends[link])
        h = self.ends[link]
        i = self.nends[link]
        self.nends[link] += 1
        while i > 0:
            parent = (i - 1) >> 1
            if h[parent].end <= end:
                break
            h[i] = h[parent]
            i = parent
        h[i].end, h[i].src, h[i].dst = end, src, dst
        return 0

    cdef void link_pop(self, int link) noexcept:
        cdef Transit *h = self.ends[link]
        cdef int n = self.nends[link] - 1, i = 0, child, left, theirs
        cdef Transit last = h[n]
        cdef Transit first = h[0]
        cdef pevpm_hent_t *e
        self.nends[link] = n
        while True:
            child = 2 * i + 1
            if child >= n:
                break
            if child + 1 < n and h[child + 1].end < h[child].end:
                child += 1
            if last.end <= h[child].end:
                break
            h[i] = h[child]
            i = child
        if n > 0:
            h[i] = last
        e = pevpm_ht_find(&self.pair_counts, self.pair_key(link, first.src, first.dst))
        if first.src < first.dst:
            e.v1 -= 1
            left, theirs = e.v1, e.v2
        else:
            e.v2 -= 1
            left, theirs = e.v2, e.v1
        if left == 0 and theirs == 0:
            pevpm_ht_del(&self.pair_counts, e)
        if left >= theirs:
            self.load[link] -= 1

    cdef object transfer_of(self, int s, int contention, bint duplex):
        cdef Req *q = &self.reqs[s]
        key = (q.opid, q.size, q.rank, q.peer, contention, duplex)
        transfer = self.transfers.get(key)
        if transfer is None:
            from pevpm.machine.transfer import Transfer
            if len(self.transfers) > 4096:
                self.transfers.clear()
            transfer = self.transfers[key] = Transfer(
                OP_NAMES[q.opid], q.size, q.rank, q.peer,
                self.node_of[q.rank] == self.node_of[q.peer], contention, duplex)
        return transfer

    cdef double local_completion(self, int s, int contention, bint duplex) except? -1.0:
        if self.comm_kind == COMM_CONSTANT or self.comm_kind == COMM_HOCKNEY:
            return self.local_time
        if self.comm_kind == COMM_LOGGP:
            return max(self.o, self.g)
        if self.planned:
            return self.planned_time(s, contention, duplex, True)
        return self.comm.local_completion_time(self.transfer_of(s, contention, duplex), self.rng)

    cdef double planned_time(self, int s, int contention, bint duplex,
                             bint local) except? -1.0:
        """A profile model's time through its draw plan (cached per message kind)."""
        cdef Req *q = &self.reqs[s]
        cdef Plan plan
        cdef double u, low, high, mixed
        cdef int intra = self.node_of[q.rank] == self.node_of[q.peer]
        cdef long kind = local + 2 * duplex
        cdef long slot = ((((q.opid * 1000003 + q.size) * 31 + intra) * 31 + contention) * 4
                          + kind) & (PLAN_SLOTS - 1)
        cdef long *k = &self.plan_keys[slot * 5]
        if (k[0] == q.opid and k[1] == q.size and k[2] == intra and k[3] == contention
                and k[4] == kind):
            plan = <Plan> self.plan_slots[slot]          # the common case: no Python lookup
        else:
            key = (kind, q.opid, q.size, intra, contention)
            found = self.plans.get(key)
            if found is None:
                if len(self.plans) > 65536:
                    self.plans.clear()
                found = self.plans[key] = Plan(self.comm.draw_plan(
                    self.transfer_of(s, contention, duplex), local))
            plan = <Plan> found
            self.plan_slots[slot] = plan
            k[0], k[1], k[2], k[3], k[4] = q.opid, q.size, intra, contention, kind
        if plan.kind == PLAN_FIXED:
            return plan.value
        if plan.kind == PLAN_ONE:
            u = self.bitgen.next_double(self.bitgen.state)
            return plan.inv0.interp(u)
        if plan.kind == PLAN_MIX:
            u = self.bitgen.next_double(self.bitgen.state)
            low = plan.inv0.interp(u)
            high = plan.inv1.interp(u)
            mixed = (1 - plan.w) * low + plan.w * high
            return 0.0 if 0.0 > mixed else mixed
        transfer = self.transfer_of(s, contention, duplex)
        if local:
            return self.comm.local_completion_time(transfer, self.rng)
        return self.comm.transfer_time(transfer, self.rng)

    cdef int draw_transfer(self, int s, double matched) except -1:
        cdef Req *q = &self.reqs[s]
        cdef int contention, nl, first
        cdef double seconds, latency, bandwidth, start, data
        cdef long size = q.size
        cdef bint network
        if q.rank == q.peer:                 # a message to itself: a local copy
            q.transfer = q.size / self.copy_rate
            q.flags |= DRAWN
            return 0
        contention = self.contention(q.rank, q.peer, q.posted, q.opid)
        q = &self.reqs[s]
        # Between the nodes of a synthetic network the model gives the time for
        # no bytes (the record says 0 bytes while it is asked), the links the rest.
        network = self.network and self.node_of[q.rank] != self.node_of[q.peer]
        if network:
            q.size = 0
        if self.comm_kind == COMM_HOCKNEY:
            latency, bandwidth = self.latency, self.bandwidth
            if self.node_of[q.rank] == self.node_of[q.peer]:
                if self.has_intra_latency:
                    latency = self.intra_latency
                if self.has_intra_bandwidth:
                    bandwidth = self.intra_bandwidth
            if self.share_bandwidth:
                bandwidth /= contention
            seconds = latency + q.size / bandwidth
        elif self.comm_kind == COMM_CONSTANT:
            seconds = self.latency
        elif self.comm_kind == COMM_LOGGP:
            seconds = 2 * self.o + self.L + max(q.size - 1, 0) * self.G
        elif self.planned:
            seconds = self.planned_time(s, contention, self.duplex, False)
        else:
            seconds = self.comm.transfer_time(self.transfer_of(s, contention, self.duplex),
                                              self.rng)
        q = &self.reqs[s]
        q.size = size
        if not seconds >= 0:
            raise Unsupported("a negative transfer time from the communication model")
        if network:
            start = q.posted
            if self.flow_from_match and matched > start:
                start = matched
            if self.maxmin is not None:
                return self.draw_flow(s, start, seconds)
            first = self.route_of(q.rank, q.peer, &nl)
            latency = self.route_latency(first, nl)
            data = self.flow_occupy(first, nl, start, size)
            q = &self.reqs[s]
            seconds = seconds + latency + data + (start - q.posted)
        q = &self.reqs[s]
        q.transfer = seconds
        q.flags |= DRAWN
        return 0

    # ------------------------------------------------------ flow-level sharing
    # Max-min sharing (Machine.flow_sharing "max-min"): pevpm.vm.kernel.maxmin's network
    # itself, asked as the reference engine asks it (draw_flow, rerate, and the match
    # sweep's flow_events, flow_stale, flow_unwait, flow_wait).
    cdef int flow_events(self) except -1:
        """Run the network up to the next decision; a receive waiting for a
        flow that ends before the time it was queued at comes back at the end
        (its entry at the old time is outdated)."""
        cdef FluidNetwork net = self.maxmin
        cdef int k, n, f, r
        cdef double t
        while self.nheap > 0:
            t = net.next_c()
            if t > self.heap[0].time:
                return 0
            n = net.step_c()
            for k in range(n):
                f = net.done[k]
                r = net.flows[f].waiter
                if r >= 0 and net.flows[f].key > t:
                    self.maxmin_stale.setdefault(r, []).append(net.flows[f].key)
                    net.flows[f].key = t
                    self.reqs[r].refs += 1
                    self.heap_push(t, r)
        return 0

    cdef bint flow_stale(self, Decision d) except -1:
        """Whether ``d`` is an outdated entry (then released)."""
        times = self.maxmin_stale.get(d.req)
        if times is None or d.time not in times:
            return False
        times.remove(d.time)
        if not times:
            del self.maxmin_stale[d.req]
        self.release(d.req)
        return True

    cdef int flow_unwait(self, int r) except -1:
        """Receive ``r`` is decided now: it no longer waits for a flow."""
        cdef int f
        cdef pevpm_hent_t *entry
        if self.wait_of.n:
            entry = pevpm_ht_find(&self.wait_of, <uint64_t> r)
            if entry != NULL:
                f = entry.v1
                pevpm_ht_del(&self.wait_of, entry)
                if self.maxmin.flows[f].waiter == r:
                    self.maxmin.flows[f].waiter = -1
        return 0

    cdef bint flow_wait(self, int f, int r) except -1:
        """Queue receive ``r`` again until flow ``f`` ends, at the time it
        would end at the rates now; False if it has ended (or ``f`` is -1:
        no flow)."""
        cdef double key
        cdef pevpm_hent_t *entry
        if f < 0 or self.maxmin.ended_c(f):
            return False
        key = self.maxmin.end_c(f)
        self.maxmin.flows[f].waiter = r
        self.maxmin.flows[f].key = key
        entry = pevpm_ht_get(&self.wait_of, <uint64_t> r)
        if entry == NULL:
            raise MemoryError()
        entry.v1 = f
        self.reqs[r].flags |= QUEUED
        self.heap_push(key, r)
        return True

    cdef int draw_flow(self, int s, double start, double base) except -1:
        """A max-min message's time: ``base`` plus its flow's, provisional
        (the flow shares links once the route's latency has passed)."""
        cdef Req *q = &self.reqs[s]
        cdef int f = self.flow_of_send(s)
        if f < 0:
            f = self.flow_add(q.rank, q.peer, start, q.size)
        self.flow_for(s, f, base)
        self.rerate(s)
        self.reqs[s].flags |= DRAWN
        return 0

    cdef int rerate(self, int s) except -1:
        """A max-min flow's transfer time given the flows known now."""
        cdef int f = self.flow_of_send(s)
        cdef double end = self.maxmin.end_c(f)
        self.reqs[s].transfer = self.maxmin.flows[f].base + end - self.reqs[s].posted
        return 0

    cdef inline void flow_forget(self, int s) noexcept:
        """Send ``s`` is delivered: it has no flow any more."""
        cdef pevpm_hent_t *entry = pevpm_ht_find(&self.flow_of, <uint64_t> s)
        if entry != NULL:
            pevpm_ht_del(&self.flow_of, entry)

    cdef inline int flow_of_send(self, int s) noexcept:
        """Send ``s``'s max-min flow, or -1."""
        cdef pevpm_hent_t *entry = pevpm_ht_find(&self.flow_of, <uint64_t> s)
        return -1 if entry == NULL else entry.v1

    cdef int flow_for(self, int s, int f, double base) except -1:
        """Send ``s`` travels as flow ``f``; its time is ``base`` plus the flow's."""
        cdef pevpm_hent_t *entry = pevpm_ht_get(&self.flow_of, <uint64_t> s)
        if entry == NULL:
            raise MemoryError()
        entry.v1 = f
        self.maxmin.flows[f].base = base
        return 0

    cdef int flow_add(self, int src, long dst, double start, long size) except -1:
        """A max-min flow of ``size`` bytes from ``src``'s node to ``dst``'s,
        sent at ``start``: it shares links once the route's latency has passed."""
        cdef int nl
        cdef int first = self.route_of(src, dst, &nl)
        return self.maxmin.add_c(&self.route_links[first], nl,
                                 start + self.route_latency(first, nl),
                                 <double> size if size > 0 else 0.0)

    cdef inline double route_latency(self, int first, int nl) noexcept:
        """The sum of the latencies of the links ``route_links[first:first + nl]``."""
        cdef int k
        cdef double latency = 0.0
        for k in range(nl):
            latency += self.link_latency[self.route_links[first + k]]
        return latency

    # pevpm.vm.kernel.flows.FlowNetwork in C arrays: the same walk, the same sums.
    cdef double flow_occupy(self, int first, int nl, double start, long size) except? -1.0:
        """Seconds a flow of ``size`` bytes from ``start`` takes on the route at
        ``route_links[first:first + nl]``; reserves it on the links.  Each
        link's free rate and next breakpoint at the walk's place are kept in
        ``walk_at`` and read again only when the walk passes that breakpoint."""
        cdef int j, link, i, nseg = 0
        cdef double t = start, left = <double> size, rate, until, end
        cdef double earliest = NAN
        cdef double *at
        if size <= 0 or nl == 0:
            return 0.0
        if nl > self.capwalk:
            self.walk = <int *> realloc(self.walk, nl * sizeof(int))
            self.walk_at = <double *> realloc(self.walk_at, 2 * nl * sizeof(double))
            if self.walk == NULL or self.walk_at == NULL:
                raise MemoryError()
            self.capwalk = nl
        at = self.walk_at
        for j in range(nl):
            link = self.route_links[first + j]
            if self.nflow[link] > FLOW_KEEP and self.nflow[link] > 2 * self.flow_kept[link]:
                if isnan(earliest):
                    earliest = self.flow_floor_now()
                self.flow_prune(link, earliest)
            self.walk[j] = _gallop_back(self.flow_times[link], self.nflow[link], start) - 1
            self.walk_here(j, link)
        while True:
            rate = INFINITY
            until = INFINITY
            for j in range(nl):
                if at[2 * j] < rate:
                    rate = at[2 * j]
                if at[2 * j + 1] < until:
                    until = at[2 * j + 1]
            if rate > 0.0:
                if until == INFINITY or left <= rate * (until - t):
                    end = t + left / rate
                    nseg = self.flow_segment(nseg, t, end, rate)
                    break
                left -= rate * (until - t)
                nseg = self.flow_segment(nseg, t, until, rate)
            t = until
            for j in range(nl):
                if at[2 * j + 1] == t:
                    self.walk[j] += 1
                    self.walk_here(j, self.route_links[first + j])
        for j in range(nl):
            self.flow_reserve(self.route_links[first + j], nseg)
        return end - start

    cdef inline void walk_here(self, int j, int link) noexcept:
        """``walk_at`` for the route's ``j``-th link at its walk's index: the
        bandwidth its reservations leave free there, and its next breakpoint
        (INFINITY: none)."""
        cdef int i = self.walk[j]
        self.walk_at[2 * j] = self.link_bandwidth[link] - (self.flow_rates[link][i] if i >= 0
                                                           else 0.0)
        self.walk_at[2 * j + 1] = (self.flow_times[link][i + 1] if i + 1 < self.nflow[link]
                                   else INFINITY)

    cdef double flow_floor_now(self) noexcept:
        """A time before which no flow starts any more, for pruning: the last
        ``flow_earliest``, asked again every FLOOR_REUSE prunings.  An older
        one is still a floor (clocks never go back, and every send posted
        since was posted at its rank's clock, which was not below it); it
        only prunes less."""
        if self.floor_uses <= 0:
            self.flow_floor = self.flow_earliest()
            self.floor_uses = FLOOR_REUSE
        self.floor_uses -= 1
        return self.flow_floor

    cdef double flow_earliest(self) noexcept:
        """The earliest time a flow can still start: no rank's clock goes back,
        and a send posted but not drawn yet starts at its post."""
        cdef double earliest = INFINITY
        cdef Rank rank
        cdef Req *q
        cdef int i
        for rank in self.ranks:
            if not rank.done and rank.clock < earliest:
                earliest = rank.clock
        for i in range(self.nreqs):
            q = &self.reqs[i]
            if (q.refs > 0 and q.flags & IS_SEND and not q.flags & DRAWN and q.peer >= 0
                    and q.posted < earliest):
                earliest = q.posted
        return earliest

    cdef void flow_prune(self, int link, double earliest) noexcept:
        """Drop ``link``'s breakpoints before the segment holding ``earliest``
        (flow_earliest).  So nothing dropped is ever read again and the
        results are those without pruning (which the reference engine does
        not do: it only bounds this core's memory)."""
        cdef int keep, n = self.nflow[link]
        keep = <int> _bisect_right(self.flow_times[link], n, earliest) - 1
        if keep > 0:
            memmove(self.flow_times[link], self.flow_times[link] + keep,
                    (n - keep) * sizeof(double))
            memmove(self.flow_rates[link], self.flow_rates[link] + keep,
                    (n - keep) * sizeof(double))
            self.nflow[link] = n - keep
        self.flow_kept[link] = self.nflow[link]

    cdef int flow_segment(self, int nseg, double a, double b, double rate) except -1:
        """Append the span (a, b, rate) to the flow being placed; the new count."""
        cdef double *grown
        if nseg == self.capsegments:
            grown = <double *> realloc(self.segments, 3 * max(8, 2 * nseg) * sizeof(double))
            if grown == NULL:
                raise MemoryError()
            self.segments = grown
            self.capsegments = max(8, 2 * nseg)
        self.segments[3 * nseg] = a
        self.segments[3 * nseg + 1] = b
        self.segments[3 * nseg + 2] = rate
        return nseg + 1

    cdef int flow_split(self, int link, double x, int lo) except -1:
        """Make ``x`` a breakpoint of ``link`` (keeping the rate there); its
        index.  No breakpoint before index ``lo`` is later than ``x``."""
        cdef int n = self.nflow[link], c
        cdef int i = <int> _gallop_right(self.flow_times[link], lo, n, x) - 1
        cdef double *grown
        if i >= 0 and self.flow_times[link][i] == x:
            return i
        if n == self.capflow[link]:
            c = max(8, 2 * n)
            grown = <double *> realloc(self.flow_times[link], c * sizeof(double))
            if grown == NULL:
                raise MemoryError()
            self.flow_times[link] = grown
            grown = <double *> realloc(self.flow_rates[link], c * sizeof(double))
            if grown == NULL:
                raise MemoryError()
            self.flow_rates[link] = grown
            self.capflow[link] = c
        memmove(self.flow_times[link] + i + 2, self.flow_times[link] + i + 1,
                (n - i - 1) * sizeof(double))
        memmove(self.flow_rates[link] + i + 2, self.flow_rates[link] + i + 1,
                (n - i - 1) * sizeof(double))
        self.flow_times[link][i + 1] = x
        self.flow_rates[link][i + 1] = self.flow_rates[link][i] if i >= 0 else 0.0
        self.nflow[link] = n + 1
        return i + 1

    cdef int flow_reserve(self, int link, int nseg) except -1:
        """Add each of the flow's ``nseg`` spans to ``link``, then drop the
        breakpoints there that no longer change the rate."""
        cdef int i = 0, k, low = -1, after = 0
        cdef double b
        for k in range(nseg):              # the spans follow one another in time
            i = self.flow_split(link, self.segments[3 * k], after)
            if low < 0:
                low = i
            b = self.segments[3 * k + 1]
            after = self.flow_split(link, b, i + 1)
            while i < self.nflow[link] and self.flow_times[link][i] < b:
                self.flow_rates[link][i] += self.segments[3 * k + 2]
                i += 1
        self.flow_merge(link, low, i + 1)
        return 0

    cdef void flow_merge(self, int link, int low, int high) noexcept:
        """pevpm.vm.kernel.flows._merge on ``link``."""
        cdef int n = self.nflow[link], i, kept = low
        cdef double *times = self.flow_times[link]
        cdef double *rates = self.flow_rates[link]
        cdef double before = rates[low - 1] if low > 0 else 0.0
        if high > n:
            high = n
        for i in range(low, high):
            if rates[i] != before:
                times[kept] = times[i]
                rates[kept] = rates[i]
                before = rates[i]
                kept += 1
        memmove(times + kept, times + high, (n - high) * sizeof(double))
        memmove(rates + kept, rates + high, (n - high) * sizeof(double))
        self.nflow[link] = n - (high - kept)

    cdef int deliver(self, int s, int r) except -1:
        cdef Req *send = &self.reqs[s]
        cdef Req *recv = &self.reqs[r]
        cdef double arrival
        cdef double path[3]
        if send.size > recv.size:
            raise Unsupported("a message longer than its receive (truncation)")
        if self.maxmin is not None:
            self.flow_forget(s)
        self.unqueue(s, r)
        if recv.flags & HAS_STATUS:
            source, tag = status_fields(self.status_of[r])
            env = (<Rank> self.ranks[recv.rank]).env
            env[source], env[tag] = send.rank, send.tag
        arrival = send.posted + send.transfer
        self.scoreboard_add(send.rank, send.peer, arrival)
        self.messages += 1
        send = &self.reqs[s]
        recv = &self.reqs[r]
        if arrival > recv.posted:
            path[0], path[1], path[2] = send.path[0], send.path[1] + send.transfer, send.path[2]
            self.complete(r, arrival, path, send.transfer)
        else:
            self.complete(r, recv.posted, recv.path, 0.0)
        self.notify(r)
        send = &self.reqs[s]
        recv = &self.reqs[r]
        if not send.flags & DONE:
            self.complete(s, recv.completion, recv.path, send.transfer)
            self.notify(s)
        send = &self.reqs[s]
        recv = &self.reqs[r]
        if self.records is not None:
            self.records.append(MessageRecord(send.rank, send.peer, send.tag, send.size,
                                              send.posted, recv.completion))
        self.release(s)
        self.release(r)
        return 0

    cdef void unqueue(self, int s, int r) noexcept:
        """Take send ``s`` off its queues and receive ``r`` out of its bucket."""
        cdef Req *q = &self.reqs[s]
        self.queue_remove(q)
        if q.dprev >= 0:
            self.reqs[q.dprev].dnext = q.dnext
        else:
            self.queues[q.peer].dhead = q.dnext
        if q.dnext >= 0:
            self.reqs[q.dnext].dprev = q.dprev
        else:
            self.queues[q.peer].dtail = q.dprev
        q = &self.reqs[r]
        self.bucket_remove(q)
        self.queues[q.rank].nposted -= 1
        if q.peer == ANY_SOURCE or q.tag == ANY_TAG:
            self.queues[q.rank].nwild -= 1

    cdef inline bint take_out(self, pevpm_htab_t *table, pevpm_hent_t *entry, Req *q) noexcept:
        """Unlink ``q`` from the queue whose ends ``entry`` holds.  An emptied
        queue stays, idle, for its next message while the table holds at most
        IDLE_PER_RANK queues per rank (a stencil's few neighbours: no deletion
        and addition per message); beyond that it leaves the table, which so
        holds only the queues in use (an alltoall's would otherwise grow to
        every pair of ranks, each look-up a cache miss).  True: the queue is empty now."""
        if q.qprev < 0 and q.qnext < 0:
            if table.n > IDLE_PER_RANK * self.numprocs:
                pevpm_ht_del(table, entry)
            else:
                entry.v1 = entry.v2 = -1
            return True
        self.unlink(&entry.v1, &entry.v2, q)
        return False

    cdef inline void unlink(self, int *head, int *tail, Req *q) noexcept:
        """Take ``q`` out of the queue whose ends are ``head`` and ``tail``."""
        if q.qprev >= 0:
            self.reqs[q.qprev].qnext = q.qnext
        else:
            head[0] = q.qnext
        if q.qnext >= 0:
            self.reqs[q.qnext].qprev = q.qprev
        else:
            tail[0] = q.qprev

    cdef int notify(self, int i) except -1:
        cdef Rank rank
        if not self.reqs[i].flags & WAITED:
            return 0
        self.reqs[i].flags &= ~WAITED
        rank = self.ranks[self.reqs[i].rank]
        rank.pending -= 1
        if rank.pending == 0:
            self.finish_wait(rank, True)
        return 0

    # ---------------------------------------------------------------- blocking
    cdef bint wait(self, Rank rank) except -1:
        """Wait on the records ``wait_on`` gathered (held already)."""
        cdef int k, i
        rank.pending = 0
        for k in range(rank.nwait):
            i = rank.waits[k]
            if not self.reqs[i].flags & DONE:
                self.reqs[i].flags |= WAITED
                rank.pending += 1
        if rank.pending == 0:
            self.finish_wait(rank, False)
            return False
        rank.blocked = 1
        if self.sharing is not None:
            self.sharing.block(rank.id, rank.clock)
        return True

    cdef int finish_wait(self, Rank rank, bint resume) except -1:
        cdef int last = -1, i, k
        cdef double blocked_for, transfer
        for k in range(rank.nwait):
            i = rank.waits[k]
            if last < 0 or self.completion_of(i) > self.completion_of(last):
                last = i
        if last >= 0 and self.completion_of(last) > rank.clock:
            blocked_for = self.completion_of(last) - rank.clock
            transfer = min(blocked_for, self.comm_of(last))
            self.spend(rank, 2, blocked_for - transfer)
            self.spend(rank, 1, transfer)
            rank.path[0] = self.reqs[last].path[0]
            rank.path[1] = self.reqs[last].path[1]
            rank.path[2] = self.reqs[last].path[2]
            if self.reqs[last].flags & EAGER:
                rank.path[1] = rank.path[1] + self.reqs[last].completion
        for k in range(rank.nwait):
            self.release(rank.waits[k])
        rank.nwait = 0
        rank.blocked = 0
        if resume:
            if self.sharing is not None:
                self.sharing.resume(rank.id, rank.clock)
            if rank.pc < rank.code.n:   # its next instruction, on the way while the sweep ends
                __builtin_prefetch(rank.code.ins[rank.pc])
            if pevpm_push(&self.runnable, &self.nrun, &self.caprun, rank.id) < 0:
                raise MemoryError()
        return 0

    cdef inline int spend(self, Rank rank, int kind, double seconds) except -1:
        if seconds <= 0:
            return 0
        rank.clock = rank.clock + seconds
        rank.spent[kind] += seconds
        rank.path[kind] += seconds
        if rank.clock > self.max_time:
            raise Unsupported("a run past its time limit (the pure-Python engine reports where)")
        return 0

    # ------------------------------------------------------------- collectives
    cdef bint begin_collective(self, Rank rank, Code code, int pc) except -1:
        cdef Ins *ins = code.ins[pc]
        cdef Frame frame
        cdef Site site
        cdef long size, root = 0, occurrence
        cdef list times
        if ins.konst & (1 << C_SIZE):
            size = ins.u.iv[C_SIZE]
        else:
            value = self.operand(ins, C_SIZE, code.code[pc].size, rank)
            if type(value) is not int or value < 0:
                raise Unsupported("a collective size that is negative or not a whole number")
            size = value
        if ins.blocking:                # a rooted call
            if ins.konst & (1 << C_ROOT):
                root = ins.u.iv[C_ROOT]
            else:
                value = self.operand(ins, C_ROOT, code.code[pc].root, rank)
                if type(value) is not int:
                    raise Unsupported("a collective root that is not a rank")
                root = value
            if not 0 <= root < self.numprocs:
                raise Unsupported("a collective root that is not a rank")
        if rank.sites is None:          # the rank's collectives run from its own code
            rank.sites = [None] * code.n
        site = <Site> rank.sites[pc]
        if site is None or site.size != size or site.root != root:
            site = self.new_site(rank, code, pc, size, root)
        occurrence = site.calls[0]
        site.calls[0] += 1
        if site.expansion is None:
            return self.join_timed_collective(rank, site, occurrence)
        if rank.spare is not None:
            frame, rank.spare = rank.spare, None
        else:
            frame = Frame.__new__(Frame)
        frame.code, frame.pc, frame.loopbase = rank.code, rank.pc, rank.loopbase
        frame.requests, frame.outbase = rank.requests, rank.outbase
        times = site.times
        if occurrence < len(times) and times[occurrence] is not None:
            frame.completion = (<CallTimes> times[occurrence]).at
        else:
            frame.completion = self.call_times(site.op, site.where, occurrence)
        if rank.frames is None:
            rank.frames = []
        rank.frames.append(frame)
        rank.code, rank.pc, rank.loopbase, rank.context = (site.expansion, 0, rank.nloops,
                                                           COLLECTIVE_CONTEXT)
        rank.requests, rank.outbase = _NO_NAMES, rank.nout
        return False

    cdef Site new_site(self, Rank rank, Code code, int pc, long size, long root):
        """The rank's Site for its collective call at ``pc`` with this size and
        root (made once per call site and rank: hashing the config costs)."""
        cdef Site site = Site.__new__(Site)
        op, where = code.code[pc].call, code.code[pc].where
        timed = self.timed.get((op, size))
        if timed is None:
            timed = self.timed[(op, size)] = collectives.is_timed(
                op, size, self.numprocs, self.machine.collectives)
        site.expansion = None if timed else self.expansion(op, size, root, rank.id, where)
        site.size, site.root, site.op, site.where = size, root, op, where
        counts = self.place_counts.get(where)
        if counts is None:
            counts = self.place_counts[where] = PlaceCounts(self.numprocs)
        site.counts = counts
        site.calls = &(<PlaceCounts> counts).n[rank.id]
        site.times = self.calls_at.setdefault(where, [])
        rank.sites[pc] = site
        return site

    cdef Code expansion(self, op, long size, long root, int rank, where):
        """Rank ``rank``'s Code for the call of ``op`` at ``where``: its class's
        (:func:`class_expansions`), or where the algorithm has no classes its own."""
        key = (op, size, root, where)
        found = self.expansions.get(key)
        if found is None:
            found = self.expansions[key] = class_expansions(
                op, size, root, self.numprocs, self.machine.collectives, where)
        if found is False:
            return code_for(engine._expansion(op, size, root, rank, self.numprocs,
                                              self.machine.collectives, where), True)
        return (<ClassCodes> found).code_of(rank)

    cdef bint join_timed_collective(self, Rank rank, Site site, long occurrence) except -1:
        """A hardware or measured collective (engine.py's join_timed_collective):
        block until every rank has made its k-th such call, then finish each at
        the time the collectives package gives for their entry times (drawn from
        the run's generator); True when ``rank`` blocked."""
        cdef Rank r
        op, size, root, where = site.op, site.size, site.root, site.where
        rank.timed_calls += 1
        arrived = self.timed_arrivals.setdefault(rank.timed_calls, [])
        arrived.append(rank)
        if len(arrived) < self.numprocs:
            rank.blocked = 1
            if self.sharing is not None:
                self.sharing.block(rank.id, rank.clock)
            return True
        del self.timed_arrivals[rank.timed_calls]
        entries = np.empty(self.numprocs)
        for r in arrived:
            entries[r.id] = r.clock
        done = collectives.timed_completion(
            op, size, root, entries, self.machine.collectives, self.rng, comm_model=self.comm,
            node_of=self.placement.node_of.__getitem__)
        start = collectives.synchronised_start(op, root, entries)
        self.collectives[(where, occurrence)] = CollectiveRecord(op, where, occurrence, done)
        for r in arrived:
            self.spend(r, 2, start[r.id] - r.clock)
            self.spend(r, 1, done[r.id] - r.clock)
            if r is not rank:
                r.blocked = 0
                if self.sharing is not None:
                    self.sharing.resume(r.id, r.clock)
                if pevpm_push(&self.runnable, &self.nrun, &self.caprun, r.id) < 0:
                    raise MemoryError()
        return False

    cdef int end_collective(self, Rank rank) except -1:
        cdef int k, i
        cdef Frame frame
        for k in range(rank.outbase, rank.nout):     # the collective's outstanding records
            i = rank.out[k]
            if i >= 0:
                self.reqs[i].opos = -1
                rank.nlive -= 1
                self.release(i)
            else:
                rank.ntomb -= 1
        rank.nout = rank.outbase
        frame = <Frame> rank.frames.pop()
        rank.code, rank.pc, rank.loopbase = frame.code, frame.pc, frame.loopbase
        rank.spare = frame
        rank.requests, rank.outbase = frame.requests, frame.outbase
        rank.context = USER
        frame.completion[rank.id] = rank.clock
        return 0

    cdef double *call_times(self, str op, where, long occurrence) except NULL:
        """Where the ranks write their completion times of the ``occurrence``-th
        call at ``where`` (its CollectiveRecord made by the first rank there)."""
        cdef CallTimes entry
        calls = self.calls_at.get(where)
        if calls is None:
            calls = self.calls_at[where] = []
        while len(<list> calls) <= occurrence:    # a rank's calls here come in order
            (<list> calls).append(None)
        found = (<list> calls)[occurrence]
        if found is not None:
            return (<CallTimes> found).at
        record = self.collectives.get((where, occurrence))
        if record is None:
            record = self.collectives[(where, occurrence)] = CollectiveRecord(
                op, where, occurrence, np.full(self.numprocs, np.nan))
        entry = CallTimes(record.completion)
        (<list> calls)[occurrence] = entry
        return entry.at

    # ------------------------------------------------------------- the heap
    cdef int grow_heap(self) except -1:
        """Room for twice the heap's entries (1,024 at first), line-aligned."""
        cdef Decision *h
        cdef int cap = max(2 * self.capheap, 1024)
        if posix_memalign(<void **> &h, 64, (cap + HEAP_PAD) * sizeof(Decision)) != 0:
            raise MemoryError()
        if self.heapmem != NULL:
            memcpy(h, self.heapmem, (self.nheap + HEAP_PAD) * sizeof(Decision))
            free(self.heapmem)
        self.heapmem, self.heap, self.capheap = h, h + HEAP_PAD, cap
        return 0

    cdef int heap_push(self, double time, int req) except -1:
        cdef Decision d
        if self.nheap == self.capheap:
            self.grow_heap()
        if self.reqs[req].seq > UINT32_MAX:
            raise Unsupported("a run of more than 4,294,967,295 requests")
        if not time >= 0:
            raise Unsupported("a decision at a negative time")
        d.time, d.seq, d.req = time + 0.0, <uint32_t> self.reqs[req].seq, req   # no -0.0
        self.nheap += 1
        pevpm_heap_up(self.heap, self.nheap - 1, &d)
        return 0

    cdef Decision heap_pop(self) noexcept:
        """The earliest decision (a 4-ary heap: half the levels of a binary one,
        and a node's four children share one cache line; pevpm_heap_pop)."""
        cdef Decision top = self.heap[0]
        self.nheap -= 1
        if self.nheap > 0:
            pevpm_heap_pop(self.heap, self.nheap)
        return top

    # ---------------------------------------------------------------- results
    cdef result(self):
        cdef Rank rank, last = None
        times = []
        for rank in self.ranks:
            times.append((rank.spent[0], rank.spent[1], rank.spent[2], rank.clock))
            if last is None or rank.clock > last.clock:
                last = rank
        critical = (last.path[0], last.path[1], last.path[2])
        marks = None
        for rank in self.ranks:
            if rank.marks:
                marks = [(<Rank> r).marks or [] for r in self.ranks]
                break
        return (times, critical, self.messages, self.collectives, self.records, marks)


cdef Req *_sorting                 # the records qsort's comparison reads (one sort at a time)


cdef inline bint _arrives_before(Req *x, double x_at, Req *y, double y_at) noexcept:
    """Whether ``x`` at ``x_at`` comes before ``y`` at ``y_at``: by that time,
    then by posted time, then by post order."""
    if x_at != y_at:
        return x_at < y_at
    if x.posted != y.posted:
        return x.posted < y.posted
    return x.seq < y.seq


cdef int _posted_order(const void *a, const void *b) noexcept nogil:
    """Candidate sends by posted time, then post order."""
    cdef Req *x = &_sorting[(<const int *> a)[0]]
    cdef Req *y = &_sorting[(<const int *> b)[0]]
    if x.posted != y.posted:
        return -1 if x.posted < y.posted else 1
    return -1 if x.seq < y.seq else (1 if x.seq > y.seq else 0)
