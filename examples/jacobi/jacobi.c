/*
 * Jacobi iteration on a 256x256 grid with a 1-D strip decomposition: the
 * thesis's Figures 85/86 made into a program that compiles and runs, with
 * its PEVPM annotations.  Fixes to the printed figures:
 *   - the grids are allocated once numprocs is known (the figure declares
 *     float grid[size][size] with an undefined size);
 *   - the stencil is inside the iteration loop (Figure 85 closes the loop
 *     before it; Figure 86's directives put it inside);
 *   - the even branch also guards its exchange with procnum+1, so an odd
 *     number of processes works (the figure assumes numprocs is even);
 *   - iterations default to 1000 (the prose; the code says 100000) and the
 *     serial times are milliseconds per iteration on one processor.
 *
 * Build and run:  mpicc jacobi.c -o jacobi && mpiexec -n 4 ./jacobi [iterations]
 * Model:          pevpm show jacobi.c;  pevpm predict jacobi.c -n 2..64 --processor perseus
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

// PEVPM Processor description = perseus
// PEVPM &         timing basis = 500
// PEVPM Processor description = orion
// PEVPM &         timing basis = 450
// PEVPM Processor description = sc
// PEVPM &         timing basis = 1000
// PEVPM Default processor = perseus
// PEVPM &       time unit = ms
// PEVPM Parameter iterations = 1000
// PEVPM &         t_perseus = 3.24
// PEVPM &         t_orion = 5.70
// PEVPM &         t_sc = 1.582

#define TAG_DOWN 1
#define TAG_UP 2

static void swap_ptr(float **a, float **b)
{
    float *t = *a;
    *a = *b;
    *b = t;
}

int main(int argc, char **argv)
{
    int i, j, k, procnum, numprocs;
    int iterations = 1000;
    int xsize = 256;
    int ysize;
    float *grid, *griddash;
    double start, elapsed, sum = 0.0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &procnum);
    MPI_Comm_size(MPI_COMM_WORLD, &numprocs);
    if (argc > 1)
        iterations = atoi(argv[1]);
    ysize = 256 / numprocs + 2;
    grid = calloc((size_t)xsize * ysize, sizeof(float));
    griddash = calloc((size_t)xsize * ysize, sizeof(float));
    for (k = 0; k < xsize; k++) {   /* a hot top edge of the whole grid */
        if (procnum == 0)
            grid[1 * xsize + k] = griddash[1 * xsize + k] = 100.0f;
    }
#define ROW(g, r) (&(g)[(r) * xsize])

    start = MPI_Wtime();
// PEVPM Loop iterations = parameter iterations
// PEVPM {
    for (i = 0; i < iterations; i++) {
// PEVPM Runon c1 = procnum%2 == 0
// PEVPM &      c2 = procnum%2 != 0
// PEVPM {
        if (procnum % 2 == 0) {
// PEVPM Runon c1 = procnum != 0
// PEVPM {
            if (procnum != 0) {
// PEVPM Message type = MPI_Send
// PEVPM &      size = xsize*sizeof(float)
// PEVPM &      from = procnum
// PEVPM &      to = procnum-1
                MPI_Send(ROW(grid, 1), xsize, MPI_FLOAT, procnum - 1, TAG_UP, MPI_COMM_WORLD);
            }
// PEVPM }
// PEVPM Runon c1 = procnum != numprocs-1
// PEVPM {
            if (procnum != numprocs - 1) {
// PEVPM Message type = MPI_Send
// PEVPM &      size = xsize*sizeof(float)
// PEVPM &      from = procnum
// PEVPM &      to = procnum+1
                MPI_Send(ROW(grid, ysize - 2), xsize, MPI_FLOAT, procnum + 1, TAG_DOWN,
                         MPI_COMM_WORLD);
// PEVPM Message type = MPI_Recv
// PEVPM &      size = xsize*sizeof(float)
// PEVPM &      from = procnum+1
// PEVPM &      to = procnum
                MPI_Recv(ROW(grid, ysize - 1), xsize, MPI_FLOAT, procnum + 1, TAG_UP,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
// PEVPM }
// PEVPM Runon c1 = procnum != 0
// PEVPM {
            if (procnum != 0) {
// PEVPM Message type = MPI_Recv
// PEVPM &      size = xsize*sizeof(float)
// PEVPM &      from = procnum-1
// PEVPM &      to = procnum
                MPI_Recv(ROW(grid, 0), xsize, MPI_FLOAT, procnum - 1, TAG_DOWN,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
// PEVPM }
        }
// PEVPM }
// PEVPM {
        else {
// PEVPM Runon c1 = procnum != numprocs-1
// PEVPM {
            if (procnum != (numprocs - 1)) {
// PEVPM Message type = MPI_Recv
// PEVPM &         size = xsize*sizeof(float)
// PEVPM &         from = procnum+1
// PEVPM &         to = procnum
                MPI_Recv(ROW(grid, ysize - 1), xsize, MPI_FLOAT, procnum + 1, TAG_UP,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
// PEVPM }
// PEVPM Message type = MPI_Recv
// PEVPM &         size = xsize*sizeof(float)
// PEVPM &         from = procnum-1
// PEVPM &         to = procnum
            MPI_Recv(ROW(grid, 0), xsize, MPI_FLOAT, procnum - 1, TAG_DOWN, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
// PEVPM Message type = MPI_Send
// PEVPM &         size = xsize*sizeof(float)
// PEVPM &         from = procnum
// PEVPM &         to = procnum-1
            MPI_Send(ROW(grid, 1), xsize, MPI_FLOAT, procnum - 1, TAG_UP, MPI_COMM_WORLD);
// PEVPM Runon c1 = procnum != numprocs-1
// PEVPM {
            if (procnum != (numprocs - 1)) {
// PEVPM Message type = MPI_Send
// PEVPM &         size = xsize*sizeof(float)
// PEVPM &         from = procnum
// PEVPM &         to = procnum+1
                MPI_Send(ROW(grid, ysize - 2), xsize, MPI_FLOAT, procnum + 1, TAG_DOWN,
                         MPI_COMM_WORLD);
            }
// PEVPM }
        }
// PEVPM }
// PEVPM Serial on perseus time = parameter t_perseus/numprocs
// PEVPM Serial on orion time = parameter t_orion/numprocs
// PEVPM Serial on sc time = parameter t_sc/numprocs
        for (j = 1; j < ysize - 1; j++) {
            for (k = 1; k < xsize - 1; k++) {
                ROW(griddash, j)[k] = 0.25f * (ROW(grid, j)[k - 1] + ROW(grid, j - 1)[k]
                                               + ROW(grid, j)[k + 1] + ROW(grid, j + 1)[k]);
            }
        }
        swap_ptr(&grid, &griddash);
    }
// PEVPM }
    elapsed = MPI_Wtime() - start;

    for (j = 1; j < ysize - 1; j++)
        for (k = 0; k < xsize; k++)
            sum += ROW(grid, j)[k];
    if (procnum == 0)
        printf("jacobi: %d processes, %d iterations, %.6f s, rank 0 checksum %.6e\n",
               numprocs, iterations, elapsed, sum);
    free(grid);
    free(griddash);
    MPI_Finalize();
    return 0;
}
