! Request arrays and a Cartesian grid from Fortran (pevpm's own test program):
! MPI_Cart_create on MPI_Dims_create's 1-D periodic grid, a shift each way with
! MPI_Irecv/MPI_Isend completed by MPI_Waitany, then by MPI_Waitsome, then by an
! MPI_Testall poll; an MPI_Allgather; an MPI_Comm_split into even and odd ranks.
program requests
  use mpi
  implicit none
  integer :: rank, size, ierr, grid, half, left, right, i, k, index, count, done
  logical :: flag
  integer :: dims(1), req(4), indices(4)
  logical :: periods(1)
  double precision :: a(50), b(50, 2)
  integer, allocatable :: all(:)
  call MPI_Init(ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  dims = 0
  periods = .true.
  call MPI_Dims_create(size, 1, dims, ierr)
  call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, .false., grid, ierr)
  call MPI_Comm_rank(grid, rank, ierr)
  call MPI_Cart_shift(grid, 0, 1, left, right, ierr)
  a = rank
  do i = 1, 3
    call MPI_Irecv(b(:, 1), 50, MPI_DOUBLE_PRECISION, left, 1, grid, req(1), ierr)
    call MPI_Irecv(b(:, 2), 50, MPI_DOUBLE_PRECISION, right, 2, grid, req(2), ierr)
    call MPI_Isend(a, 50, MPI_DOUBLE_PRECISION, right, 1, grid, req(3), ierr)
    call MPI_Isend(a, 50, MPI_DOUBLE_PRECISION, left, 2, grid, req(4), ierr)
    if (i == 1) then
      do k = 1, 4
        call MPI_Waitany(4, req, index, MPI_STATUS_IGNORE, ierr)
      end do
    else if (i == 2) then
      done = 0
      do while (done < 4)
        call MPI_Waitsome(4, req, count, indices, MPI_STATUSES_IGNORE, ierr)
        done = done + count
      end do
    else
      flag = .false.
      do while (.not. flag)
        call MPI_Testall(4, req, flag, MPI_STATUSES_IGNORE, ierr)
      end do
    end if
  end do
  allocate(all(size))
  call MPI_Allgather(rank, 1, MPI_INTEGER, all, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, half, ierr)
  call MPI_Finalize(ierr)
end program requests
