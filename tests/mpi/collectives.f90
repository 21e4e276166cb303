! collectives.f90: MPI_Barrier, MPI_Bcast, MPI_Reduce and MPI_Allreduce from Fortran (`use mpi`) on
! MPI_COMM_WORLD: MPI_IN_PLACE and a user-defined operation. Rank 0 prints the results (integers,
! doubles in hex); every rank checks what it received. Run with and without the preload: the
! transcripts must be identical (run_collectives.sh, scenario fortran). Exit status 1 on a failed check.
subroutine larger_magnitude(invec, inoutvec, length, datatype)
  implicit none
  integer, intent(in) :: length, datatype
  integer, intent(in) :: invec(length)
  integer, intent(inout) :: inoutvec(length)
  integer :: i
  if (datatype < 0) return  ! MPI_INTEGER only; referenced so that -Wall does not flag it
  do i = 1, length
    if (abs(invec(i)) > abs(inoutvec(i)) .or. (abs(invec(i)) == abs(inoutvec(i)) .and. invec(i) < inoutvec(i))) then
      inoutvec(i) = invec(i)
    end if
  end do
end subroutine larger_magnitude

program collectives_fortran
  use mpi
  implicit none
  external :: larger_magnitude
  integer :: ierr, rank, nranks, root, i, failures, total, magnitude_op
  integer :: values(4), expected(4), sums(3), in_place(3), mine(3), larger(3)
  double precision :: reals(2), real_sums(2)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  failures = 0
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a)', 'barrier passed'

  do root = 0, nranks - 1
    expected = [(1000 * root + 7 * i, i = 1, 4)]
    values = -1
    if (rank == root) values = expected
    call MPI_Bcast(values, 4, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
    if (any(values /= expected)) failures = failures + 1
    if (rank == 0) print '(a,i0,a,4(1x,i0))', 'bcast root ', root, ':', values
  end do

  mine = [rank + 1, 3 * rank, -rank]
  in_place = mine
  root = nranks - 1
  if (rank == root) then
    call MPI_Reduce(MPI_IN_PLACE, in_place, 3, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, ierr)
  else
    call MPI_Reduce(mine, sums, 3, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, ierr)
  end if
  call MPI_Bcast(in_place, 3, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,3(1x,i0))', 'reduce in place at the last rank:', in_place

  call MPI_Allreduce(mine, sums, 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  in_place = [rank, 10 - rank, mod(rank, 3)]
  call MPI_Allreduce(MPI_IN_PLACE, in_place, 3, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, ierr)
  reals = [rank * 0.5d0, -1.0d0 / 2**rank]
  call MPI_Allreduce(reals, real_sums, 2, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Op_create(larger_magnitude, .true., magnitude_op, ierr)
  mine = [merge(-rank, rank, mod(rank, 2) == 1), 3 - rank, merge(-50, 50, rank == 1)]
  call MPI_Allreduce(mine, larger, 3, MPI_INTEGER, magnitude_op, MPI_COMM_WORLD, ierr)
  call MPI_Op_free(magnitude_op, ierr)
  if (rank == 0) then
    print '(a,3(1x,i0))', 'allreduce sum:', sums
    print '(a,3(1x,i0))', 'allreduce in place min:', in_place
    print '(a,2(1x,z16.16))', 'allreduce doubles:', transfer(real_sums(1), 0_8), transfer(real_sums(2), 0_8)
    print '(a,3(1x,i0))', 'allreduce user op:', larger
  end if
  if (sums(1) /= nranks * (nranks + 1) / 2) failures = failures + 1

  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
  if (total /= 0) stop 1
end program collectives_fortran
