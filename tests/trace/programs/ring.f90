! A ring exchange and a sum from Fortran (pevpm's own test program): the
! tracer does not see Fortran's MPI calls yet (tests/trace/test_other_mpi.py).
program ring
  use mpi
  implicit none
  integer :: rank, size, ierr, i, right, left
  double precision :: a(100), b(100), s, t
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  right = mod(rank + 1, size)
  left = mod(rank + size - 1, size)
  a = rank
  do i = 1, 10
    call MPI_Sendrecv(a, 100, MPI_DOUBLE_PRECISION, right, 1, b, 100, &
                      MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    s = sum(b)
    call MPI_Allreduce(s, t, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
  call MPI_Finalize(ierr)
end program ring
