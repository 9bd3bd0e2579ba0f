/* pevpm's MPI tracer: PMPI wrappers that record every MPI call of a rank.
 *
 * Built by pevpm.trace.record.build with the MPI's own mpicc into a shared library
 * and loaded with LD_PRELOAD (pevpm trace does both).  Each wrapper reads
 * PMPI_Wtime before and after the real call and appends one fixed-size
 * record (struct rec, 80 bytes) to an in-memory buffer that is flushed to
 * $PEVPM_TRACE_DIR/rank-R.bin when full and at MPI_Finalize.  A text file
 * rank-R.txt holds the rank, the world size, the clock offset, the names of
 * the operation codes, one line per communicator created and one per
 * Cartesian grid (MPI_Cart_create, MPI_Cart_sub: its dimensions and periods).
 *
 * Clock: after MPI_Init every rank r > 0 estimates the offset of its
 * PMPI_Wtime from rank 0's by Cristian's method (PING_ROUNDS round trips,
 * the one with the shortest round trip wins); pevpm adds the offset to every
 * time stamp of the rank.
 *
 * CPU time: when a node runs more ranks than it has cores (or
 * PEVPM_TRACE_CPU=1; PEVPM_TRACE_CPU=0 never), each record also holds the CPU
 * seconds the calling thread used between the end of its previous call and
 * the start of this one (CLOCK_THREAD_CPUTIME_ID), the program's own
 * computation in that gap whether or not other ranks shared its core; -1
 * otherwise (reading that clock is a system call, about 1.5 us here).
 *
 * Sleep: the library also wraps nanosleep, clock_nanosleep, usleep and
 * sleep, and each record holds the seconds the thread spent in them between
 * its previous call's end and this call's start.  A sleeping rank uses no
 * CPU, so with CPU time alone a job that sleeps (or a C program's usleep)
 * would vanish from a trace taken with more ranks than cores; CPU time plus
 * slept time is what the rank did on its own.  Sleeps inside MPI calls (a
 * library's own back-off) belong to the call and are not counted.
 *
 * Peers are translated to ranks of MPI_COMM_WORLD.  Requests get
 * sequential ids; a call that completes requests (Wait*, Test*) is followed
 * by one COMPLETE record per completed request carrying the received
 * source, tag and byte count.  Persistent requests are not recorded.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define OPS(X) \
    X(INIT) X(FINALIZE) X(SEND) X(SSEND) X(BSEND) X(RSEND) X(RECV) X(ISEND) X(ISSEND) \
    X(IRECV) X(SENDRECV) X(SENDRECV_REPLACE) X(PROBE) X(IPROBE) X(MPROBE) X(IMPROBE) \
    X(MRECV) X(IMRECV) X(WAIT) X(WAITALL) \
    X(WAITANY) X(WAITSOME) X(TEST) X(TESTALL) X(TESTANY) X(TESTSOME) X(COMPLETE) \
    X(BARRIER) X(BCAST) X(REDUCE) X(ALLREDUCE) X(GATHER) X(GATHERV) X(SCATTER) X(SCATTERV) \
    X(ALLGATHER) X(ALLGATHERV) X(ALLTOALL) X(ALLTOALLV) X(REDUCE_SCATTER_BLOCK) X(SCAN) \
    X(COMM_DUP) X(COMM_SPLIT) X(COMM_CREATE) X(CART_CREATE) X(CART_SUB)

/* MPI 4's large-count (_c) functions, where the library has them (MPICH 4 does,
 * Open MPI 4 does not): a wrapper of one is compiled only then. */
#if MPI_VERSION >= 4
#define LARGE_COUNT(definition) definition
#else
#define LARGE_COUNT(definition)
#endif

#define AS_ENUM(name) OP_##name,
#define AS_NAME(name) #name,
enum { OPS(AS_ENUM) OP_COUNT };
static const char *op_names[] = { OPS(AS_NAME) };

struct rec {                 /* 80 bytes, little-endian on the machines we run on */
    double t0, t1;           /* PMPI_Wtime before and after the call */
    double cpu;              /* CPU seconds from the previous call's end to this start */
    double sleep;            /* seconds slept from the previous call's end to this start */
    int64_t bytes, rbytes;   /* bytes sent (per peer), bytes received */
    int32_t op, comm;        /* OP_*, communicator id */
    int32_t peer, tag;       /* destination or actual source (world rank), tag */
    int32_t peer2, tag2;     /* Sendrecv's source and tag; requested source of a receive */
    int32_t req, aux;        /* request id / new communicator id; flag, count or size */
};

#define BUF_RECORDS 65536
#define MAX_COMMS 1024
#define PING_ROUNDS 20
#define NO_PEER (-1)

static struct rec *buf;
static int nbuf, rank = -1, world_size;
static FILE *bin, *txt;
static double offset;
static int32_t next_req = 1;
static void init_messages(void);

/* ---- communicators: handle -> id, with each member's world rank ---- */
struct comm { MPI_Comm handle; int size; int *world; };
static struct comm comms[MAX_COMMS];
static int ncomms;

static int comm_id(MPI_Comm c)
{
    for (int i = 0; i < ncomms; i++)
        if (comms[i].handle == c) return i;
    return -1;
}

static int add_comm(MPI_Comm c)
{
    int id = comm_id(c);
    if (id >= 0 || ncomms == MAX_COMMS) return id;
    MPI_Group group, world_group;
    int size;
    PMPI_Comm_size(c, &size);
    int *local = malloc(sizeof(int) * size), *world = malloc(sizeof(int) * size);
    for (int i = 0; i < size; i++) local[i] = i;
    PMPI_Comm_group(c, &group);
    PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
    PMPI_Group_translate_ranks(group, size, local, world_group, world);
    PMPI_Group_free(&group);
    PMPI_Group_free(&world_group);
    free(local);
    comms[ncomms] = (struct comm){c, size, world};
    if (txt) {
        fprintf(txt, "comm %d %d", ncomms, size);
        for (int i = 0; i < size; i++) fprintf(txt, " %d", world[i]);
        fputc('\n', txt);
    }
    return ncomms++;
}

/* pevpm's codes for MPI_PROC_NULL and MPI_ANY_SOURCE (MPICH's values; Open MPI
 * has them the other way round). */
#define TRACED_PROC_NULL (-1)
#define TRACED_ANY_SOURCE (-2)

static int to_world(int id, int peer)
{
    if (peer == MPI_PROC_NULL) return TRACED_PROC_NULL;
    if (peer == MPI_ANY_SOURCE) return TRACED_ANY_SOURCE;
    if (peer < 0 || id < 0 || peer >= comms[id].size) return peer;
    return comms[id].world[peer];
}

/* ---- requests: open-addressing table handle -> (id, is receive, comm id) ---- */
#define REQ_SLOTS 4096
struct req { MPI_Request handle; int32_t id, recv, comm; };
static struct req reqs[REQ_SLOTS];

/* The first entry of handle `h` (`insert`: else the first free slot, where a
 * new one goes even when its handle is already there: MPICH gives every send
 * it completed at once, an eager Isend, the same handle, so two of them in
 * flight are two entries, completed in the order posted). */
static struct req *req_slot(MPI_Request h, int insert)
{
    unsigned k = (unsigned)(uintptr_t)h * 2654435761u % REQ_SLOTS;
    for (int n = 0; n < REQ_SLOTS; n++, k = (k + 1) % REQ_SLOTS) {
        if (!insert && reqs[k].handle == h && reqs[k].id) return &reqs[k];
        if (!reqs[k].id) return insert ? &reqs[k] : NULL;
    }
    return NULL;
}

static int32_t add_req(MPI_Request h, int recv, int comm)
{
    struct req *r = req_slot(h, 1);
    if (!r) return -1;
    *r = (struct req){h, next_req++, recv, comm};
    return r->id;
}

/* ---- sleeping ---- */
static double slept, slept_at_end, gap_slept;   /* seconds, this thread (ranks are one) */

static double monotonic_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* `real`: the C library's function NAME, found past this library (RTLD_NEXT). */
#define REAL(NAME) \
    static __typeof__(NAME) *real; \
    if (!real) real = (__typeof__(NAME) *)dlsym(RTLD_NEXT, #NAME)

int nanosleep(const struct timespec *req, struct timespec *rem)
{
    REAL(nanosleep);
    double t0 = monotonic_now();
    int rc = real(req, rem);
    slept += monotonic_now() - t0;
    return rc;
}

int clock_nanosleep(clockid_t clock, int flags, const struct timespec *req, struct timespec *rem)
{
    REAL(clock_nanosleep);
    double t0 = monotonic_now();
    int rc = real(clock, flags, req, rem);
    slept += monotonic_now() - t0;
    return rc;
}

int usleep(useconds_t usec)
{
    REAL(usleep);
    double t0 = monotonic_now();
    int rc = real(usec);
    slept += monotonic_now() - t0;
    return rc;
}

unsigned int sleep(unsigned int seconds)
{
    REAL(sleep);
    double t0 = monotonic_now();
    unsigned int left = real(seconds);
    slept += monotonic_now() - t0;
    return left;
}

/* ---- recording ---- */
static double last_cpu_end, gap_cpu;
static int want_cpu;

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A wrapped call starts: note the CPU time and the sleeps since the previous call ended. */
static double enter(void)
{
    if (want_cpu) gap_cpu = cpu_now() - last_cpu_end;
    gap_slept = slept - slept_at_end;
    return PMPI_Wtime();
}

/* Whether to read CPU time: more ranks on this node than cores it may use. */
static int cpu_wanted(void)
{
    const char *forced = getenv("PEVPM_TRACE_CPU");
    if (forced && *forced) return strcmp(forced, "0") != 0;
    MPI_Comm node;
    int local = 1;
    PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    PMPI_Comm_size(node, &local);
    PMPI_Comm_free(&node);
    cpu_set_t set;
    int cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    return local > cores;
}

static void flush(void)
{
    if (bin && nbuf) fwrite(buf, sizeof(struct rec), nbuf, bin);
    nbuf = 0;
}

static struct rec *record(int op, double t0, double t1, MPI_Comm c)
{
    if (!buf) return NULL;
    if (nbuf == BUF_RECORDS) flush();
    struct rec *r = &buf[nbuf++];
    *r = (struct rec){t0, t1, 0.0, 0.0, 0, 0, op, comm_id(c), NO_PEER, 0, NO_PEER, 0, 0, 0};
    if (op != OP_COMPLETE) {    /* a call's own record: the gap before it, then restart */
        r->cpu = want_cpu ? gap_cpu : -1.0;
        r->sleep = gap_slept;
        if (want_cpu) last_cpu_end = cpu_now();
        slept_at_end = slept;
    }
    return r;
}

static int64_t type_bytes(MPI_Count count, MPI_Datatype type)
{
    int size = 0;
    if (type != MPI_DATATYPE_NULL) PMPI_Type_size(type, &size);
    return (int64_t)count * size;
}

static int64_t status_bytes(const MPI_Status *s)
{
#if MPI_VERSION >= 4
    MPI_Count n = 0;
    PMPI_Get_count_c(s, MPI_BYTE, &n);
#else
    int n = 0;
    PMPI_Get_count(s, MPI_BYTE, &n);
#endif
    return n == MPI_UNDEFINED ? 0 : (int64_t)n;
}

/* A completed request: its record, then forget the handle. */
static void complete(MPI_Request h, const MPI_Status *s, double t)
{
    struct req *q = req_slot(h, 0);
    if (!q) return;
    struct rec *r = record(OP_COMPLETE, t, t, MPI_COMM_NULL);
    if (r) {
        r->req = q->id;
        r->comm = q->comm;
        if (q->recv && s) {
            r->peer = to_world(q->comm, s->MPI_SOURCE);
            r->tag = s->MPI_TAG;
            r->rbytes = status_bytes(s);
        }
    }
    /* leave a tombstone-free table: re-insert the rest of the probe chain */
    q->id = 0;
    unsigned k = (unsigned)(q - reqs);
    for (unsigned j = (k + 1) % REQ_SLOTS; reqs[j].id; j = (j + 1) % REQ_SLOTS) {
        struct req moved = reqs[j];
        reqs[j].id = 0;
        *req_slot(moved.handle, 1) = moved;
    }
}

/* ---- start and end ---- */
static double wtime(void) { return PMPI_Wtime(); }

static void sync_clock(void)
{
    double t;
    if (rank == 0) {
        for (int r = 1; r < world_size; r++)
            for (int i = 0; i < PING_ROUNDS; i++) {
                PMPI_Recv(&t, 1, MPI_DOUBLE, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                t = wtime();
                PMPI_Send(&t, 1, MPI_DOUBLE, r, 0, MPI_COMM_WORLD);
            }
    } else {
        double best = 1e300;
        for (int i = 0; i < PING_ROUNDS; i++) {
            double a = wtime();
            PMPI_Send(&a, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
            PMPI_Recv(&t, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            double b = wtime();
            if (b - a < best) { best = b - a; offset = t - (a + b) / 2; }
        }
    }
    PMPI_Barrier(MPI_COMM_WORLD);
}

static void start(double t0)
{
    const char *dir = getenv("PEVPM_TRACE_DIR");
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (!dir) return;
    char path[4096];
    snprintf(path, sizeof path, "%s/rank-%d.bin", dir, rank);
    bin = fopen(path, "wb");
    snprintf(path, sizeof path, "%s/rank-%d.txt", dir, rank);
    txt = fopen(path, "w");
    if (!bin || !txt) {
        fprintf(stderr, "pevpm trace: rank %d cannot write to %s\n", rank, dir);
        return;
    }
    buf = malloc(sizeof(struct rec) * BUF_RECORDS);
    fprintf(txt, "rank %d\nsize %d\nrecord %zu\nops", rank, world_size, sizeof(struct rec));
    for (int i = 0; i < OP_COUNT; i++) fprintf(txt, " %s", op_names[i]);
    fputc('\n', txt);
    add_comm(MPI_COMM_WORLD);
    add_comm(MPI_COMM_SELF);
    init_messages();
    want_cpu = cpu_wanted();
    sync_clock();
    fprintf(txt, "offset %.17g\n", offset);
    record(OP_INIT, t0, wtime(), MPI_COMM_WORLD);
}

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    start(wtime());
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    start(wtime());
    return rc;
}

static void write_unrecorded(void);

int MPI_Finalize(void)
{
    double t0 = enter();
    PMPI_Barrier(MPI_COMM_WORLD);
    record(OP_FINALIZE, t0, wtime(), MPI_COMM_WORLD);
    flush();
    write_unrecorded();
    if (bin) fclose(bin);
    if (txt) fclose(txt);
    bin = txt = NULL;
    free(buf);
    buf = NULL;
    return PMPI_Finalize();
}

/* ---- point to point ---- */
#define SEND(NAME, CT, OP) \
int MPI_##NAME(const void *b, CT count, MPI_Datatype type, int dest, int tag, MPI_Comm c) \
{ \
    double t0 = enter(); \
    int rc = PMPI_##NAME(b, count, type, dest, tag, c); \
    struct rec *r = record(OP, t0, wtime(), c); \
    if (r) { r->peer = to_world(r->comm, dest); r->tag = tag; r->bytes = type_bytes(count, type); } \
    return rc; \
}
SEND(Send, int, OP_SEND) LARGE_COUNT(SEND(Send_c, MPI_Count, OP_SEND))
SEND(Ssend, int, OP_SSEND) LARGE_COUNT(SEND(Ssend_c, MPI_Count, OP_SSEND))
SEND(Bsend, int, OP_BSEND) LARGE_COUNT(SEND(Bsend_c, MPI_Count, OP_BSEND))
SEND(Rsend, int, OP_RSEND) LARGE_COUNT(SEND(Rsend_c, MPI_Count, OP_RSEND))

#define RECV(NAME, CT) \
int MPI_##NAME(void *b, CT count, MPI_Datatype type, int source, int tag, MPI_Comm c, \
               MPI_Status *status) \
{ \
    MPI_Status own; \
    if (status == MPI_STATUS_IGNORE) status = &own; \
    double t0 = enter(); \
    int rc = PMPI_##NAME(b, count, type, source, tag, c, status); \
    struct rec *r = record(OP_RECV, t0, wtime(), c); \
    if (r) { \
        r->peer = to_world(r->comm, status->MPI_SOURCE); r->tag = status->MPI_TAG; \
        r->rbytes = status_bytes(status); r->peer2 = to_world(r->comm, source); r->tag2 = tag; \
    } \
    return rc; \
}
RECV(Recv, int) LARGE_COUNT(RECV(Recv_c, MPI_Count))

#define ISEND(NAME, CT, OP) \
int MPI_##NAME(const void *b, CT count, MPI_Datatype type, int dest, int tag, MPI_Comm c, \
               MPI_Request *request) \
{ \
    double t0 = enter(); \
    int rc = PMPI_##NAME(b, count, type, dest, tag, c, request); \
    struct rec *r = record(OP, t0, wtime(), c); \
    if (r) { \
        r->peer = to_world(r->comm, dest); r->tag = tag; r->bytes = type_bytes(count, type); \
        r->req = add_req(*request, 0, r->comm); \
    } \
    return rc; \
}
ISEND(Isend, int, OP_ISEND) LARGE_COUNT(ISEND(Isend_c, MPI_Count, OP_ISEND))
ISEND(Issend, int, OP_ISSEND) LARGE_COUNT(ISEND(Issend_c, MPI_Count, OP_ISSEND))

#define IRECV(NAME, CT) \
int MPI_##NAME(void *b, CT count, MPI_Datatype type, int source, int tag, MPI_Comm c, \
               MPI_Request *request) \
{ \
    double t0 = enter(); \
    int rc = PMPI_##NAME(b, count, type, source, tag, c, request); \
    struct rec *r = record(OP_IRECV, t0, wtime(), c); \
    if (r) { \
        r->peer2 = to_world(r->comm, source); r->tag2 = tag; \
        r->rbytes = type_bytes(count, type); r->req = add_req(*request, 1, r->comm); \
    } \
    return rc; \
}
IRECV(Irecv, int) LARGE_COUNT(IRECV(Irecv_c, MPI_Count))

#define SENDRECV(NAME, CT) \
int MPI_##NAME(const void *sb, CT scount, MPI_Datatype stype, int dest, int stag, void *rb, \
               CT rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm c, \
               MPI_Status *status) \
{ \
    MPI_Status own; \
    if (status == MPI_STATUS_IGNORE) status = &own; \
    double t0 = enter(); \
    int rc = PMPI_##NAME(sb, scount, stype, dest, stag, rb, rcount, rtype, source, rtag, c, \
                         status); \
    struct rec *r = record(OP_SENDRECV, t0, wtime(), c); \
    if (r) { \
        r->peer = to_world(r->comm, dest); r->tag = stag; r->bytes = type_bytes(scount, stype); \
        r->peer2 = to_world(r->comm, status->MPI_SOURCE); r->tag2 = status->MPI_TAG; \
        r->rbytes = status_bytes(status); \
    } \
    return rc; \
}
SENDRECV(Sendrecv, int) LARGE_COUNT(SENDRECV(Sendrecv_c, MPI_Count))

#define SENDRECV_REPLACE(NAME, CT) \
int MPI_##NAME(void *b, CT count, MPI_Datatype type, int dest, int stag, int source, int rtag, \
               MPI_Comm c, MPI_Status *status) \
{ \
    MPI_Status own; \
    if (status == MPI_STATUS_IGNORE) status = &own; \
    double t0 = enter(); \
    int rc = PMPI_##NAME(b, count, type, dest, stag, source, rtag, c, status); \
    struct rec *r = record(OP_SENDRECV_REPLACE, t0, wtime(), c); \
    if (r) { \
        r->peer = to_world(r->comm, dest); r->tag = stag; r->bytes = type_bytes(count, type); \
        r->peer2 = to_world(r->comm, status->MPI_SOURCE); r->tag2 = status->MPI_TAG; \
        r->rbytes = status_bytes(status); \
    } \
    return rc; \
}
SENDRECV_REPLACE(Sendrecv_replace, int) LARGE_COUNT(SENDRECV_REPLACE(Sendrecv_replace_c, MPI_Count))

int MPI_Probe(int source, int tag, MPI_Comm c, MPI_Status *status)
{
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE) status = &own;
    double t0 = enter();
    int rc = PMPI_Probe(source, tag, c, status);
    struct rec *r = record(OP_PROBE, t0, wtime(), c);
    if (r) {
        r->peer = to_world(r->comm, status->MPI_SOURCE); r->tag = status->MPI_TAG;
        r->rbytes = status_bytes(status); r->peer2 = to_world(r->comm, source); r->tag2 = tag;
        r->aux = 1;
    }
    return rc;
}

int MPI_Iprobe(int source, int tag, MPI_Comm c, int *flag, MPI_Status *status)
{
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE) status = &own;
    double t0 = enter();
    int rc = PMPI_Iprobe(source, tag, c, flag, status);
    struct rec *r = record(OP_IPROBE, t0, wtime(), c);
    if (r) {
        r->peer2 = to_world(r->comm, source); r->tag2 = tag; r->aux = *flag;
        if (*flag) {
            r->peer = to_world(r->comm, status->MPI_SOURCE); r->tag = status->MPI_TAG;
            r->rbytes = status_bytes(status);
        }
    }
    return rc;
}

/* Matched probes: remember each message's communicator and the source the probe
 * asked for (world rank or TRACED_ANY_SOURCE) until it is received. */
#define MAX_MESSAGES 64
static struct { MPI_Message handle; int comm, asked; } messages[MAX_MESSAGES];

static void message_found(MPI_Message m, int comm, int asked)
{
    for (int i = 0; i < MAX_MESSAGES; i++)
        if (messages[i].handle == MPI_MESSAGE_NULL || messages[i].handle == m) {
            messages[i].handle = m;
            messages[i].comm = comm;
            messages[i].asked = asked;
            return;
        }
}

static int message_taken(MPI_Message m, int *asked)
{
    *asked = NO_PEER;
    for (int i = 0; i < MAX_MESSAGES; i++)
        if (messages[i].handle == m && m != MPI_MESSAGE_NULL) {
            messages[i].handle = MPI_MESSAGE_NULL;
            *asked = messages[i].asked;
            return messages[i].comm;
        }
    return -1;
}

static void init_messages(void)
{
    for (int i = 0; i < MAX_MESSAGES; i++) messages[i].handle = MPI_MESSAGE_NULL;
}

int MPI_Mprobe(int source, int tag, MPI_Comm c, MPI_Message *m, MPI_Status *status)
{
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE) status = &own;
    double t0 = enter();
    int rc = PMPI_Mprobe(source, tag, c, m, status);
    struct rec *r = record(OP_MPROBE, t0, wtime(), c);
    if (r) {
        r->peer = to_world(r->comm, status->MPI_SOURCE); r->tag = status->MPI_TAG;
        r->rbytes = status_bytes(status); r->peer2 = to_world(r->comm, source); r->tag2 = tag;
        r->aux = 1;
        message_found(*m, r->comm, r->peer2);
    }
    return rc;
}

int MPI_Improbe(int source, int tag, MPI_Comm c, int *flag, MPI_Message *m, MPI_Status *status)
{
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE) status = &own;
    double t0 = enter();
    int rc = PMPI_Improbe(source, tag, c, flag, m, status);
    struct rec *r = record(OP_IMPROBE, t0, wtime(), c);
    if (r) {
        r->peer2 = to_world(r->comm, source); r->tag2 = tag; r->aux = *flag;
        if (*flag) {
            r->peer = to_world(r->comm, status->MPI_SOURCE); r->tag = status->MPI_TAG;
            r->rbytes = status_bytes(status);
            message_found(*m, r->comm, r->peer2);
        }
    }
    return rc;
}

#define MRECV(NAME, CT) \
int MPI_##NAME(void *b, CT count, MPI_Datatype type, MPI_Message *m, MPI_Status *status) \
{ \
    MPI_Status own; \
    if (status == MPI_STATUS_IGNORE) status = &own; \
    int asked, comm = message_taken(*m, &asked); \
    double t0 = enter(); \
    int rc = PMPI_##NAME(b, count, type, m, status); \
    struct rec *r = record(OP_MRECV, t0, wtime(), MPI_COMM_NULL); \
    if (r) { \
        r->comm = comm; r->peer = to_world(comm, status->MPI_SOURCE); r->tag = status->MPI_TAG; \
        r->rbytes = status_bytes(status); r->peer2 = asked; \
    } \
    return rc; \
}
MRECV(Mrecv, int) LARGE_COUNT(MRECV(Mrecv_c, MPI_Count))

#define IMRECV(NAME, CT) \
int MPI_##NAME(void *b, CT count, MPI_Datatype type, MPI_Message *m, MPI_Request *request) \
{ \
    int asked, comm = message_taken(*m, &asked); \
    double t0 = enter(); \
    int rc = PMPI_##NAME(b, count, type, m, request); \
    struct rec *r = record(OP_IMRECV, t0, wtime(), MPI_COMM_NULL); \
    if (r) { \
        r->comm = comm; r->rbytes = type_bytes(count, type); r->peer2 = asked; \
        r->req = add_req(*request, 1, comm); \
    } \
    return rc; \
}
IMRECV(Imrecv, int) LARGE_COUNT(IMRECV(Imrecv_c, MPI_Count))

/* ---- completion ---- */
#define STACK_REQS 64

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    MPI_Status own;
    MPI_Request h = *request;
    if (status == MPI_STATUS_IGNORE) status = &own;
    double t0 = enter();
    int rc = PMPI_Wait(request, status);
    double t1 = wtime();
    struct rec *r = record(OP_WAIT, t0, t1, MPI_COMM_NULL);
    if (r) { r->aux = 1; r->req = 1; complete(h, status, t1); }
    return rc;
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    MPI_Status own;
    MPI_Request h = *request;
    if (status == MPI_STATUS_IGNORE) status = &own;
    double t0 = enter();
    int rc = PMPI_Test(request, flag, status);
    double t1 = wtime();
    struct rec *r = record(OP_TEST, t0, t1, MPI_COMM_NULL);
    if (r) {
        struct req *q = req_slot(h, 0);
        r->aux = *flag; r->req = 1; r->tag2 = q ? q->id : 0;
        if (*flag) complete(h, status, t1);
    }
    return rc;
}

/* Copies of the handles and statuses a multi-request call needs afterwards. */
struct many { MPI_Request h[STACK_REQS], *handles; MPI_Status s[STACK_REQS], *statuses; };

static void many_open(struct many *m, int n, const MPI_Request *reqs, MPI_Status **user)
{
    m->handles = n <= STACK_REQS ? m->h : malloc(sizeof(MPI_Request) * n);
    memcpy(m->handles, reqs, sizeof(MPI_Request) * n);
    m->statuses = NULL;
    if (*user == MPI_STATUSES_IGNORE) {
        m->statuses = n <= STACK_REQS ? m->s : malloc(sizeof(MPI_Status) * n);
        *user = m->statuses;
    }
}

static void many_close(struct many *m)
{
    if (m->handles != m->h) free(m->handles);
    if (m->statuses && m->statuses != m->s) free(m->statuses);
}

int MPI_Waitall(int n, MPI_Request reqs_[], MPI_Status statuses[])
{
    struct many m;
    many_open(&m, n, reqs_, &statuses);
    double t0 = enter();
    int rc = PMPI_Waitall(n, reqs_, statuses);
    double t1 = wtime();
    struct rec *r = record(OP_WAITALL, t0, t1, MPI_COMM_NULL);
    if (r) {
        r->req = n; r->aux = n;
        for (int i = 0; i < n; i++) complete(m.handles[i], &statuses[i], t1);
    }
    many_close(&m);
    return rc;
}

int MPI_Testall(int n, MPI_Request reqs_[], int *flag, MPI_Status statuses[])
{
    struct many m;
    many_open(&m, n, reqs_, &statuses);
    double t0 = enter();
    int rc = PMPI_Testall(n, reqs_, flag, statuses);
    double t1 = wtime();
    struct rec *r = record(OP_TESTALL, t0, t1, MPI_COMM_NULL);
    if (r) {
        r->req = n; r->aux = *flag ? n : 0;
        if (*flag)
            for (int i = 0; i < n; i++) complete(m.handles[i], &statuses[i], t1);
    }
    many_close(&m);
    return rc;
}

/* Waitany and Testany: one request (at *index) completes, if any. */
static void any_done(int op, double t0, int n, const MPI_Request *handles, int index,
                     int done, const MPI_Status *status)
{
    double t1 = wtime();
    struct rec *r = record(op, t0, t1, MPI_COMM_NULL);
    if (!r) return;
    r->req = n;
    r->aux = done && index != MPI_UNDEFINED;
    if (r->aux) complete(handles[index], status, t1);
}

int MPI_Waitany(int n, MPI_Request reqs_[], int *index, MPI_Status *status)
{
    MPI_Status own, *none = NULL;
    struct many m;
    many_open(&m, n, reqs_, &none);
    if (status == MPI_STATUS_IGNORE) status = &own;
    double t0 = enter();
    int rc = PMPI_Waitany(n, reqs_, index, status);
    any_done(OP_WAITANY, t0, n, m.handles, *index, 1, status);
    many_close(&m);
    return rc;
}

int MPI_Testany(int n, MPI_Request reqs_[], int *index, int *flag, MPI_Status *status)
{
    MPI_Status own, *none = NULL;
    struct many m;
    many_open(&m, n, reqs_, &none);
    if (status == MPI_STATUS_IGNORE) status = &own;
    double t0 = enter();
    int rc = PMPI_Testany(n, reqs_, index, flag, status);
    any_done(OP_TESTANY, t0, n, m.handles, *index, *flag, status);
    many_close(&m);
    return rc;
}

#define SOME(NAME, OP) \
int MPI_##NAME(int n, MPI_Request reqs_[], int *outcount, int indices[], MPI_Status statuses[]) \
{ \
    struct many m; \
    many_open(&m, n, reqs_, &statuses); \
    double t0 = enter(); \
    int rc = PMPI_##NAME(n, reqs_, outcount, indices, statuses); \
    double t1 = wtime(); \
    struct rec *r = record(OP, t0, t1, MPI_COMM_NULL); \
    if (r) { \
        r->req = n; r->aux = *outcount == MPI_UNDEFINED ? 0 : *outcount; \
        for (int i = 0; i < r->aux; i++) complete(m.handles[indices[i]], &statuses[i], t1); \
    } \
    many_close(&m); \
    return rc; \
}
SOME(Waitsome, OP_WAITSOME) SOME(Testsome, OP_TESTSOME)

/* ---- collectives ---- */
static struct rec *coll(int op, double t0, MPI_Comm c, int root, int64_t sent, int64_t recvd)
{
    struct rec *r = record(op, t0, wtime(), c);
    if (r) { r->peer = root < 0 ? NO_PEER : to_world(r->comm, root); r->bytes = sent;
             r->rbytes = recvd; }
    return r;
}

static int comm_size(MPI_Comm c)
{
    int n;
    PMPI_Comm_size(c, &n);
    return n;
}

int MPI_Barrier(MPI_Comm c)
{
    double t0 = enter();
    int rc = PMPI_Barrier(c);
    coll(OP_BARRIER, t0, c, -1, 0, 0);
    return rc;
}

#define BCAST(NAME, CT) \
int MPI_##NAME(void *b, CT count, MPI_Datatype type, int root, MPI_Comm c) \
{ \
    double t0 = enter(); \
    int rc = PMPI_##NAME(b, count, type, root, c); \
    int64_t n = type_bytes(count, type); \
    coll(OP_BCAST, t0, c, root, n, n); \
    return rc; \
}
BCAST(Bcast, int) LARGE_COUNT(BCAST(Bcast_c, MPI_Count))

#define REDUCE(NAME, CT) \
int MPI_##NAME(const void *sb, void *rb, CT count, MPI_Datatype type, MPI_Op o, int root, \
               MPI_Comm c) \
{ \
    double t0 = enter(); \
    int rc = PMPI_##NAME(sb, rb, count, type, o, root, c); \
    int64_t n = type_bytes(count, type); \
    coll(OP_REDUCE, t0, c, root, n, n); \
    return rc; \
}
REDUCE(Reduce, int) LARGE_COUNT(REDUCE(Reduce_c, MPI_Count))

#define ALLREDUCE(NAME, CT, OP) \
int MPI_##NAME(const void *sb, void *rb, CT count, MPI_Datatype type, MPI_Op o, MPI_Comm c) \
{ \
    double t0 = enter(); \
    int rc = PMPI_##NAME(sb, rb, count, type, o, c); \
    int64_t n = type_bytes(count, type); \
    coll(OP, t0, c, -1, n, n); \
    return rc; \
}
ALLREDUCE(Allreduce, int, OP_ALLREDUCE) LARGE_COUNT(ALLREDUCE(Allreduce_c, MPI_Count, OP_ALLREDUCE))
ALLREDUCE(Scan, int, OP_SCAN) LARGE_COUNT(ALLREDUCE(Scan_c, MPI_Count, OP_SCAN))
ALLREDUCE(Reduce_scatter_block, int, OP_REDUCE_SCATTER_BLOCK)
LARGE_COUNT(ALLREDUCE(Reduce_scatter_block_c, MPI_Count, OP_REDUCE_SCATTER_BLOCK))

/* Gather, Scatter, Allgather, Alltoall: bytes per peer on each side. */
#define ROOTED(NAME, CT, OP) \
int MPI_##NAME(const void *sb, CT scount, MPI_Datatype stype, void *rb, CT rcount, \
               MPI_Datatype rtype, int root, MPI_Comm c) \
{ \
    double t0 = enter(); \
    int rc = PMPI_##NAME(sb, scount, stype, rb, rcount, rtype, root, c); \
    int64_t s = sb == MPI_IN_PLACE ? 0 : type_bytes(scount, stype); \
    int64_t r = rb == MPI_IN_PLACE ? 0 : type_bytes(rcount, rtype); \
    coll(OP, t0, c, root, s ? s : r, r ? r : s); \
    return rc; \
}
ROOTED(Gather, int, OP_GATHER) LARGE_COUNT(ROOTED(Gather_c, MPI_Count, OP_GATHER))
ROOTED(Scatter, int, OP_SCATTER) LARGE_COUNT(ROOTED(Scatter_c, MPI_Count, OP_SCATTER))

#define ALL(NAME, CT, OP) \
int MPI_##NAME(const void *sb, CT scount, MPI_Datatype stype, void *rb, CT rcount, \
               MPI_Datatype rtype, MPI_Comm c) \
{ \
    double t0 = enter(); \
    int rc = PMPI_##NAME(sb, scount, stype, rb, rcount, rtype, c); \
    int64_t r = type_bytes(rcount, rtype); \
    int64_t s = sb == MPI_IN_PLACE ? r : type_bytes(scount, stype); \
    coll(OP, t0, c, -1, s, r); \
    return rc; \
}
ALL(Allgather, int, OP_ALLGATHER) LARGE_COUNT(ALL(Allgather_c, MPI_Count, OP_ALLGATHER))
ALL(Alltoall, int, OP_ALLTOALL) LARGE_COUNT(ALL(Alltoall_c, MPI_Count, OP_ALLTOALL))

/* The v-variants: mean bytes per peer. */
static int64_t mean_bytes_int(const int *counts, MPI_Datatype t, int n)
{
    MPI_Count total = 0;
    for (int i = 0; i < n; i++) total += counts[i];
    return n ? type_bytes(total, t) / n : 0;
}

LARGE_COUNT(
static int64_t mean_bytes_count(const MPI_Count *counts, MPI_Datatype t, int n)
{
    MPI_Count total = 0;
    for (int i = 0; i < n; i++) total += counts[i];
    return n ? type_bytes(total, t) / n : 0;
}
)

#define GATHERV(NAME, CT, DT, MEAN) \
int MPI_##NAME(const void *sb, CT scount, MPI_Datatype stype, void *rb, const CT rcounts[], \
               const DT displs[], MPI_Datatype rtype, int root, MPI_Comm c) \
{ \
    double t0 = enter(); \
    int rc = PMPI_##NAME(sb, scount, stype, rb, rcounts, displs, rtype, root, c); \
    int me; PMPI_Comm_rank(c, &me); \
    int64_t r = me == root ? MEAN(rcounts, rtype, comm_size(c)) : 0; \
    coll(OP_GATHERV, t0, c, root, sb == MPI_IN_PLACE ? r : type_bytes(scount, stype), r); \
    return rc; \
}
GATHERV(Gatherv, int, int, mean_bytes_int)
LARGE_COUNT(GATHERV(Gatherv_c, MPI_Count, MPI_Aint, mean_bytes_count))

#define SCATTERV(NAME, CT, DT, MEAN) \
int MPI_##NAME(const void *sb, const CT scounts[], const DT displs[], MPI_Datatype stype, \
               void *rb, CT rcount, MPI_Datatype rtype, int root, MPI_Comm c) \
{ \
    double t0 = enter(); \
    int rc = PMPI_##NAME(sb, scounts, displs, stype, rb, rcount, rtype, root, c); \
    int me; PMPI_Comm_rank(c, &me); \
    int64_t s = me == root ? MEAN(scounts, stype, comm_size(c)) : 0; \
    coll(OP_SCATTERV, t0, c, root, s, rb == MPI_IN_PLACE ? s : type_bytes(rcount, rtype)); \
    return rc; \
}
SCATTERV(Scatterv, int, int, mean_bytes_int)
LARGE_COUNT(SCATTERV(Scatterv_c, MPI_Count, MPI_Aint, mean_bytes_count))

#define ALLGATHERV(NAME, CT, DT, MEAN) \
int MPI_##NAME(const void *sb, CT scount, MPI_Datatype stype, void *rb, const CT rcounts[], \
               const DT displs[], MPI_Datatype rtype, MPI_Comm c) \
{ \
    double t0 = enter(); \
    int rc = PMPI_##NAME(sb, scount, stype, rb, rcounts, displs, rtype, c); \
    int64_t r = MEAN(rcounts, rtype, comm_size(c)); \
    coll(OP_ALLGATHERV, t0, c, -1, sb == MPI_IN_PLACE ? r : type_bytes(scount, stype), r); \
    return rc; \
}
ALLGATHERV(Allgatherv, int, int, mean_bytes_int)
LARGE_COUNT(ALLGATHERV(Allgatherv_c, MPI_Count, MPI_Aint, mean_bytes_count))

#define ALLTOALLV(NAME, CT, DT, MEAN) \
int MPI_##NAME(const void *sb, const CT scounts[], const DT sdispls[], MPI_Datatype stype, \
               void *rb, const CT rcounts[], const DT rdispls[], MPI_Datatype rtype, \
               MPI_Comm c) \
{ \
    double t0 = enter(); \
    int rc = PMPI_##NAME(sb, scounts, sdispls, stype, rb, rcounts, rdispls, rtype, c); \
    int n = comm_size(c); \
    int64_t r = MEAN(rcounts, rtype, n); \
    coll(OP_ALLTOALLV, t0, c, -1, sb == MPI_IN_PLACE ? r : MEAN(scounts, stype, n), r); \
    return rc; \
}
ALLTOALLV(Alltoallv, int, int, mean_bytes_int)
LARGE_COUNT(ALLTOALLV(Alltoallv_c, MPI_Count, MPI_Aint, mean_bytes_count))

/* ---- communicator creation: the new communicator's id and size ---- */

/* A Cartesian communicator's grid, as MPI_Cart_get gives it: a line "cart ID
 * NDIMS DIM... PERIODIC..." of rank-R.txt (after the communicator's own line). */
static void grid_line(int id, MPI_Comm made)
{
    int ndims = 0;
    if (!txt || PMPI_Cartdim_get(made, &ndims) != MPI_SUCCESS || ndims < 1) return;
    int *dims = malloc(sizeof(int) * 3 * ndims);
    if (!dims) return;
    int *periods = dims + ndims, *coords = dims + 2 * ndims;
    if (PMPI_Cart_get(made, ndims, dims, periods, coords) == MPI_SUCCESS) {
        fprintf(txt, "cart %d %d", id, ndims);
        for (int i = 0; i < 2 * ndims; i++) fprintf(txt, " %d", i < ndims ? dims[i] : !!dims[i]);
        fputc('\n', txt);
    }
    free(dims);
}
static void created(int op, double t0, MPI_Comm parent, MPI_Comm *made)
{
    double t1 = wtime();
    int id = *made == MPI_COMM_NULL ? -1 : add_comm(*made);
    struct rec *r = record(op, t0, t1, parent);
    if (r) { r->req = id; r->aux = id < 0 ? 0 : comms[id].size; }
    if ((op == OP_CART_CREATE || op == OP_CART_SUB) && id >= 0) grid_line(id, *made);
}

int MPI_Comm_dup(MPI_Comm c, MPI_Comm *made)
{
    double t0 = enter();
    int rc = PMPI_Comm_dup(c, made);
    created(OP_COMM_DUP, t0, c, made);
    return rc;
}

int MPI_Comm_split(MPI_Comm c, int color, int key, MPI_Comm *made)
{
    double t0 = enter();
    int rc = PMPI_Comm_split(c, color, key, made);
    created(OP_COMM_SPLIT, t0, c, made);
    return rc;
}

int MPI_Comm_create(MPI_Comm c, MPI_Group g, MPI_Comm *made)
{
    double t0 = enter();
    int rc = PMPI_Comm_create(c, g, made);
    created(OP_COMM_CREATE, t0, c, made);
    return rc;
}

int MPI_Cart_create(MPI_Comm c, int ndims, const int dims[], const int periods[], int reorder,
                    MPI_Comm *made)
{
    double t0 = enter();
    int rc = PMPI_Cart_create(c, ndims, dims, periods, reorder, made);
    created(OP_CART_CREATE, t0, c, made);
    return rc;
}

int MPI_Cart_sub(MPI_Comm c, const int remain[], MPI_Comm *made)
{
    double t0 = enter();
    int rc = PMPI_Cart_sub(c, remain, made);
    created(OP_CART_SUB, t0, c, made);
    return rc;
}

/* ---- calls counted, not recorded ----
 * Common MPI calls the records cannot describe (persistent requests,
 * non-blocking and other collectives, one-sided communication, MPI-IO): each
 * is counted, and rank-R.txt gets a line "unrecorded NAME COUNT" per function
 * called, so that pevpm trace names them.  The time in them counts as the
 * rank's own, between the recorded calls around them. */
#define UNRECORDED(X) \
    X(Send_init, (const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c, \
                  MPI_Request *q), (b, n, t, d, g, c, q)) \
    X(Recv_init, (void *b, int n, MPI_Datatype t, int s, int g, MPI_Comm c, MPI_Request *q), \
      (b, n, t, s, g, c, q)) \
    X(Start, (MPI_Request *q), (q)) \
    X(Startall, (int n, MPI_Request q[]), (n, q)) \
    X(Ibarrier, (MPI_Comm c, MPI_Request *q), (c, q)) \
    X(Ibcast, (void *b, int n, MPI_Datatype t, int r, MPI_Comm c, MPI_Request *q), \
      (b, n, t, r, c, q)) \
    X(Iallreduce, (const void *s, void *b, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c, \
                   MPI_Request *q), (s, b, n, t, o, c, q)) \
    X(Ireduce, (const void *s, void *b, int n, MPI_Datatype t, MPI_Op o, int r, MPI_Comm c, \
                MPI_Request *q), (s, b, n, t, o, r, c, q)) \
    X(Ialltoall, (const void *s, int m, MPI_Datatype u, void *b, int n, MPI_Datatype t, \
                  MPI_Comm c, MPI_Request *q), (s, m, u, b, n, t, c, q)) \
    X(Iallgather, (const void *s, int m, MPI_Datatype u, void *b, int n, MPI_Datatype t, \
                   MPI_Comm c, MPI_Request *q), (s, m, u, b, n, t, c, q)) \
    X(Exscan, (const void *s, void *b, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c), \
      (s, b, n, t, o, c)) \
    X(Reduce_scatter, (const void *s, void *b, const int n[], MPI_Datatype t, MPI_Op o, \
                       MPI_Comm c), (s, b, n, t, o, c)) \
    X(Win_fence, (int a, MPI_Win w), (a, w)) \
    X(Put, (const void *b, int n, MPI_Datatype t, int r, MPI_Aint d, int m, MPI_Datatype u, \
            MPI_Win w), (b, n, t, r, d, m, u, w)) \
    X(Get, (void *b, int n, MPI_Datatype t, int r, MPI_Aint d, int m, MPI_Datatype u, \
            MPI_Win w), (b, n, t, r, d, m, u, w)) \
    X(File_write_all, (MPI_File f, const void *b, int n, MPI_Datatype t, MPI_Status *s), \
      (f, b, n, t, s)) \
    X(File_read_all, (MPI_File f, void *b, int n, MPI_Datatype t, MPI_Status *s), \
      (f, b, n, t, s))

#define AS_COUNTER(NAME, PARAMS, ARGS) U_##NAME,
#define AS_LABEL(NAME, PARAMS, ARGS) "MPI_" #NAME,
#define AS_WRAPPER(NAME, PARAMS, ARGS) \
    int MPI_##NAME PARAMS { unrecorded[U_##NAME]++; return PMPI_##NAME ARGS; }
enum { UNRECORDED(AS_COUNTER) U_COUNT };
static const char *unrecorded_names[] = { UNRECORDED(AS_LABEL) };
static long unrecorded[U_COUNT];
UNRECORDED(AS_WRAPPER)

static void write_unrecorded(void)
{
    for (int i = 0; txt && i < U_COUNT; i++)
        if (unrecorded[i]) fprintf(txt, "unrecorded %s %ld\n", unrecorded_names[i], unrecorded[i]);
}

/* ---- Fortran ----
 * An MPI's Fortran bindings (Open MPI's libmpi_mpifh, MPICH's libmpifort) call
 * the library without passing the C wrappers above, so the common calls are
 * wrapped here too, as gfortran names them (mpi_send_), converting the
 * handles and calling the C wrappers.  Fortran's MPI_IN_PLACE and
 * MPI_STATUS(ES)_IGNORE are the addresses of the bindings' own variables,
 * found by name. */
static void *fortran_symbol(const char *name)
{
    return dlsym(RTLD_DEFAULT, name);
}

static const void *f_buffer(const void *b)
{
    static void *in_place, *bottom;
    if (!in_place) in_place = fortran_symbol("mpi_fortran_in_place_");
    if (!bottom) bottom = fortran_symbol("mpi_fortran_bottom_");
    if (b && b == in_place) return MPI_IN_PLACE;
    if (b && b == bottom) return MPI_BOTTOM;
    return b;
}

static int f_ignored(const MPI_Fint *status, const char *name)
{
    void *ignore = fortran_symbol(name);
    return status == NULL || (ignore && (const void *)status == ignore);
}

static void f_status(MPI_Status *c, MPI_Fint *f)
{
    if (!f_ignored(f, "mpi_fortran_status_ignore_")) PMPI_Status_c2f(c, f);
}

#ifndef MPI_F_STATUS_SIZE           /* MPI 4 names it; Open MPI 4 keeps the C size */
#define MPI_F_STATUS_SIZE ((int)(sizeof(MPI_Status) / sizeof(MPI_Fint)))
#endif
#define F_COMM(c) PMPI_Comm_f2c(*(c))
#define F_TYPE(t) PMPI_Type_f2c(*(t))

void mpi_init_(MPI_Fint *ierr) { *ierr = MPI_Init(NULL, NULL); }

void mpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    int got = 0;
    *ierr = MPI_Init_thread(NULL, NULL, *required, &got);
    *provided = got;
}

void mpi_finalize_(MPI_Fint *ierr) { *ierr = MPI_Finalize(); }

void mpi_send_(void *b, MPI_Fint *n, MPI_Fint *t, MPI_Fint *dest, MPI_Fint *tag, MPI_Fint *c,
               MPI_Fint *ierr)
{
    *ierr = MPI_Send(f_buffer(b), *n, F_TYPE(t), *dest, *tag, F_COMM(c));
}

void mpi_recv_(void *b, MPI_Fint *n, MPI_Fint *t, MPI_Fint *source, MPI_Fint *tag, MPI_Fint *c,
               MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Status s;
    *ierr = MPI_Recv(b, *n, F_TYPE(t), *source, *tag, F_COMM(c), &s);
    f_status(&s, status);
}

void mpi_isend_(void *b, MPI_Fint *n, MPI_Fint *t, MPI_Fint *dest, MPI_Fint *tag, MPI_Fint *c,
                MPI_Fint *request, MPI_Fint *ierr)
{
    MPI_Request q;
    *ierr = MPI_Isend(f_buffer(b), *n, F_TYPE(t), *dest, *tag, F_COMM(c), &q);
    *request = PMPI_Request_c2f(q);
}

void mpi_irecv_(void *b, MPI_Fint *n, MPI_Fint *t, MPI_Fint *source, MPI_Fint *tag, MPI_Fint *c,
                MPI_Fint *request, MPI_Fint *ierr)
{
    MPI_Request q;
    *ierr = MPI_Irecv(b, *n, F_TYPE(t), *source, *tag, F_COMM(c), &q);
    *request = PMPI_Request_c2f(q);
}

void mpi_wait_(MPI_Fint *request, MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Request q = PMPI_Request_f2c(*request);
    MPI_Status s;
    *ierr = MPI_Wait(&q, &s);
    *request = PMPI_Request_c2f(q);
    f_status(&s, status);
}

void mpi_waitall_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *statuses, MPI_Fint *ierr)
{
    int n = *count, keep = !f_ignored(statuses, "mpi_fortran_statuses_ignore_");
    MPI_Request *q = malloc(sizeof(MPI_Request) * (n ? n : 1));
    MPI_Status *s = malloc(sizeof(MPI_Status) * (n ? n : 1));
    for (int i = 0; i < n; i++) q[i] = PMPI_Request_f2c(requests[i]);
    *ierr = MPI_Waitall(n, q, s);
    for (int i = 0; i < n; i++) {
        requests[i] = PMPI_Request_c2f(q[i]);
        if (keep) PMPI_Status_c2f(&s[i], statuses + i * MPI_F_STATUS_SIZE);
    }
    free(q);
    free(s);
}

void mpi_sendrecv_(void *sb, MPI_Fint *sn, MPI_Fint *st, MPI_Fint *dest, MPI_Fint *stag,
                   void *rb, MPI_Fint *rn, MPI_Fint *rt, MPI_Fint *source, MPI_Fint *rtag,
                   MPI_Fint *c, MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Status s;
    *ierr = MPI_Sendrecv(sb, *sn, F_TYPE(st), *dest, *stag, rb, *rn, F_TYPE(rt), *source,
                         *rtag, F_COMM(c), &s);
    f_status(&s, status);
}

void mpi_barrier_(MPI_Fint *c, MPI_Fint *ierr) { *ierr = MPI_Barrier(F_COMM(c)); }

void mpi_bcast_(void *b, MPI_Fint *n, MPI_Fint *t, MPI_Fint *root, MPI_Fint *c, MPI_Fint *ierr)
{
    *ierr = MPI_Bcast(b, *n, F_TYPE(t), *root, F_COMM(c));
}

void mpi_reduce_(void *sb, void *rb, MPI_Fint *n, MPI_Fint *t, MPI_Fint *op, MPI_Fint *root,
                 MPI_Fint *c, MPI_Fint *ierr)
{
    *ierr = MPI_Reduce(f_buffer(sb), rb, *n, F_TYPE(t), PMPI_Op_f2c(*op), *root, F_COMM(c));
}

void mpi_allreduce_(void *sb, void *rb, MPI_Fint *n, MPI_Fint *t, MPI_Fint *op, MPI_Fint *c,
                    MPI_Fint *ierr)
{
    *ierr = MPI_Allreduce(f_buffer(sb), rb, *n, F_TYPE(t), PMPI_Op_f2c(*op), F_COMM(c));
}

void mpi_allgather_(void *sb, MPI_Fint *sn, MPI_Fint *st, void *rb, MPI_Fint *rn, MPI_Fint *rt,
                    MPI_Fint *c, MPI_Fint *ierr)
{
    *ierr = MPI_Allgather(f_buffer(sb), *sn, F_TYPE(st), rb, *rn, F_TYPE(rt), F_COMM(c));
}

/* Fortran request arrays: converted to C requests, the call made, converted back
 * (a completed request becomes MPI_REQUEST_NULL's Fortran handle). */
static MPI_Request *f_requests(MPI_Fint n, const MPI_Fint *requests)
{
    MPI_Request *q = malloc(sizeof(MPI_Request) * (n > 0 ? n : 1));
    for (int i = 0; i < n; i++) q[i] = PMPI_Request_f2c(requests[i]);
    return q;
}

static void f_requests_back(MPI_Fint n, MPI_Request *q, MPI_Fint *requests)
{
    for (int i = 0; i < n; i++) requests[i] = PMPI_Request_c2f(q[i]);
    free(q);
}

void mpi_waitany_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *status,
                  MPI_Fint *ierr)
{
    MPI_Request *q = f_requests(*count, requests);
    MPI_Status s;
    int i = MPI_UNDEFINED;
    *ierr = MPI_Waitany(*count, q, &i, &s);
    f_requests_back(*count, q, requests);
    *index = i == MPI_UNDEFINED ? i : i + 1;
    f_status(&s, status);
}

void mpi_waitsome_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices,
                   MPI_Fint *statuses, MPI_Fint *ierr)
{
    int n = *count, done = 0, keep = !f_ignored(statuses, "mpi_fortran_statuses_ignore_");
    MPI_Request *q = f_requests(n, requests);
    int *which = malloc(sizeof(int) * (n > 0 ? n : 1));
    MPI_Status *s = malloc(sizeof(MPI_Status) * (n > 0 ? n : 1));
    *ierr = MPI_Waitsome(n, q, &done, which, s);
    f_requests_back(n, q, requests);
    *outcount = done;
    for (int i = 0; done != MPI_UNDEFINED && i < done; i++) {
        indices[i] = which[i] + 1;
        if (keep) PMPI_Status_c2f(&s[i], statuses + i * MPI_F_STATUS_SIZE);
    }
    free(which);
    free(s);
}

void mpi_testall_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *flag, MPI_Fint *statuses,
                  MPI_Fint *ierr)
{
    int n = *count, done = 0, keep = !f_ignored(statuses, "mpi_fortran_statuses_ignore_");
    MPI_Request *q = f_requests(n, requests);
    MPI_Status *s = malloc(sizeof(MPI_Status) * (n > 0 ? n : 1));
    *ierr = MPI_Testall(n, q, &done, s);
    f_requests_back(n, q, requests);
    *flag = done;
    for (int i = 0; done && keep && i < n; i++)
        PMPI_Status_c2f(&s[i], statuses + i * MPI_F_STATUS_SIZE);
    free(s);
}

void mpi_comm_split_(MPI_Fint *c, MPI_Fint *color, MPI_Fint *key, MPI_Fint *made, MPI_Fint *ierr)
{
    MPI_Comm out;
    *ierr = MPI_Comm_split(F_COMM(c), *color, *key, &out);
    *made = PMPI_Comm_c2f(out);
}

void mpi_cart_create_(MPI_Fint *c, MPI_Fint *ndims, MPI_Fint *dims, MPI_Fint *periods,
                      MPI_Fint *reorder, MPI_Fint *made, MPI_Fint *ierr)
{
    int n = *ndims > 0 ? *ndims : 0;
    int *d = malloc(sizeof(int) * 2 * (n ? n : 1)), *p = d + n;
    for (int i = 0; i < n; i++) { d[i] = dims[i]; p[i] = periods[i] != 0; }
    MPI_Comm out;
    *ierr = MPI_Cart_create(F_COMM(c), n, d, p, *reorder != 0, &out);
    *made = PMPI_Comm_c2f(out);
    free(d);
}
