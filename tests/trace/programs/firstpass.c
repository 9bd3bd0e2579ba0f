/* Loops whose first pass is not like the others (pevpm's own test program).
 * A ranking loop whose first iteration also generates the keys (NPB IS's
 * pattern): the generation is the same work on every rank at every count,
 * the ranking is split among the ranks; each iteration ends in an Allreduce.
 * Then steps that compute the forces and exchange with the right and then the
 * left neighbour of a periodic ring, the forces before the first exchange
 * only, a size of the step's own each time (CoMD's pattern: atoms move): at
 * 1 and 2 ranks both exchanges of a step go to the same rank with the same
 * size, so they look like a loop of two passes.
 * Usage: firstpass [ITERATIONS]; any number of ranks. */
#include <mpi.h>
#include <stdlib.h>

#include "work.h"

int main(int argc, char **argv)
{
    int rank, size, iterations = argc > 1 ? atoi(argv[1]) : 10;
    double keys[64] = {0}, sums[64];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int it = 0; it < iterations; it++) {
        if (it == 0)
            compute(6000000);               /* key generation, in the first pass only:
                                               far above a later pass (at 4 ranks on 2
                                               cores a later pass's CPU seconds can jump
                                               by a scheduler's time slice) */
        compute(400000 / size);             /* the ranking: split among the ranks */
        MPI_Allreduce(keys, sums, 64, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    for (int step = 0; step < 3; step++) {
        int count = 64 - 8 * step;
        compute(300000);                    /* the forces, then the halo both ways */
        MPI_Sendrecv(keys, count, MPI_DOUBLE, right, 0, sums, count, MPI_DOUBLE, left, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(keys, count, MPI_DOUBLE, left, 0, sums, count, MPI_DOUBLE, right, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
