/* A 1-D non-periodic halo exchange (pevpm's own test program): each rank
 * posts a receive from each neighbour it has with ONE tag (edge ranks have
 * one neighbour, interior ranks two), sends to them, waits for all, passes a
 * value down the chain (a blocking receive from the left, the same tag), then
 * sums a vector of 4 doubles per rank.  A set-up phase computes a fixed time
 * per rank.  At the end rank 0 takes one message from every other rank in the
 * order they come (MPI_ANY_SOURCE).  Usage: chain [ITERATIONS]; any number of
 * ranks. */
#include <mpi.h>
#include <stdlib.h>

#include "work.h"

int main(int argc, char **argv)
{
    int rank, size, iterations = argc > 1 ? atoi(argv[1]) : 20;
    double halo_out[2][128] = {{0}}, halo_in[2][128];
    MPI_Request req[4];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double *sums = calloc(4 * size, sizeof(double)), *total = calloc(4 * size, sizeof(double));
    int neighbours[2], n = 0;
    if (rank > 0)
        neighbours[n++] = rank - 1;
    if (rank < size - 1)
        neighbours[n++] = rank + 1;

    compute(2000000);               /* set-up: the same work on every rank */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int it = 0; it < iterations; it++) {
        for (int k = 0; k < n; k++)
            MPI_Irecv(halo_in[k], 128, MPI_DOUBLE, neighbours[k], 5, MPI_COMM_WORLD, &req[k]);
        for (int k = 0; k < n; k++)
            MPI_Isend(halo_out[k], 128, MPI_DOUBLE, neighbours[k], 5, MPI_COMM_WORLD,
                      &req[n + k]);
        MPI_Waitall(2 * n, req, MPI_STATUSES_IGNORE);
        if (rank > 0)
            MPI_Recv(halo_in[0], 8, MPI_DOUBLE, rank - 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rank < size - 1)
            MPI_Send(halo_out[0], 8, MPI_DOUBLE, rank + 1, 5, MPI_COMM_WORLD);
        compute(500000);
        MPI_Allreduce(sums, total, 4 * size, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    if (rank == 0)
        for (int k = 1; k < size; k++)
            MPI_Recv(halo_in[0], 1, MPI_DOUBLE, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
    else
        MPI_Send(halo_out[0], 1, MPI_DOUBLE, 0, 9, MPI_COMM_WORLD);
    free(sums);
    free(total);
    MPI_Finalize();
    return 0;
}
