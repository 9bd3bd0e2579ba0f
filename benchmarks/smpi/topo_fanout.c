/* Fan-out probe for benchmarks/topology_flow_latency_vs_smpi.py: rank 0 posts
 * one MPI_Isend of N bytes (argv[1]) to every other rank at once; each
 * receiver prints "recv <rank> <seconds from start to its receive's end>". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, p;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    int n = argc > 1 ? atoi(argv[1]) : 8192;
    char *buf = calloc(n + 1, 1);
    double start = MPI_Wtime();
    if (rank == 0) {
        MPI_Request *sends = calloc(p, sizeof(MPI_Request));
        for (int i = 1; i < p; i++)
            MPI_Isend(buf, n, MPI_BYTE, i, 0, MPI_COMM_WORLD, &sends[i - 1]);
        MPI_Waitall(p - 1, sends, MPI_STATUSES_IGNORE);
        free(sends);
    } else {
        MPI_Recv(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("recv %d %.9f\n", rank, MPI_Wtime() - start);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
