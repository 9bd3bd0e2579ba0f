/* Ping-pong between ranks 0 and 1, timed per repetition with MPI_Wtime.
 *
 * Usage: mpiexec -n 2 ./pingpong SIZE SECONDS
 * Runs ping-pongs of SIZE bytes (Isend + Recv, as pevpm's isend test does)
 * for about SECONDS after 100 warm-up exchanges, and prints on rank 0:
 *   size=<bytes> reps=<n> median_half_rtt_us=<x> min_half_rtt_us=<y>
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REPS 2000000

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int size = argc > 1 ? atoi(argv[1]) : 0;
    double seconds = argc > 2 ? atof(argv[2]) : 1.0;
    /* Separate page-aligned send and receive buffers, as OSU's: a buffer whose
     * address happens to alias the MPI library's copy buffers modulo 4 KiB
     * made 16-64 KiB exchanges twice as slow here. */
    size_t bytes = size > 0 ? (size_t)size : 1;
    char *send = NULL, *recv = NULL;
    if (posix_memalign((void **)&send, 4096, bytes) || posix_memalign((void **)&recv, 4096, bytes)) {
        fprintf(stderr, "pingpong: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(send, 'a', bytes);
    memset(recv, 'b', bytes);
    double *half_rtt = malloc(sizeof(double) * MAX_REPS);
    int peer = 1 - rank, reps = 0, stop = 0;
    MPI_Request req;
    for (int i = 0; i < 100 + MAX_REPS && !stop; i++) {
        double start = MPI_Wtime();
        if (rank == 0) {
            MPI_Isend(send, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            MPI_Recv(recv, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(recv, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Isend(send, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        double end = MPI_Wtime();
        if (i >= 100 && rank == 0) {
            half_rtt[reps++] = (end - start) / 2.0;
        }
        static double began = 0.0;
        if (i == 100) began = end;
        /* rank 0 decides when to stop; tell rank 1 every 64 exchanges */
        if (i >= 100 && (i % 64) == 0) {
            int done = rank == 0 && (end - began) >= seconds;
            MPI_Bcast(&done, 1, MPI_INT, 0, MPI_COMM_WORLD);
            stop = done;
        }
    }
    if (rank == 0) {
        qsort(half_rtt, reps, sizeof(double), compare);
        printf("size=%d reps=%d median_half_rtt_us=%.3f min_half_rtt_us=%.3f\n", size, reps,
               half_rtt[reps / 2] * 1e6, half_rtt[0] * 1e6);
    }
    free(send);
    free(recv);
    free(half_rtt);
    MPI_Finalize();
    return 0;
}
