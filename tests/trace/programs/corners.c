/* A 2-D halo exchange without periods on a decomposition of the program's own
 * (pevpm's own test program, CloverLeaf's pattern): the ranks lie row by row
 * on MPI_Dims_create's grid, no Cartesian communicator is made, and each rank
 * exchanges only with the neighbours it has, so at 4 ranks every rank is a
 * corner with a program of its own.  Each iteration posts a receive and a
 * send for each existing neighbour (the tag says which side), waits for them
 * all in one MPI_Waitall, computes and sums over the world.  With CELLS, the
 * ranks share one CELLS x CELLS mesh (strong scaling): a message to the rank
 * above or below is a row of the rank's chunk and one cell either side
 * (CELLS / dims[1] + 2 doubles), to the left or right a column (CELLS /
 * dims[0] + 2); without it every message is 128 doubles.
 * Usage: corners [ITERATIONS [CELLS]]; any number of ranks. */
#include <mpi.h>
#include <stdlib.h>

#include "work.h"

int main(int argc, char **argv)
{
    int rank, size, iterations = argc > 1 ? atoi(argv[1]) : 10;
    int cells = argc > 2 ? atoi(argv[2]) : 0;
    int dims[2] = {0, 0};
    static double out[4][4096], in[4][4096];
    double sum = 1.0, total;
    MPI_Request req[8];

    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Dims_create(size, 2, dims);
    int row = rank / dims[1], column = rank % dims[1];
    int length[4] = {128, 128, 128, 128};
    if (cells > 0 && cells / dims[0] + 2 <= 4096 && cells / dims[1] + 2 <= 4096) {
        length[0] = length[1] = cells / dims[1] + 2;
        length[2] = length[3] = cells / dims[0] + 2;
    }
    /* up, down, left, right; -1 where there is no neighbour */
    int peer[4] = {row > 0 ? rank - dims[1] : -1, row < dims[0] - 1 ? rank + dims[1] : -1,
                   column > 0 ? rank - 1 : -1, column < dims[1] - 1 ? rank + 1 : -1};
    for (int it = 0; it < iterations; it++) {
        int n = 0;
        for (int side = 0; side < 4; side++) {
            if (peer[side] < 0)
                continue;
            /* what comes from the side above arrives tagged "down", and so on */
            MPI_Irecv(in[side], length[side], MPI_DOUBLE, peer[side], side ^ 1, MPI_COMM_WORLD, &req[n++]);
            MPI_Isend(out[side], length[side], MPI_DOUBLE, peer[side], side, MPI_COMM_WORLD, &req[n++]);
        }
        MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
        sum += compute(100000);
        MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return total < 0;
}
