/* A 3-D halo exchange with all 26 neighbours, faces, edges and corners,
 * without periods, on a decomposition of the program's own (pevpm's own test
 * program, LULESH's pattern): the ranks lie on MPI_Dims_create's 3-D grid,
 * the last dimension varying fastest, no Cartesian communicator is made, and
 * each rank exchanges only with the neighbours it has, so at 8 ranks every
 * rank is a corner of the 2 x 2 x 2 grid with seven neighbours of its own.
 * Each iteration posts a receive for each existing neighbour (directions in
 * one fixed order, one tag for them all, as LULESH), then a send to each, waits for them all in one MPI_Waitall, computes and sums over
 * the world.  A face's message is 64 doubles, an edge's 8, a corner's 1.
 * Usage: neighbours26 [ITERATIONS]; any number of ranks. */
#include <mpi.h>
#include <stdlib.h>

#include "work.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, iterations = argc > 1 ? atoi(argv[1]) : 10;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int dims[3] = {0, 0, 0}, here[3];
    MPI_Dims_create(size, 3, dims);
    for (int d = 2, rest = rank; d >= 0; rest /= dims[d], d--)
        here[d] = rest % dims[d];
    static double out[27][64], in[27][64];
    double sum = 1.0, total;
    MPI_Request req[52];
    /* direction k = 9 (dx + 1) + 3 (dy + 1) + (dz + 1); 13 is the rank itself,
     * 26 - k the opposite direction */
    int peer[27], length[27];
    for (int k = 0; k < 27; k++) {
        int step[3] = {k / 9 - 1, k / 3 % 3 - 1, k % 3 - 1}, there = 0, moved = 0;
        peer[k] = -1;
        for (int d = 0; d < 3; d++) {
            int c = here[d] + step[d];
            if (c < 0 || c >= dims[d])
                break;
            there = there * dims[d] + c;
            moved += step[d] != 0;
            if (d == 2 && moved > 0)
                peer[k] = there;
        }
        length[k] = moved == 1 ? 64 : moved == 2 ? 8 : 1;
    }
    for (int it = 0; it < iterations; it++) {
        int n = 0;
        for (int k = 0; k < 27; k++)
            if (peer[k] >= 0)
                MPI_Irecv(in[k], length[k], MPI_DOUBLE, peer[k], 0, MPI_COMM_WORLD, &req[n++]);
        for (int k = 0; k < 27; k++)
            if (peer[k] >= 0)
                MPI_Isend(out[k], length[k], MPI_DOUBLE, peer[k], 0, MPI_COMM_WORLD, &req[n++]);
        MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
        sum += compute(100000);
        MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return total < 0;
}
