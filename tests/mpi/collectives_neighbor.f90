! collectives_neighbor.f90: the neighbourhood collectives from Fortran (`use mpi`) on a periodic ring
! (MPI_Cart_create): MPI_Neighbor_allgather, _allgatherv, _alltoall, _alltoallv, _alltoallw (byte
! displacements of KIND=MPI_ADDRESS_KIND, a datatype per neighbour), then their MPI_Ineighbor_*
! forms outstanding together, completed by MPI_Waitall. Every rank checks what it received; rank 0
! prints it. Run with and without the preload: the transcripts must be identical
! (run_collectives.sh, scenario neighbor-fortran). Exit status 1 on a failed check.
program collectives_neighbor_fortran
  use mpi
  implicit none
  integer :: ierr, rank, nranks, ring, left, right, failures, i
  integer :: dims(1), counts(2), displs(2), types(2), requests(5)
  logical :: periods(1)
  integer(kind=MPI_ADDRESS_KIND) :: bytes(2)
  integer :: mine(4), got(8, 10), want(8)
  integer :: statuses(MPI_STATUS_SIZE, 5)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  failures = 0
  dims(1) = nranks
  periods(1) = .true.
  call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, .false., ring, ierr)
  call MPI_Cart_shift(ring, 0, 1, left, right, ierr)
  ! Block j (0: to the left, 1: to the right) of this rank holds 100 * rank + 10 * j + element.
  mine = [100 * rank, 100 * rank + 1, 100 * rank + 10, 100 * rank + 11]
  counts = [2, 2]
  displs = [0, 4]
  types = [MPI_INTEGER, MPI_INTEGER]
  bytes = [0_MPI_ADDRESS_KIND, 16_MPI_ADDRESS_KIND]
  got = -1

  call MPI_Neighbor_allgather(mine, 2, MPI_INTEGER, got(:, 1), 2, MPI_INTEGER, ring, ierr)
  call MPI_Neighbor_allgatherv(mine, 2, MPI_INTEGER, got(:, 2), counts, displs, MPI_INTEGER, ring, ierr)
  call MPI_Neighbor_alltoall(mine, 2, MPI_INTEGER, got(:, 3), 2, MPI_INTEGER, ring, ierr)
  call MPI_Neighbor_alltoallv(mine, counts, [0, 2], MPI_INTEGER, got(:, 4), counts, displs, MPI_INTEGER, ring, ierr)
  call MPI_Neighbor_alltoallw(mine, counts, [0_MPI_ADDRESS_KIND, 8_MPI_ADDRESS_KIND], types, got(:, 5), counts, &
                              bytes, types, ring, ierr)
  call MPI_Ineighbor_allgather(mine, 2, MPI_INTEGER, got(:, 6), 2, MPI_INTEGER, ring, requests(1), ierr)
  call MPI_Ineighbor_allgatherv(mine, 2, MPI_INTEGER, got(:, 7), counts, displs, MPI_INTEGER, ring, requests(2), ierr)
  call MPI_Ineighbor_alltoall(mine, 2, MPI_INTEGER, got(:, 8), 2, MPI_INTEGER, ring, requests(3), ierr)
  call MPI_Ineighbor_alltoallv(mine, counts, [0, 2], MPI_INTEGER, got(:, 9), counts, displs, MPI_INTEGER, ring, &
                               requests(4), ierr)
  call MPI_Ineighbor_alltoallw(mine, counts, [0_MPI_ADDRESS_KIND, 8_MPI_ADDRESS_KIND], types, got(:, 10), counts, &
                               bytes, types, ring, requests(5), ierr)
  call MPI_Waitall(5, requests, statuses, ierr)
  if (ierr /= MPI_SUCCESS) failures = failures + 1
  if (any(requests /= MPI_REQUEST_NULL)) failures = failures + 1

  do i = 1, 10
    want = -1
    select case (mod(i - 1, 5))
    case (0)  ! allgather: blocks packed together
      want(1:4) = [100 * left, 100 * left + 1, 100 * right, 100 * right + 1]
    case (1)  ! allgatherv: blocks 4 apart
      want(1:2) = [100 * left, 100 * left + 1]
      want(5:6) = [100 * right, 100 * right + 1]
    case (2)  ! alltoall: the left neighbour's block to its right, then the right one's to its left
      want(1:4) = [100 * left + 10, 100 * left + 11, 100 * right, 100 * right + 1]
    case default  ! alltoallv, alltoallw: the same, 4 apart
      want(1:2) = [100 * left + 10, 100 * left + 11]
      want(5:6) = [100 * right, 100 * right + 1]
    end select
    if (any(got(:, i) /= want)) then
      print '(a,i0,a,i0)', 'FAIL: call ', i, ' on rank ', rank
      failures = failures + 1
    end if
  end do
  if (rank == 0) then
    do i = 1, 10
      print '(a,i0,a,8(1x,i0))', 'call ', i, ':', got(:, i)
    end do
  end if
  call MPI_Comm_free(ring, ierr)
  call MPI_Finalize(ierr)
  if (failures /= 0) stop 1
end program collectives_neighbor_fortran
