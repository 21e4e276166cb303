! collectives_gather.f90: MPI_Gather, MPI_Gatherv, MPI_Scatter, MPI_Scatterv, MPI_Allgather and
! MPI_Allgatherv from Fortran (`use mpi`) on MPI_COMM_WORLD, once each: MPI_IN_PLACE, non-zero roots,
! INTEGER count and displacement arrays (displacements in reverse rank order, with gaps). Every rank
! checks what it received against what it computes itself; rank 0 prints its results. Run with and
! without the preload: the transcripts must be identical (run_collectives.sh, scenario
! gather-fortran). Exit status 1 on a failed check.
program collectives_gather_fortran
  use mpi
  implicit none
  integer, parameter :: max_ranks = 64
  integer :: ierr, rank, nranks, root, r, i, failures, total, length
  integer :: mine(3), pair(2)
  integer :: all(4 * max_ranks), expected(4 * max_ranks)
  integer :: counts(max_ranks), displs(max_ranks)
  double precision :: reals(max_ranks), real_mine

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  failures = 0

  ! Counts 1, 2, 3, 1, ... and displacements in reverse rank order with a gap after each block.
  length = 0
  do r = nranks - 1, 0, -1
    counts(r + 1) = mod(r, 3) + 1
    displs(r + 1) = length
    length = length + counts(r + 1) + 1
  end do

  ! Gather, MPI_IN_PLACE at the root (rank 0): its own pair is already in place.
  pair = [10 * rank, -rank]
  all = -1
  if (rank == 0) then
    all(1:2) = pair
    call MPI_Gather(MPI_IN_PLACE, 2, MPI_INTEGER, all, 2, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    expected = -1
    expected(1:2 * nranks) = [(10 * (i / 2), i = 0, 2 * nranks - 1)]
    expected(2:2 * nranks:2) = [(-r, r = 0, nranks - 1)]
    if (any(all /= expected)) failures = failures + 1
    print '(a,*(1x,i0))', 'gather in place:', all(1:2 * nranks)
  else
    call MPI_Gather(pair, 2, MPI_INTEGER, all, 2, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  end if

  ! Gatherv to the last rank: uneven counts, reverse order.
  root = nranks - 1
  mine = [(100 * rank + i, i = 1, 3)]
  all = -1
  call MPI_Gatherv(mine, counts(rank + 1), MPI_INTEGER, all, counts, displs, MPI_INTEGER, root, &
                   MPI_COMM_WORLD, ierr)
  if (rank == root) then
    expected = -1
    do r = 0, nranks - 1
      expected(displs(r + 1) + 1:displs(r + 1) + counts(r + 1)) = [(100 * r + i, i = 1, counts(r + 1))]
    end do
    if (any(all /= expected)) failures = failures + 1
  end if

  ! Scatter from rank 1 (or 0 alone).
  root = min(1, nranks - 1)
  all = -2
  if (rank == root) all(1:2 * nranks) = [(1000 + i, i = 1, 2 * nranks)]
  pair = -1
  call MPI_Scatter(all, 2, MPI_INTEGER, pair, 2, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
  if (any(pair /= [1001 + 2 * rank, 1002 + 2 * rank])) failures = failures + 1
  if (rank == 0) print '(a,*(1x,i0))', 'scatter:', pair

  ! Scatterv, MPI_IN_PLACE at the root (rank 0): its block stays in the send buffer.
  all = -2
  if (rank == 0) all(1:length) = [(2000 + i, i = 1, length)]
  mine = -1
  if (rank == 0) then
    call MPI_Scatterv(all, counts, displs, MPI_INTEGER, MPI_IN_PLACE, counts(1), MPI_INTEGER, 0, &
                      MPI_COMM_WORLD, ierr)
    print '(a,*(1x,i0))', 'scatterv in place:', all(1:length)
  else
    call MPI_Scatterv(all, counts, displs, MPI_INTEGER, mine, counts(rank + 1), MPI_INTEGER, 0, &
                      MPI_COMM_WORLD, ierr)
    if (any(mine(1:counts(rank + 1)) /= [(2000 + displs(rank + 1) + i, i = 1, counts(rank + 1))])) &
      failures = failures + 1
  end if

  ! Allgather of doubles, MPI_IN_PLACE at every rank.
  reals = -1.0d0
  real_mine = rank / 3.0d0
  reals(rank + 1) = real_mine
  call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, reals, 1, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
  if (any(reals(1:nranks) /= [(r / 3.0d0, r = 0, nranks - 1)])) failures = failures + 1
  if (rank == 0) print '(a,*(1x,z16.16))', 'allgather in place:', (transfer(reals(r), 0_8), r = 1, nranks)

  ! Allgatherv: uneven counts, reverse order.
  mine = [(-100 * rank - i, i = 1, 3)]
  all = -1
  call MPI_Allgatherv(mine, counts(rank + 1), MPI_INTEGER, all, counts, displs, MPI_INTEGER, &
                      MPI_COMM_WORLD, ierr)
  expected = -1
  do r = 0, nranks - 1
    expected(displs(r + 1) + 1:displs(r + 1) + counts(r + 1)) = [(-100 * r - i, i = 1, counts(r + 1))]
  end do
  if (any(all /= expected)) failures = failures + 1
  if (rank == 0) print '(a,*(1x,i0))', 'allgatherv:', all(1:length)

  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0)', 'failed checks: ', total
  call MPI_Finalize(ierr)
  if (total /= 0) stop 1
end program collectives_gather_fortran
