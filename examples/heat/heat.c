/* A 1-D heat equation, weak scaling: every rank owns --points cells, swaps one
 * boundary cell with each neighbour (MPI_Sendrecv), updates its cells, and
 * the ranks agree on the largest change (MPI_Allreduce) every iteration.
 * Its two serial regions are timed with pevpm's region library.  The
 * "// PEVPM" comments are its performance model, the same as model.py's
 * (pevpm predict reads either).
 *
 *   mpicc -O2 heat.c $(pevpm calibrate --cflags) $(pevpm calibrate --libs) -o heat
 *   mpiexec -n 2 ./heat --points 200000 --iterations 2000
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pevpm_region.h"

int main(int argc, char **argv) {
    long points = 200000, iterations = 2000, i, it;
    int rank, size, a;
    double *u, *next, change, largest, start, elapsed;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (a = 1; a + 1 < argc; a += 2) {
        if (strcmp(argv[a], "--points") == 0) points = atol(argv[a + 1]);
        else if (strcmp(argv[a], "--iterations") == 0) iterations = atol(argv[a + 1]);
    }
    u = calloc(points + 2, sizeof *u);
    next = calloc(points + 2, sizeof *next);
    for (i = 1; i <= points; i++) u[i] = sin(0.001 * (double)(i + rank * points));
    int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    // PEVPM Parameter iterations = 2000
    // PEVPM &         t_update = 0.0001
    // PEVPM &         t_update_sd = 0.0
    // PEVPM &         t_change = 0.0001
    // PEVPM &         t_change_sd = 0.0
    // PEVPM Message type = MPI_Barrier
    MPI_Barrier(MPI_COMM_WORLD);
    start = MPI_Wtime();
    // PEVPM Loop iterations = parameter iterations
    // PEVPM {
    for (it = 0; it < iterations; it++) {
        // PEVPM Message type = MPI_Sendrecv
        // PEVPM &       size = 8
        // PEVPM &       from = procnum < numprocs - 1 ? procnum + 1 : MPI_PROC_NULL
        // PEVPM &       to = procnum > 0 ? procnum - 1 : MPI_PROC_NULL
        // PEVPM &       tag = 0
        MPI_Sendrecv(&u[1], 1, MPI_DOUBLE, left, 0, &u[points + 1], 1, MPI_DOUBLE, right, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        // PEVPM Message type = MPI_Sendrecv
        // PEVPM &       size = 8
        // PEVPM &       from = procnum > 0 ? procnum - 1 : MPI_PROC_NULL
        // PEVPM &       to = procnum < numprocs - 1 ? procnum + 1 : MPI_PROC_NULL
        // PEVPM &       tag = 1
        MPI_Sendrecv(&u[points], 1, MPI_DOUBLE, right, 1, &u[0], 1, MPI_DOUBLE, left, 1,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        // PEVPM Serial time = gamma(parameter t_update, parameter t_update_sd)
        pevpm_region_begin("update");
        for (i = 1; i <= points; i++) next[i] = u[i] + 0.25 * (u[i - 1] - 2 * u[i] + u[i + 1]);
        pevpm_region_end("update");
        // PEVPM Serial time = gamma(parameter t_change, parameter t_change_sd)
        pevpm_region_begin("change");
        change = 0.0;
        for (i = 1; i <= points; i++) {
            double d = fabs(next[i] - u[i]);
            if (d > change) change = d;
            u[i] = next[i];
        }
        pevpm_region_end("change");
        // PEVPM Message type = MPI_Allreduce
        // PEVPM &       size = 8
        MPI_Allreduce(&change, &largest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    // PEVPM }
    elapsed = MPI_Wtime() - start;
    if (rank == 0)
        printf("heat: %d ranks, %ld points each, %ld iterations: %.4f s (largest change %.3g)\n",
               size, points, iterations, elapsed, largest);
    free(u);
    free(next);
    MPI_Finalize();
    return 0;
}
