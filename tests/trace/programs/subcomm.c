/* Collectives on sub-communicators (pevpm's own test program): the ranks on
 * MPI_Dims_create's 2-D periodic grid; every iteration sums a vector over its
 * row (an Allreduce on the row's communicator from MPI_Cart_sub), has the
 * column's first rank broadcast a value down its column (a Bcast on a
 * communicator from MPI_Comm_split), computes, and sums over the world.
 * Usage: subcomm [ITERATIONS]; any number of ranks. */
#include <mpi.h>
#include <stdlib.h>

#include "work.h"

int main(int argc, char **argv)
{
    int size, rank, coords[2], iterations = argc > 1 ? atoi(argv[1]) : 10;
    int dims[2] = {0, 0}, periods[2] = {1, 1}, keep_row[2] = {0, 1};
    double vector[32] = {0}, sums[32], value = 0.0, total;
    MPI_Comm grid, row, column;

    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Dims_create(size, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
    MPI_Comm_rank(grid, &rank);
    MPI_Cart_coords(grid, rank, 2, coords);
    MPI_Cart_sub(grid, keep_row, &row);
    MPI_Comm_split(grid, coords[1], coords[0], &column);
    for (int it = 0; it < iterations; it++) {
        MPI_Allreduce(vector, sums, 32, MPI_DOUBLE, MPI_SUM, row);
        MPI_Bcast(&value, 1, MPI_DOUBLE, 0, column);
        value += compute(200000);
        MPI_Allreduce(&value, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    MPI_Comm_free(&row);
    MPI_Comm_free(&column);
    MPI_Comm_free(&grid);
    MPI_Finalize();
    return 0;
}
