/*
 * Two-dimensional FFT (thesis Figure 100): row FFTs, a transpose through
 * MPI_Alltoall, column FFTs, repeated `iterations` times on a 256x256 grid
 * of complex numbers split into row slices.  Made into a program that
 * compiles and runs; fixes to the printed figure:
 *   - arrays are allocated once numprocs is known; numprocs must divide 256;
 *   - the 1-D FFT is a plain iterative radix-2 transform (the figure's
 *     kernel is elided); complex numbers are two doubles (16 bytes);
 *   - iterations default to 10000 (the captions; appendix B says 100000);
 *     serial times are milliseconds per iteration on one processor, from
 *     the thesis's single-processor run times (494 s on Perseus, 739 s on
 *     Orion, 133 s on the APAC NF for 10,000 iterations), split evenly
 *     between the two FFT phases.
 *
 * Build and run:  mpicc fft2d.c -o fft2d -lm && mpiexec -n 4 ./fft2d [iterations]
 */
#include <math.h>
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
// PEVPM Parameter iterations = 10000
// PEVPM &         t_perseus = 49.4
// PEVPM &         t_orion = 73.9
// PEVPM &         t_sc = 13.3

typedef struct {
    double r, i;
} complex_t;

/* In-place iterative radix-2 FFT of n (a power of two) points. */
static void fft(complex_t *data, int n)
{
    int i, j, k, len;
    for (i = 1, j = 0; i < n; i++) {
        int bit = n >> 1;
        for (; j & bit; bit >>= 1)
            j ^= bit;
        j ^= bit;
        if (i < j) {
            complex_t t = data[i];
            data[i] = data[j];
            data[j] = t;
        }
    }
    for (len = 2; len <= n; len <<= 1) {
        double angle = -2.0 * M_PI / len;
        for (i = 0; i < n; i += len) {
            for (k = 0; k < len / 2; k++) {
                double wr = cos(angle * k), wi = sin(angle * k);
                complex_t *a = &data[i + k], *b = &data[i + k + len / 2];
                double tr = b->r * wr - b->i * wi, ti = b->r * wi + b->i * wr;
                b->r = a->r - tr;
                b->i = a->i - ti;
                a->r += tr;
                a->i += ti;
            }
        }
    }
}

int main(int argc, char **argv)
{
    int i, j, k, cell, procnum, numprocs;
    int iterations = 10000;
    int size = 256;
    int slice;
    complex_t *a_slice, *a_chunks, *b_slice;
    double start, norm = 1.0 / 256;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &procnum);
    MPI_Comm_size(MPI_COMM_WORLD, &numprocs);
    if (argc > 1)
        iterations = atoi(argv[1]);
    if (size % numprocs != 0) {
        if (procnum == 0)
            fprintf(stderr, "fft2d: the process count must divide %d\n", size);
        MPI_Finalize();
        return 1;
    }
    slice = size / numprocs;
    a_slice = calloc((size_t)slice * size, sizeof(complex_t));
    a_chunks = calloc((size_t)numprocs * slice * slice, sizeof(complex_t));
    b_slice = calloc((size_t)size * slice, sizeof(complex_t));
    for (j = 0; j < slice; j++)
        for (k = 0; k < size; k++)
            a_slice[j * size + k].r = sin(0.1 * (procnum * slice + j) + 0.2 * k);
    start = MPI_Wtime();

// PEVPM Loop iterations = parameter iterations
// PEVPM {
    for (i = 0; i < iterations; i++) {
        /* perform 1D row FFTs, then the local part of the transpose */
// PEVPM Serial on perseus time = parameter t_perseus / 2 / numprocs
// PEVPM Serial on orion time = parameter t_orion / 2 / numprocs
// PEVPM Serial on sc time = parameter t_sc / 2 / numprocs
        for (j = 0; j < slice; j++)
            fft(&a_slice[j * size], size);
        for (cell = 0; cell < numprocs; cell++)
            for (j = 0; j < slice; j++)
                for (k = 0; k < slice; k++)
                    a_chunks[(cell * slice + j) * slice + k] = a_slice[j * size + k + slice * cell];
// PEVPM Message type = MPI_Alltoall
// PEVPM &       size = (size/numprocs)*(size/numprocs)*2*sizeof(double)
        MPI_Alltoall(a_chunks, 2 * slice * slice, MPI_DOUBLE, b_slice, 2 * slice * slice,
                     MPI_DOUBLE, MPI_COMM_WORLD);
        /* finish the transpose, then perform 1D column FFTs */
// PEVPM Serial on perseus time = parameter t_perseus / 2 / numprocs
// PEVPM Serial on orion time = parameter t_orion / 2 / numprocs
// PEVPM Serial on sc time = parameter t_sc / 2 / numprocs
        for (j = 0; j < slice; j++)
            for (k = 0; k < size; k++) {   /* scaled so the two FFTs are unitary */
                a_slice[j * size + k].r = b_slice[k * slice + j].r * norm;
                a_slice[j * size + k].i = b_slice[k * slice + j].i * norm;
            }
        for (j = 0; j < slice; j++)
            fft(&a_slice[j * size], size);
    }
// PEVPM }
    if (procnum == 0)
        printf("fft2d: %d processes, %d iterations, %.6f s, a[0][0] = %.6e\n",
               numprocs, iterations, MPI_Wtime() - start, a_slice[0].r);
    free(a_slice);
    free(a_chunks);
    free(b_slice);
    MPI_Finalize();
    return 0;
}
