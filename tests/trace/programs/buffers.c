/* Halo sizes that vary on one side only (pevpm's own test program; CoMD's
 * pattern, where atoms move between the cells sent each step).  On a
 * periodic ring, each step computes, then exchanges with MPI_Sendrecv to the
 * right (tag 1) and to the left (tag 2).  Even ranks send to the right a size
 * of the step's own (8,000 to 8,504 bytes, from a fixed pseudo-random
 * sequence, the same on every even rank); odd ranks always send 4,096 bytes,
 * and every left-going message is 4,096 bytes.  So an odd rank receives a
 * different size each step while its own sends never vary.
 * Usage: buffers [STEPS]; any number of ranks (odd counts pair an even rank
 * with an even one across the wrap). */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>

#include "work.h"

int main(int argc, char **argv)
{
    int rank, size, steps = argc > 1 ? atoi(argv[1]) : 40;
    static char out[8504], in[8504];
    uint32_t state = 12345;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int step = 0; step < steps; step++) {
        state = state * 1103515245u + 12345u;
        int varying = 8000 + 8 * (int)((state >> 16) % 64);
        compute(200000);
        MPI_Sendrecv(out, rank % 2 == 0 ? varying : 4096, MPI_BYTE, right, 1,
                     in, (int)sizeof in, MPI_BYTE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        compute(100000);
        MPI_Sendrecv(out, 4096, MPI_BYTE, left, 2, in, (int)sizeof in, MPI_BYTE, right, 2,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
