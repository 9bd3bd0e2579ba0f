/* MPIBench's timing core: the inner loops of the 13 tests and the clock
 * synchronisation's ping-pong, in C, so a measured operation costs what it
 * costs a compiled program (no binding between the timer and the call).
 *
 * Built by pevpm.bench.ccore with the MPI's own mpicc into a shared library
 * (cached like the tracer's) and called through ctypes.  Python allocates
 * every buffer and every timestamp array, chooses the repetitions and the
 * start rule, and converts, collates and stores the stamps afterwards; a
 * call here only runs the loop.  Communicators arrive as Fortran handles
 * (mpi4py's Comm.py2f), which MPI_Comm_f2c turns back into the C handle on
 * any MPI.
 *
 * Time stamps are CLOCK_MONOTONIC nanoseconds (pevpm_now_ns); Python reads
 * the same clock through pevpm_now_ns, so stamps taken here and there
 * compare.  Every function returns 0 or the first MPI error code.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The loop kinds; pevpm.bench.ccore.KINDS lists them in this order. */
enum {
    KIND_PING_PONG,   /* Irecv posted, Isend + Wait; stamps: send start, Isend return, recv done */
    KIND_BLOCKING,    /* Send then Recv (or Recv then Send); stamps: send start, recv done */
    KIND_DUPLEX,      /* both partners Isend at once; stamps as KIND_PING_PONG */
    KIND_SENDRECV,    /* the rest: stamps: start, end */
    KIND_BARRIER,
    KIND_BCAST,
    KIND_REDUCE,
    KIND_ALLREDUCE,
    KIND_SCATTER,
    KIND_GATHER,
    KIND_ALLGATHER,
    KIND_ALLTOALL
};

/* Start rules, as pevpm.bench.operations names them. */
enum { START_BARRIER, START_CHAIN, START_TIME };

#define TAG 7302
#define GAP_FLOATS 65536
#define CHECK(call) do { int rc_ = (call); if (rc_ != MPI_SUCCESS) return rc_; } while (0)

/* Nanoseconds of CLOCK_MONOTONIC. */
int64_t pevpm_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The MPI library this core was compiled against, for the check that it is
 * the one mpi4py loaded. */
int pevpm_library_version(char *text, int capacity)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(version, &length);
    if (capacity <= 0)
        return length;
    strncpy(text, version, (size_t)capacity - 1);
    text[capacity - 1] = '\0';
    return length;
}

struct start_rule {
    int mode;
    MPI_Comm comm;
    int64_t first_ns, spacing_ns, gap_ns;
    float *scratch, *out;
};

/* Compute for gap_ns (a stream over 256 KiB of float32, as the Python
 * ComputeGap does), then wait for the start of repetition rep. */
static int wait_start(const struct start_rule *rule, long long rep)
{
    if (rule->gap_ns > 0) {
        int64_t until = pevpm_now_ns() + rule->gap_ns;
        while (pevpm_now_ns() < until)
            for (int i = 0; i < GAP_FLOATS; i++)
                rule->out[i] = rule->scratch[i] * 0.5f;
    }
    if (rule->mode == START_BARRIER)
        return MPI_Barrier(rule->comm);
    if (rule->mode == START_TIME) {
        int64_t target = rule->first_ns + rep * rule->spacing_ns;
        while (pevpm_now_ns() < target)
            ;
    }
    return MPI_SUCCESS;
}

static int ping_pong(MPI_Comm comm, const struct start_rule *rule, int duplex, int peer,
                     int pings_first, void *send, void *recv, int count, long long reps,
                     int64_t *send_start, int64_t *send_return, int64_t *recv_done)
{
    MPI_Request in, out;
    for (long long rep = 0; rep < reps; rep++) {
        CHECK(MPI_Irecv(recv, count, MPI_BYTE, peer, TAG, comm, &in));
        CHECK(wait_start(rule, rep));
        if (duplex) {
            send_start[rep] = pevpm_now_ns();
            CHECK(MPI_Isend(send, count, MPI_BYTE, peer, TAG, comm, &out));
            send_return[rep] = pevpm_now_ns();
            CHECK(MPI_Wait(&in, MPI_STATUS_IGNORE));
            recv_done[rep] = pevpm_now_ns();
            CHECK(MPI_Wait(&out, MPI_STATUS_IGNORE));
        } else if (pings_first) {
            send_start[rep] = pevpm_now_ns();
            CHECK(MPI_Isend(send, count, MPI_BYTE, peer, TAG, comm, &out));
            send_return[rep] = pevpm_now_ns();
            CHECK(MPI_Wait(&out, MPI_STATUS_IGNORE));
            CHECK(MPI_Wait(&in, MPI_STATUS_IGNORE));
            recv_done[rep] = pevpm_now_ns();
        } else {
            CHECK(MPI_Wait(&in, MPI_STATUS_IGNORE));
            recv_done[rep] = pevpm_now_ns();
            send_start[rep] = pevpm_now_ns();
            CHECK(MPI_Isend(send, count, MPI_BYTE, peer, TAG, comm, &out));
            send_return[rep] = pevpm_now_ns();
            CHECK(MPI_Wait(&out, MPI_STATUS_IGNORE));
        }
    }
    return MPI_SUCCESS;
}

static int blocking(MPI_Comm comm, const struct start_rule *rule, int peer, int pings_first,
                    void *send, void *recv, int count, long long reps,
                    int64_t *send_start, int64_t *recv_done)
{
    for (long long rep = 0; rep < reps; rep++) {
        CHECK(wait_start(rule, rep));
        if (pings_first) {
            send_start[rep] = pevpm_now_ns();
            CHECK(MPI_Send(send, count, MPI_BYTE, peer, TAG, comm));
            CHECK(MPI_Recv(recv, count, MPI_BYTE, peer, TAG, comm, MPI_STATUS_IGNORE));
            recv_done[rep] = pevpm_now_ns();
        } else {
            CHECK(MPI_Recv(recv, count, MPI_BYTE, peer, TAG, comm, MPI_STATUS_IGNORE));
            recv_done[rep] = pevpm_now_ns();
            send_start[rep] = pevpm_now_ns();
            CHECK(MPI_Send(send, count, MPI_BYTE, peer, TAG, comm));
        }
    }
    return MPI_SUCCESS;
}

/* One call of a "from start" test: sendrecv or a collective rooted at 0. */
static int one_call(int kind, MPI_Comm comm, int peer, void *send, void *recv, int count)
{
    switch (kind) {
    case KIND_SENDRECV:
        return MPI_Sendrecv(send, count, MPI_BYTE, peer, TAG, recv, count, MPI_BYTE, peer, TAG,
                            comm, MPI_STATUS_IGNORE);
    case KIND_BARRIER:
        return MPI_Barrier(comm);
    case KIND_BCAST:
        return MPI_Bcast(send, count, MPI_BYTE, 0, comm);
    case KIND_REDUCE:
        return MPI_Reduce(send, recv, count, MPI_DOUBLE, MPI_SUM, 0, comm);
    case KIND_ALLREDUCE:
        return MPI_Allreduce(send, recv, count, MPI_DOUBLE, MPI_SUM, comm);
    case KIND_SCATTER:
        return MPI_Scatter(send, count, MPI_BYTE, recv, count, MPI_BYTE, 0, comm);
    case KIND_GATHER:
        return MPI_Gather(send, count, MPI_BYTE, recv, count, MPI_BYTE, 0, comm);
    case KIND_ALLGATHER:
        return MPI_Allgather(send, count, MPI_BYTE, recv, count, MPI_BYTE, comm);
    case KIND_ALLTOALL:
        return MPI_Alltoall(send, count, MPI_BYTE, recv, count, MPI_BYTE, comm);
    default:
        return MPI_ERR_ARG;
    }
}

/* Run reps repetitions of loop kind on the communicator with Fortran handle
 * fcomm.  count is in elements (bytes; float64 for the reductions); peer and
 * pings_first matter to the point-to-point kinds only; start_mode,
 * first_ns, spacing_ns and gap_ns describe the start rule.  The stamps go to
 * s0, s1 (and s2 for the three-stamp kinds), reps each. */
int pevpm_bench_run(int fcomm, int kind, int peer, int pings_first, void *send, void *recv,
                    long long count, int start_mode, long long first_ns, long long spacing_ns,
                    long long gap_ns, long long reps, int64_t *s0, int64_t *s1, int64_t *s2)
{
    MPI_Comm comm = MPI_Comm_f2c(fcomm);
    struct start_rule rule = { start_mode, comm, first_ns, spacing_ns, gap_ns, NULL, NULL };
    int rc;
    if (count < 0 || count > 0x7fffffff)
        return MPI_ERR_COUNT;
    if (gap_ns > 0) {
        rule.scratch = malloc(2 * GAP_FLOATS * sizeof(float));
        if (rule.scratch == NULL)
            return MPI_ERR_NO_MEM;
        for (int i = 0; i < GAP_FLOATS; i++)
            rule.scratch[i] = 1.0f;
        rule.out = rule.scratch + GAP_FLOATS;
    }
    if (kind == KIND_PING_PONG || kind == KIND_DUPLEX) {
        rc = ping_pong(comm, &rule, kind == KIND_DUPLEX, peer, pings_first, send, recv,
                       (int)count, reps, s0, s1, s2);
    } else if (kind == KIND_BLOCKING) {
        rc = blocking(comm, &rule, peer, pings_first, send, recv, (int)count, reps, s0, s1);
    } else {
        rc = MPI_SUCCESS;
        for (long long rep = 0; rep < reps && rc == MPI_SUCCESS; rep++) {
            rc = wait_start(&rule, rep);
            s0[rep] = pevpm_now_ns();
            if (rc == MPI_SUCCESS)
                rc = one_call(kind, comm, peer, send, recv, (int)count);
            s1[rep] = pevpm_now_ns();
        }
    }
    free(rule.scratch);
    return rc;
}

/* Clock synchronisation, reference side: ping-pong with peer until
 * resend_limit exchanges bring no new minimum round trip, then send the stop
 * message.  best[0..2] get the best round trip, its send time here and the
 * peer's arrival stamp (all ns).  Messages: int64 {1, t_send} per ping,
 * {0, 0} to stop; the peer echoes one int64 arrival stamp. */
int pevpm_sync_serve(int fcomm, int peer, int tag, int resend_limit, int64_t *best)
{
    MPI_Comm comm = MPI_Comm_f2c(fcomm);
    int64_t out[2], back = 0;
    int since_best = 0, have = 0;
    while (since_best < resend_limit) {
        int64_t t_send = pevpm_now_ns();
        out[0] = 1;
        out[1] = t_send;
        CHECK(MPI_Send(out, 2, MPI_INT64_T, peer, tag, comm));
        CHECK(MPI_Recv(&back, 1, MPI_INT64_T, peer, tag, comm, MPI_STATUS_IGNORE));
        int64_t rtt = pevpm_now_ns() - t_send;
        if (!have || rtt < best[0]) {
            best[0] = rtt;
            best[1] = t_send;
            best[2] = back;
            have = 1;
            since_best = 0;
        } else {
            since_best++;
        }
    }
    out[0] = 0;
    out[1] = 0;
    return MPI_Send(out, 2, MPI_INT64_T, peer, tag, comm);
}

/* Clock synchronisation, peer side: wait for the reference without spinning
 * (polling every idle_ns, so idle ranks leave the CPU to the active pair),
 * then stamp every ping on arrival and echo the stamp until the stop
 * message. */
int pevpm_sync_follow(int fcomm, int reference, int tag, long long idle_ns)
{
    MPI_Comm comm = MPI_Comm_f2c(fcomm);
    int64_t incoming[2] = { 0, 0 }, stamp;
    MPI_Request request;
    int arrived = 0;
    struct timespec pause = { (time_t)(idle_ns / 1000000000), (long)(idle_ns % 1000000000) };
    CHECK(MPI_Irecv(incoming, 2, MPI_INT64_T, reference, tag, comm, &request));
    for (;;) {
        CHECK(MPI_Test(&request, &arrived, MPI_STATUS_IGNORE));
        if (arrived)
            break;
        nanosleep(&pause, NULL);
    }
    while (incoming[0] == 1) {
        stamp = pevpm_now_ns();
        CHECK(MPI_Send(&stamp, 1, MPI_INT64_T, reference, tag, comm));
        CHECK(MPI_Recv(incoming, 2, MPI_INT64_T, reference, tag, comm, MPI_STATUS_IGNORE));
    }
    return MPI_SUCCESS;
}
