/* A loop of ten passes, one of them far longer than the rest (pevpm's own test
 * program): the deterministic form of a pass whose CPU seconds jumped, as one
 * does now and then when more ranks than cores share them.  Every pass
 * computes the same work and ends in an Allreduce; the first pass computes
 * FIRST steps more (a set-up folded into it, or none with 0) and the sixth
 * JUMP steps more.
 * Usage: jump FIRST JUMP; any number of ranks. */
#include <mpi.h>
#include <stdlib.h>

#include "work.h"

int main(int argc, char **argv)
{
    long first = argc > 1 ? atol(argv[1]) : 0, jump = argc > 2 ? atol(argv[2]) : 0;
    double value = 1.0, sum;

    MPI_Init(&argc, &argv);
    for (int pass = 0; pass < 10; pass++) {
        compute(1000000 + (pass == 0 ? first : 0) + (pass == 5 ? jump : 0));
        MPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
