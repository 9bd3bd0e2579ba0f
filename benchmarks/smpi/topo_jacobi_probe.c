/* Jacobi probe for benchmarks/topology_jacobi_vs_smpi.py: topo_kernels.c's
 * Jacobi halo exchange (8 KiB to both neighbours, even ranks send first,
 * 100 us of computation after each iteration) for argv[1] iterations.  Every
 * rank prints "start <rank> <seconds>" when it leaves the opening barrier,
 * after each receive "recv <rank> <source> <iteration> <seconds>" and at the
 * end "end <rank> <seconds>", the times absolute (simulated seconds since the
 * run began). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void received(int rank, int source, int i)
{
    printf("recv %d %d %d %.9f\n", rank, source, i, MPI_Wtime());
}

int main(int argc, char **argv)
{
    int rank, p, n = 8192;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    int iterations = argc > 1 ? atoi(argv[1]) : 1;
    int up = rank - 1, down = rank + 1, first = rank == 0, last = rank == p - 1;
    char *buf = calloc(n, 1), *out = calloc(n, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("start %d %.9f\n", rank, MPI_Wtime());
    for (int i = 0; i < iterations; i++) {
        if (rank % 2 == 0) {
            if (!first) MPI_Send(out, n, MPI_BYTE, up, 0, MPI_COMM_WORLD);
            if (!last) MPI_Send(out, n, MPI_BYTE, down, 0, MPI_COMM_WORLD);
            if (!last) {
                MPI_Recv(buf, n, MPI_BYTE, down, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                received(rank, down, i);
            }
            if (!first) {
                MPI_Recv(buf, n, MPI_BYTE, up, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                received(rank, up, i);
            }
        } else {
            if (!last) {
                MPI_Recv(buf, n, MPI_BYTE, down, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                received(rank, down, i);
            }
            MPI_Recv(buf, n, MPI_BYTE, up, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            received(rank, up, i);
            MPI_Send(out, n, MPI_BYTE, up, 0, MPI_COMM_WORLD);
            if (!last) MPI_Send(out, n, MPI_BYTE, down, 0, MPI_COMM_WORLD);
        }
        smpi_execute_flops(1e-4 * 1e9);
    }
    printf("end %d %.9f\n", rank, MPI_Wtime());
    free(buf);
    free(out);
    MPI_Finalize();
    return 0;
}
