/* Exercises the calls pevpm's tracer records; every rank makes the same
 * calls (tests/trace/test_record.py counts them).  Any number of ranks. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size, flag = 0, index, outcount, indices[2];
    double out[64] = {0}, in[64];
    MPI_Request req[2];
    MPI_Status status;
    MPI_Comm dup, split, cart;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    MPI_Sendrecv(out, 64, MPI_DOUBLE, right, 1, in, 64, MPI_DOUBLE, left, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);

    MPI_Irecv(in, 8, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(out, 8, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &req[1]);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);

    MPI_Irecv(in, 4, MPI_DOUBLE, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(out, 4, MPI_DOUBLE, right, 3, MPI_COMM_WORLD, &req[1]);
    MPI_Waitany(2, req, &index, &status);
    MPI_Wait(&req[1 - index], MPI_STATUS_IGNORE);

    MPI_Irecv(in, 2, MPI_DOUBLE, left, 4, MPI_COMM_WORLD, &req[0]);
    MPI_Send(out, 2, MPI_DOUBLE, right, 4, MPI_COMM_WORLD);
    while (!flag)
        MPI_Test(&req[0], &flag, MPI_STATUS_IGNORE);

    MPI_Irecv(in, 1, MPI_DOUBLE, left, 5, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(out, 1, MPI_DOUBLE, right, 5, MPI_COMM_WORLD, &req[1]);
    for (int done = 0; done < 2; done += outcount)
        MPI_Waitsome(2, req, &outcount, indices, MPI_STATUSES_IGNORE);

    MPI_Isend(out, 16, MPI_DOUBLE, right, 6, MPI_COMM_WORLD, &req[0]);
    MPI_Probe(left, 6, MPI_COMM_WORLD, &status);
    MPI_Recv(in, 16, MPI_DOUBLE, left, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&req[0], MPI_STATUS_IGNORE);

    usleep(20000);                  /* a sleep: the tracer records 20 ms slept */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Bcast(out, 16, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Reduce(out, in, 4, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Allreduce(out, in, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Alltoall(out, 1, MPI_DOUBLE, in, 1, MPI_DOUBLE, MPI_COMM_WORLD);
    MPI_Allgather(out, 1, MPI_DOUBLE, in, 1, MPI_DOUBLE, MPI_COMM_WORLD);

    int dims[1] = {0}, periods[1] = {1}, up, down;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &split);
    MPI_Dims_create(size, 1, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    MPI_Cart_shift(cart, 0, 1, &down, &up);
    MPI_Sendrecv(out, 32, MPI_DOUBLE, up, 7, in, 32, MPI_DOUBLE, down, 7, cart,
                 MPI_STATUS_IGNORE);
    MPI_Barrier(split);
    MPI_Comm_free(&cart);
    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
    if (rank == 0)
        printf("calls done on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
