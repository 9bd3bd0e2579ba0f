/* A long trace for benchmarks/trace_replay_speed.py: a periodic 1-D halo
 * exchange with no computation, so tracing it is quick and the trace holds
 * millions of MPI calls.  Each iteration every rank posts receives from both
 * neighbours, sends to both (MPI_Irecv/MPI_Isend) and waits for all four;
 * every 16th iteration it also passes a value round the ring with a blocking
 * MPI_Sendrecv, and every 64th joins an 8-byte MPI_Allreduce: about 5.08
 * calls per rank and iteration (100,000 iterations at 2 ranks: 1,015,630
 * calls with MPI_Init and MPI_Finalize).  Usage: long_halo [ITERATIONS]
 * (default 1000). */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, iterations = argc > 1 ? atoi(argv[1]) : 1000;
    double out[2][16] = {{0}}, in[2][16], value = 1.0, got, sum;
    MPI_Request req[4];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    for (int it = 0; it < iterations; it++) {
        MPI_Irecv(in[0], 16, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(in[1], 16, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &req[1]);
        MPI_Isend(out[0], 16, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &req[2]);
        MPI_Isend(out[1], 16, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &req[3]);
        MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
        if (it % 16 == 0)
            MPI_Sendrecv(&value, 1, MPI_DOUBLE, right, 3, &got, 1, MPI_DOUBLE, left, 3,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (it % 64 == 0)
            MPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
