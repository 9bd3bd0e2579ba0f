/*
 * Bag of tasks (thesis Figure 93): a master hands out pseudorandom jobs
 * (input bytes, compute cycles, output bytes) to whichever worker reports
 * back first, until njobs jobs are done.  Made into a program that compiles
 * and runs; fixes to the printed figure:
 *   - SIZE_MAX clashes with <stdint.h>; the per-job size limit is JOB_BYTES_MAX;
 *   - Knuth's ranf generator is replaced by a seeded 64-bit LCG;
 *   - "compute" is a busy wait of computeops / CLOCK_HZ seconds (a 500 MHz
 *     clock, Perseus's, so the serial times below need no conversion);
 *   - needs at least 2 processes and njobs >= numprocs - 1.
 *
 * The model follows the program: the master answers whichever worker reported
 * (the receive's status id s gives s.MPI_SOURCE), and a worker loops until it
 * receives DIE (its loop runs njobs + 1 times at most; once DIE has arrived the
 * remaining iterations do nothing).  Every job has the mean sizes and compute
 * time (parameters job_bytes and t_job).
 *
 * Build and run:  mpicc bag_of_tasks.c -o bag && mpiexec -n 4 ./bag [njobs]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

// PEVPM Processor description = perseus
// PEVPM &         timing basis = 500
// PEVPM Default processor = perseus
// PEVPM &       time unit = ms
// PEVPM Parameter njobs = 10000
// PEVPM &         job_bytes = JOB_BYTES_MAX / 2
// PEVPM &         t_job = 25

#define DEFN 3001               /* MPI tags */
#define WORK 3002
#define DIE 3003
#define JOB_BYTES_MAX 65536     /* per job in/out data size */
#define COMPUTE_MAX 25000000    /* per job clock cycles */
#define CLOCK_HZ 500e6

typedef struct {
    long sendsize;
    long computeops;
    long recvsize;
} workdef;

static unsigned long long ranf_state;
static long njobs = 10000;

static void ranf_start(long seed)
{
    ranf_state = (unsigned long long)seed;
}

static double ranf_arr_next(void)
{
    ranf_state = ranf_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(ranf_state >> 11) / 9007199254740992.0;
}

static workdef getwork(void)
{
    workdef this;
    if (njobs > 0) {
        this.sendsize = (long)(ranf_arr_next() * (double)JOB_BYTES_MAX);
        this.computeops = (long)(ranf_arr_next() * (double)COMPUTE_MAX);
        this.recvsize = (long)(ranf_arr_next() * (double)JOB_BYTES_MAX);
        njobs--;
    } else {
        this.sendsize = this.computeops = this.recvsize = -1;
    }
    return this;
}

static void wait_cycles(long cycles)
{
    double end = MPI_Wtime() + (double)cycles / CLOCK_HZ;
    while (MPI_Wtime() < end)
        ;
}

int main(int argc, char **argv)
{
    workdef out, in;
    char *sbuf, *rbuf;
    int rank, procnum, numprocs;
    long done = 0;
    double start;
    MPI_Status s;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &procnum);
    MPI_Comm_size(MPI_COMM_WORLD, &numprocs);
    if (argc > 1)
        njobs = atol(argv[1]);
    if (numprocs < 2 || njobs < numprocs - 1) {
        if (procnum == 0)
            fprintf(stderr, "bag_of_tasks: needs 2+ processes and njobs >= numprocs-1\n");
        MPI_Finalize();
        return 1;
    }
    sbuf = calloc(JOB_BYTES_MAX, 1);
    rbuf = calloc(JOB_BYTES_MAX, 1);
    ranf_start(310952);
    start = MPI_Wtime();

// PEVPM Runon c1 = 0
// PEVPM &      c2 = 1..numprocs-1
// PEVPM {
    if (procnum == 0) {         /* the master */
// PEVPM Loop iterations = numprocs - 1
// PEVPM &    index = w
// PEVPM {
        for (rank = 1; rank < numprocs; rank++) {
            out = getwork();
// PEVPM Message type = MPI_Send
// PEVPM &       size = 3*sizeof(long)
// PEVPM &       from = procnum
// PEVPM &       to = w + 1
// PEVPM &       tag = DEFN
            MPI_Send(&out, 3, MPI_LONG, rank, DEFN, MPI_COMM_WORLD);
// PEVPM Message type = MPI_Send
// PEVPM &       size = parameter job_bytes
// PEVPM &       from = procnum
// PEVPM &       to = w + 1
// PEVPM &       tag = WORK
            MPI_Send(sbuf, (int)out.sendsize, MPI_BYTE, rank, WORK, MPI_COMM_WORLD);
        }
// PEVPM }
        out = getwork();
// PEVPM Loop iterations = parameter njobs - (numprocs - 1)
// PEVPM {
        while (out.sendsize != -1) {
// PEVPM Message type = MPI_Recv
// PEVPM &       size = 3*sizeof(long)
// PEVPM &       from = MPI_ANY_SOURCE
// PEVPM &       to = procnum
// PEVPM &       tag = DEFN
// PEVPM &       req/stat = s
            MPI_Recv(&in, 3, MPI_LONG, MPI_ANY_SOURCE, DEFN, MPI_COMM_WORLD, &s);
// PEVPM Message type = MPI_Recv
// PEVPM &       size = parameter job_bytes
// PEVPM &       from = s.MPI_SOURCE
// PEVPM &       to = procnum
// PEVPM &       tag = WORK
            MPI_Recv(rbuf, (int)in.recvsize, MPI_BYTE, s.MPI_SOURCE, WORK, MPI_COMM_WORLD, &s);
            done++;
// PEVPM Message type = MPI_Send
// PEVPM &       size = 3*sizeof(long)
// PEVPM &       from = procnum
// PEVPM &       to = s.MPI_SOURCE
// PEVPM &       tag = DEFN
            MPI_Send(&out, 3, MPI_LONG, s.MPI_SOURCE, DEFN, MPI_COMM_WORLD);
// PEVPM Message type = MPI_Send
// PEVPM &       size = parameter job_bytes
// PEVPM &       from = procnum
// PEVPM &       to = s.MPI_SOURCE
// PEVPM &       tag = WORK
            MPI_Send(sbuf, (int)out.sendsize, MPI_BYTE, s.MPI_SOURCE, WORK, MPI_COMM_WORLD);
            out = getwork();
        }
// PEVPM }
// PEVPM Loop iterations = numprocs - 1
// PEVPM {
        for (rank = 1; rank < numprocs; rank++) {
// PEVPM Message type = MPI_Recv
// PEVPM &       size = 3*sizeof(long)
// PEVPM &       from = MPI_ANY_SOURCE
// PEVPM &       to = procnum
// PEVPM &       tag = DEFN
// PEVPM &       req/stat = s
            MPI_Recv(&in, 3, MPI_LONG, MPI_ANY_SOURCE, DEFN, MPI_COMM_WORLD, &s);
// PEVPM Message type = MPI_Recv
// PEVPM &       size = parameter job_bytes
// PEVPM &       from = s.MPI_SOURCE
// PEVPM &       to = procnum
// PEVPM &       tag = WORK
            MPI_Recv(rbuf, (int)in.recvsize, MPI_BYTE, s.MPI_SOURCE, WORK, MPI_COMM_WORLD, &s);
            done++;
        }
// PEVPM }
// PEVPM Loop iterations = numprocs - 1
// PEVPM &    index = w
// PEVPM {
        for (rank = 1; rank < numprocs; rank++) {
// PEVPM Message type = MPI_Send
// PEVPM &       size = 3*sizeof(long)
// PEVPM &       from = procnum
// PEVPM &       to = w + 1
// PEVPM &       tag = DIE
            MPI_Send(&out, 3, MPI_LONG, rank, DIE, MPI_COMM_WORLD);
        }
// PEVPM }
        printf("bag_of_tasks: %d processes, %ld jobs, %.6f s\n", numprocs, done,
               MPI_Wtime() - start);
    }
// PEVPM }
// PEVPM {
    else {                      /* the workers */
// PEVPM Repeat until = order.MPI_TAG == DIE
// PEVPM &      max = parameter njobs + 1
// PEVPM {
        for (;;) {
// PEVPM Message type = MPI_Recv
// PEVPM &       size = 3*sizeof(long)
// PEVPM &       from = 0
// PEVPM &       to = procnum
// PEVPM &       tag = MPI_ANY_TAG
// PEVPM &       req/stat = order
            MPI_Recv(&in, 3, MPI_LONG, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &s);
// PEVPM Runon c1 = order.MPI_TAG == DEFN
// PEVPM {
            if (s.MPI_TAG == DIE)
                break;
// PEVPM Message type = MPI_Recv
// PEVPM &       size = parameter job_bytes
// PEVPM &       from = 0
// PEVPM &       to = procnum
// PEVPM &       tag = WORK
            MPI_Recv(rbuf, (int)in.sendsize, MPI_BYTE, 0, WORK, MPI_COMM_WORLD, &s);
// PEVPM Serial time = parameter t_job
            wait_cycles(in.computeops);     /* simulate actual computation */
// PEVPM Message type = MPI_Send
// PEVPM &       size = 3*sizeof(long)
// PEVPM &       from = procnum
// PEVPM &       to = 0
// PEVPM &       tag = DEFN
            MPI_Send(&in, 3, MPI_LONG, 0, DEFN, MPI_COMM_WORLD);
// PEVPM Message type = MPI_Send
// PEVPM &       size = parameter job_bytes
// PEVPM &       from = procnum
// PEVPM &       to = 0
// PEVPM &       tag = WORK
            MPI_Send(sbuf, (int)in.recvsize, MPI_BYTE, 0, WORK, MPI_COMM_WORLD);
// PEVPM }
        }
// PEVPM }
    }
// PEVPM }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
