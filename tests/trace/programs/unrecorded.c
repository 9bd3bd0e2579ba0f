/* Calls pevpm's tracer counts but does not record (tests/trace/test_record.py):
 * a persistent ring exchange started three times, a non-blocking barrier and
 * an exclusive scan, between two recorded barriers.  Any number of ranks. */
#include <mpi.h>

int main(int argc, char **argv)
{
    int rank, size, in = 0, out = 1, sum = 0;
    MPI_Request ring[2], barrier;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Recv_init(&in, 1, MPI_INT, (rank + size - 1) % size, 1, MPI_COMM_WORLD, &ring[0]);
    MPI_Send_init(&out, 1, MPI_INT, (rank + 1) % size, 1, MPI_COMM_WORLD, &ring[1]);
    for (int i = 0; i < 3; i++) {
        MPI_Startall(2, ring);
        MPI_Waitall(2, ring, MPI_STATUSES_IGNORE);
    }
    MPI_Request_free(&ring[0]);
    MPI_Request_free(&ring[1]);
    MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
    MPI_Wait(&barrier, MPI_STATUS_IGNORE);
    MPI_Exscan(&out, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
