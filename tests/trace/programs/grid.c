/* A 2-D periodic halo exchange on a Cartesian communicator (pevpm's own test
 * program): MPI_Dims_create picks the grid, MPI_Cart_create makes it and
 * MPI_Cart_shift gives each rank its four neighbours.  Each iteration posts
 * four receives and four sends in one request array and completes them with
 * MPI_Waitany (iterations 0, 3, 6...), MPI_Waitsome (1, 4, 7...) or an
 * MPI_Testall poll (2, 5, 8...).  Then a shift along each row, on the row's
 * own communicator from MPI_Cart_sub, and one along each column, on a
 * communicator from MPI_Comm_split; then an Allreduce over the world.
 * Usage: grid [ITERATIONS]; any number of ranks. */
#include <mpi.h>
#include <stdlib.h>

#include "work.h"

int main(int argc, char **argv)
{
    int rank, size, iterations = argc > 1 ? atoi(argv[1]) : 12;
    int dims[2] = {0, 0}, periods[2] = {1, 1}, keep_row[2] = {0, 1};
    double out[4][64] = {{0}}, in[4][64], sum = 1.0, total;
    MPI_Comm grid, row, column;
    MPI_Request req[8];

    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Dims_create(size, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
    MPI_Comm_rank(grid, &rank);
    int peer[4], coords[2];
    MPI_Cart_shift(grid, 0, 1, &peer[0], &peer[1]);
    MPI_Cart_shift(grid, 1, 1, &peer[2], &peer[3]);
    MPI_Cart_coords(grid, rank, 2, coords);
    MPI_Cart_sub(grid, keep_row, &row);
    MPI_Comm_split(grid, coords[1], coords[0], &column);
    int left, right, up, down;
    MPI_Cart_shift(row, 0, 1, &left, &right);
    int column_rank, column_size;
    MPI_Comm_rank(column, &column_rank);
    MPI_Comm_size(column, &column_size);
    up = (column_rank + column_size - 1) % column_size;
    down = (column_rank + 1) % column_size;

    for (int it = 0; it < iterations; it++) {
        for (int k = 0; k < 4; k++)
            MPI_Irecv(in[k], 64, MPI_DOUBLE, peer[k], 3, grid, &req[k]);
        for (int k = 0; k < 4; k++)
            MPI_Isend(out[k ^ 1], 64, MPI_DOUBLE, peer[k ^ 1], 3, grid, &req[4 + k]);
        if (it % 3 == 0) {
            for (int k = 0; k < 8; k++) {
                int index;
                MPI_Waitany(8, req, &index, MPI_STATUS_IGNORE);
            }
        } else if (it % 3 == 1) {
            int done = 0, count, indices[8];
            while (done < 8) {
                MPI_Waitsome(8, req, &count, indices, MPI_STATUSES_IGNORE);
                done += count;
            }
        } else {
            int flag = 0;
            while (!flag)
                MPI_Testall(8, req, &flag, MPI_STATUSES_IGNORE);
        }
        compute(300000);
        MPI_Sendrecv(out[0], 16, MPI_DOUBLE, right, 4, in[0], 16, MPI_DOUBLE, left, 4, row,
                     MPI_STATUS_IGNORE);
        MPI_Sendrecv(out[1], 16, MPI_DOUBLE, down, 5, in[1], 16, MPI_DOUBLE, up, 5, column,
                     MPI_STATUS_IGNORE);
        MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    MPI_Comm_free(&row);
    MPI_Comm_free(&column);
    MPI_Comm_free(&grid);
    MPI_Finalize();
    return 0;
}
