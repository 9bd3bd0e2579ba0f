/* Jacobi iteration skeleton of the PEVPM thesis (Figures 85/86), for SMPI.
 *
 * One-dimensional decomposition: every iteration each rank exchanges one row
 * of XSIZE floats with each neighbour (blocking sends and receives, even
 * ranks sending first, odd ranks receiving first), then computes for
 * SERIAL/numprocs seconds.  Under SimGrid's SMPI the computation is a
 * simulated delay (smpi_execute_flops on 1 Gflop/s hosts), so the run costs
 * what the communication simulation costs, like a PEVPM model.
 *
 *   smpicc -O2 -o jacobi jacobi.c
 *   smpirun -np 64 -platform cluster.xml -hostfile hosts ./jacobi 100 256 3.24
 *
 * Rank 0 prints "simulated_seconds=<t> messages=<m>".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define HOST_FLOPS 1e9 /* host speed in cluster.xml */

static void compute(double seconds)
{
#ifdef SMPI_SAMPLE_FLOPS
    smpi_execute_flops(seconds * HOST_FLOPS);
#else
    double until = MPI_Wtime() + seconds;
    while (MPI_Wtime() < until) {
    }
#endif
}

int main(int argc, char **argv)
{
    int procnum, numprocs;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &procnum);
    MPI_Comm_size(MPI_COMM_WORLD, &numprocs);
    int iterations = argc > 1 ? atoi(argv[1]) : 100;
    int xsize = argc > 2 ? atoi(argv[2]) : 256;
    double serial = argc > 3 ? atof(argv[3]) : 3.24;
    float *up = calloc(xsize, sizeof(float)), *down = calloc(xsize, sizeof(float));
    float *top = calloc(xsize, sizeof(float)), *bottom = calloc(xsize, sizeof(float));
    int first = procnum == 0, last = procnum == numprocs - 1;
    long messages = 0;
    MPI_Status st;

    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (int i = 0; i < iterations; i++) {
        if (procnum % 2 == 0) {
            if (!first) { MPI_Send(top, xsize, MPI_FLOAT, procnum - 1, 0, MPI_COMM_WORLD); messages++; }
            if (!last) { MPI_Send(bottom, xsize, MPI_FLOAT, procnum + 1, 0, MPI_COMM_WORLD); messages++; }
            if (!last) { MPI_Recv(down, xsize, MPI_FLOAT, procnum + 1, 0, MPI_COMM_WORLD, &st); messages++; }
            if (!first) { MPI_Recv(up, xsize, MPI_FLOAT, procnum - 1, 0, MPI_COMM_WORLD, &st); messages++; }
        } else {
            if (!last) { MPI_Recv(down, xsize, MPI_FLOAT, procnum + 1, 0, MPI_COMM_WORLD, &st); messages++; }
            MPI_Recv(up, xsize, MPI_FLOAT, procnum - 1, 0, MPI_COMM_WORLD, &st); messages++;
            MPI_Send(top, xsize, MPI_FLOAT, procnum - 1, 0, MPI_COMM_WORLD); messages++;
            if (!last) { MPI_Send(bottom, xsize, MPI_FLOAT, procnum + 1, 0, MPI_COMM_WORLD); messages++; }
        }
        compute(serial / numprocs);
    }
    double elapsed = MPI_Wtime() - start;
    long total = 0;
    MPI_Reduce(&messages, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (procnum == 0)
        printf("simulated_seconds=%.9f messages=%ld\n", elapsed, total / 2);
    free(up); free(down); free(top); free(bottom);
    MPI_Finalize();
    return 0;
}
