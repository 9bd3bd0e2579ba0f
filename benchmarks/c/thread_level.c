/* MPIBench's chained ping-pong loops at a chosen MPI thread level.
 *
 * Usage: mpiexec -n 2 ./thread_level single|funneled|multiple SIZE REPS
 * Initialises MPI at the given level (single: MPI_Init), then runs three
 * loops of REPS chained ping-pongs of SIZE bytes, each after 100 more as
 * warm-up, and prints on rank 0 one line per loop with the median half
 * round trip in microseconds (the pinger's clock):
 *   isend:     MPIBench's isend loop (Irecv posted, Isend + Wait, Wait, 3 stamps a side)
 *   send:      MPIBench's send loop (Send then Recv, 2 stamps a side)
 *   reference: benchmarks/c/pingpong.c's loop (Isend + Wait, then Recv)
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WARMUP 100

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int compare(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* One loop; the pinger's round trips go to rtt (reps of them). */
static void run(const char *loop, int rank, char *send, char *recv, int size, int reps,
                int64_t *rtt, int64_t *spare)
{
    int peer = 1 - rank;
    MPI_Comm comm = MPI_COMM_WORLD;
    MPI_Request in, out;
    MPI_Barrier(comm);
    for (int i = 0; i < WARMUP + reps; i++) {
        int k = i < WARMUP ? 0 : i - WARMUP;
        int64_t start = 0;
        if (strcmp(loop, "isend") == 0) {
            MPI_Irecv(recv, size, MPI_BYTE, peer, 1, comm, &in);
            if (rank == 0) {
                start = now_ns();
                MPI_Isend(send, size, MPI_BYTE, peer, 1, comm, &out);
                spare[k] = now_ns();
                MPI_Wait(&out, MPI_STATUS_IGNORE);
                MPI_Wait(&in, MPI_STATUS_IGNORE);
            } else {
                MPI_Wait(&in, MPI_STATUS_IGNORE);
                spare[k] = now_ns();
                spare[k] = now_ns();
                MPI_Isend(send, size, MPI_BYTE, peer, 1, comm, &out);
                spare[k] = now_ns();
                MPI_Wait(&out, MPI_STATUS_IGNORE);
            }
        } else if (strcmp(loop, "send") == 0) {
            if (rank == 0) {
                start = now_ns();
                MPI_Send(send, size, MPI_BYTE, peer, 1, comm);
                MPI_Recv(recv, size, MPI_BYTE, peer, 1, comm, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(recv, size, MPI_BYTE, peer, 1, comm, MPI_STATUS_IGNORE);
                spare[k] = now_ns();
                spare[k] = now_ns();
                MPI_Send(send, size, MPI_BYTE, peer, 1, comm);
            }
        } else {
            if (rank == 0) {
                start = now_ns();
                MPI_Isend(send, size, MPI_BYTE, peer, 1, comm, &out);
                MPI_Wait(&out, MPI_STATUS_IGNORE);
                MPI_Recv(recv, size, MPI_BYTE, peer, 1, comm, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(recv, size, MPI_BYTE, peer, 1, comm, MPI_STATUS_IGNORE);
                MPI_Isend(send, size, MPI_BYTE, peer, 1, comm, &out);
                MPI_Wait(&out, MPI_STATUS_IGNORE);
            }
        }
        if (rank == 0)
            rtt[k] = now_ns() - start;
    }
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: thread_level single|funneled|multiple SIZE REPS\n");
        return 2;
    }
    int wanted = strcmp(argv[1], "multiple") == 0 ? MPI_THREAD_MULTIPLE
               : strcmp(argv[1], "funneled") == 0 ? MPI_THREAD_FUNNELED : -1;
    int provided = MPI_THREAD_SINGLE, rank;
    if (wanted < 0)
        MPI_Init(&argc, &argv);
    else
        MPI_Init_thread(&argc, &argv, wanted, &provided);
    MPI_Query_thread(&provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int size = atoi(argv[2]), reps = atoi(argv[3]);
    size_t bytes = size > 0 ? (size_t)size : 1;
    char *send = NULL, *recv = NULL;
    int64_t *rtt = malloc(sizeof(int64_t) * (size_t)reps);
    int64_t *spare = malloc(sizeof(int64_t) * (size_t)reps);
    if (posix_memalign((void **)&send, 4096, bytes) || posix_memalign((void **)&recv, 4096, bytes)
        || rtt == NULL || spare == NULL) {
        fprintf(stderr, "thread_level: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(send, 'a', bytes);
    memset(recv, 'b', bytes);
    const char *loops[] = { "isend", "send", "reference" };
    for (int l = 0; l < 3; l++) {
        run(loops[l], rank, send, recv, size, reps, rtt, spare);
        if (rank == 0) {
            qsort(rtt, (size_t)reps, sizeof(int64_t), compare);
            printf("level=%d loop=%s median_half_rtt_us=%.3f\n", provided, loops[l],
                   rtt[reps / 2] / 2000.0);
        }
    }
    free(send);
    free(recv);
    free(rtt);
    free(spare);
    MPI_Finalize();
    return 0;
}
