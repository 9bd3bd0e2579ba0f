/* Four communication kernels for benchmarks/topology_vs_smpi.py, under SMPI.
 *
 *   smpicc -O2 -o topo_kernels topo_kernels.c
 *   smpirun -np 64 -platform fat-tree-64.xml -hostfile hosts ./topo_kernels KERNEL
 *
 * KERNEL is one of
 *   jacobi  20 iterations: blocking 8 KiB halo exchange with both neighbours
 *           (even ranks send first), then 100 us of computation;
 *   fft     one step: 100 us of computation, then an alltoall of 1 MiB per rank
 *           (1 MiB / p to each rank) as p - 1 pairwise MPI_Sendrecv steps
 *           (step k: to rank + k, from rank - k), then 100 us again;
 *   bag     bag of tasks: every worker computes 8 tasks of 100 us x (1 + rank % 4)
 *           and sends each task's 32 KiB result to rank 0, which receives
 *           them from MPI_ANY_SOURCE;
 *   perm    4 rounds of a permutation exchange: rank r sends 256 KiB to
 *           (a r + b) mod p and receives from its preimage (MPI_Irecv,
 *           MPI_Isend, MPI_Waitall), with a odd (a bijection for p a power of 2).
 * The computation is a simulated delay (smpi_execute_flops on 1 Gflop/s
 * hosts).  Rank 0 prints "simulated_seconds=<t> messages=<m>".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOST_FLOPS 1e9
#define COMPUTE 1e-4

static const int PERM_A[4] = {5, 13, 21, 29}, PERM_B[4] = {1, 7, 3, 11};

static void compute(double seconds) { smpi_execute_flops(seconds * HOST_FLOPS); }

static int inverse_mod(int a, int p)
{
    for (int x = 1; x < p; x += 2)
        if ((long) a * x % p == 1) return x;
    return 1;
}

int main(int argc, char **argv)
{
    int rank, p;
    long messages = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    const char *kernel = argc > 1 ? argv[1] : "jacobi";
    char *buf = calloc(1 << 20, 1), *out = calloc(1 << 20, 1);
    MPI_Status st;

    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    if (strcmp(kernel, "jacobi") == 0) {
        int n = 8192, up = rank - 1, down = rank + 1, first = rank == 0, last = rank == p - 1;
        for (int i = 0; i < 20; i++) {
            if (rank % 2 == 0) {
                if (!first) { MPI_Send(out, n, MPI_BYTE, up, 0, MPI_COMM_WORLD); messages++; }
                if (!last) { MPI_Send(out, n, MPI_BYTE, down, 0, MPI_COMM_WORLD); messages++; }
                if (!last) MPI_Recv(buf, n, MPI_BYTE, down, 0, MPI_COMM_WORLD, &st);
                if (!first) MPI_Recv(buf, n, MPI_BYTE, up, 0, MPI_COMM_WORLD, &st);
            } else {
                if (!last) MPI_Recv(buf, n, MPI_BYTE, down, 0, MPI_COMM_WORLD, &st);
                MPI_Recv(buf, n, MPI_BYTE, up, 0, MPI_COMM_WORLD, &st);
                MPI_Send(out, n, MPI_BYTE, up, 0, MPI_COMM_WORLD); messages++;
                if (!last) { MPI_Send(out, n, MPI_BYTE, down, 0, MPI_COMM_WORLD); messages++; }
            }
            compute(COMPUTE);
        }
    } else if (strcmp(kernel, "fft") == 0) {
        int block = (1 << 20) / p;
        compute(COMPUTE);
        for (int k = 1; k < p; k++) {
            MPI_Sendrecv(out, block, MPI_BYTE, (rank + k) % p, 0, buf, block, MPI_BYTE,
                         (rank + p - k) % p, 0, MPI_COMM_WORLD, &st);
            messages++;
        }
        compute(COMPUTE);
    } else if (strcmp(kernel, "bag") == 0) {
        int n = 32768, tasks = 8;
        if (rank == 0) {
            for (int i = 0; i < (p - 1) * tasks; i++)
                MPI_Recv(buf, n, MPI_BYTE, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &st);
        } else {
            for (int i = 0; i < tasks; i++) {
                compute(COMPUTE * (1 + rank % 4));
                MPI_Send(out, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
                messages++;
            }
        }
    } else if (strcmp(kernel, "perm") == 0) {
        int n = 262144;
        MPI_Request req[2];
        for (int i = 0; i < 4; i++) {
            int a = PERM_A[i], b = PERM_B[i], ainv = inverse_mod(a, p);
            int dst = (int) (((long) a * rank + b) % p);
            int src = (int) ((long) ainv * (rank + p - b % p) % p);
            MPI_Irecv(buf, n, MPI_BYTE, src, i, MPI_COMM_WORLD, &req[0]);
            MPI_Isend(out, n, MPI_BYTE, dst, i, MPI_COMM_WORLD, &req[1]);
            MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
            messages++;
        }
    } else {
        if (rank == 0) fprintf(stderr, "unknown kernel %s\n", kernel);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    double elapsed = MPI_Wtime() - start, latest;
    long total = 0;
    MPI_Reduce(&elapsed, &latest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&messages, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("simulated_seconds=%.9f messages=%ld\n", latest, total);
    free(buf);
    free(out);
    MPI_Finalize();
    return 0;
}
