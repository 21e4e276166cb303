! collectives_nonblocking.f90: MPI_Ibarrier, MPI_Ibcast and MPI_Iallreduce from Fortran (`use mpi`) on
! MPI_COMM_WORLD, outstanding together with a point-to-point exchange and completed by one
! MPI_Waitall, then an MPI_IN_PLACE MPI_Iallreduce completed by MPI_Test, then MPI_Ireduce,
! MPI_Igather, MPI_Iscatter(v), MPI_Iallgather(v), MPI_Ialltoall and MPI_Ireduce_scatter_block
! outstanding together (non-zero roots), completed by MPI_Test polling, last first, with a deadline.
! Rank 0 prints the results;
! every rank checks what it received. Run with and without the preload: the transcripts must be
! identical (run_collectives.sh, scenario nonblocking-fortran). Exit status 1 on a failed check.
program collectives_nonblocking_fortran
  use mpi
  implicit none
  integer :: ierr, rank, nranks, root, i, failures, total, right, left, got, request
  integer :: values(4), expected(4), sums(3), mine(3), in_place(3)
  integer :: requests(5), data_requests(8)
  integer :: statuses(MPI_STATUS_SIZE, 5)
  logical :: done
  integer :: reduced(2), gathered(2, 0:63), scattered(2), to_scatter(2, 0:63), everyone(0:63), mine2(2)
  integer :: counts(0:63), displs(0:63), v_got(2), v_all(0:127), a2a_in(0:63), a2a_out(0:63)
  integer :: rs_in(0:63), rs_out
  double precision :: deadline

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  failures = 0
  right = mod(rank + 1, nranks)
  left = mod(rank + nranks - 1, nranks)
  root = nranks - 1

  expected = [(1000 * root + 7 * i, i = 1, 4)]
  values = -1
  if (rank == root) values = expected
  mine = [rank + 1, 3 * rank, -rank]
  got = -1
  call MPI_Ibarrier(MPI_COMM_WORLD, requests(1), ierr)
  call MPI_Ibcast(values, 4, MPI_INTEGER, root, MPI_COMM_WORLD, requests(2), ierr)
  call MPI_Irecv(got, 1, MPI_INTEGER, left, 5, MPI_COMM_WORLD, requests(3), ierr)
  call MPI_Iallreduce(mine, sums, 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, requests(4), ierr)
  call MPI_Isend(rank, 1, MPI_INTEGER, right, 5, MPI_COMM_WORLD, requests(5), ierr)
  call MPI_Waitall(5, requests, statuses, ierr)
  if (ierr /= MPI_SUCCESS) failures = failures + 1
  if (any(requests /= MPI_REQUEST_NULL)) failures = failures + 1
  if (any(values /= expected)) failures = failures + 1
  if (got /= left) failures = failures + 1
  if (sums(1) /= nranks * (nranks + 1) / 2) failures = failures + 1
  if (rank == 0) then
    print '(a)', 'ibarrier passed'
    print '(a,i0,a,4(1x,i0))', 'ibcast root ', root, ':', values
    print '(a,3(1x,i0))', 'iallreduce sum:', sums
  end if

  in_place = [rank, 10 - rank, mod(rank, 3)]
  call MPI_Iallreduce(MPI_IN_PLACE, in_place, 3, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, request, ierr)
  done = .false.
  do while (.not. done)
    call MPI_Test(request, done, MPI_STATUS_IGNORE, ierr)
  end do
  if (request /= MPI_REQUEST_NULL) failures = failures + 1
  if (rank == 0) print '(a,3(1x,i0))', 'iallreduce in place min:', in_place

  mine2 = [rank, 2 * rank]
  to_scatter = -1
  if (rank == 1) to_scatter(:, 0:nranks - 1) = reshape([(i, i = 0, 2 * nranks - 1)], [2, nranks])
  counts(0:nranks - 1) = [(mod(i, 2) + 1, i = 0, nranks - 1)]
  displs(0:nranks - 1) = [(2 * (nranks - 1 - i), i = 0, nranks - 1)]
  v_got = -1
  v_all = -1
  call MPI_Ireduce(mine2, reduced, 2, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, data_requests(1), ierr)
  call MPI_Igather(mine2, 2, MPI_INTEGER, gathered, 2, MPI_INTEGER, 1, MPI_COMM_WORLD, data_requests(2), ierr)
  call MPI_Iscatter(to_scatter, 2, MPI_INTEGER, scattered, 2, MPI_INTEGER, 1, MPI_COMM_WORLD, &
                    data_requests(3), ierr)
  call MPI_Iallgather(rank, 1, MPI_INTEGER, everyone, 1, MPI_INTEGER, MPI_COMM_WORLD, data_requests(4), ierr)
  call MPI_Iscatterv(to_scatter, counts, displs, MPI_INTEGER, v_got, mod(rank, 2) + 1, MPI_INTEGER, 1, &
                     MPI_COMM_WORLD, data_requests(5), ierr)
  call MPI_Iallgatherv(mine2, mod(rank, 2) + 1, MPI_INTEGER, v_all, counts, displs, MPI_INTEGER, &
                       MPI_COMM_WORLD, data_requests(6), ierr)
  a2a_in(0:nranks - 1) = [(100 * rank + i, i = 0, nranks - 1)]
  call MPI_Ialltoall(a2a_in, 1, MPI_INTEGER, a2a_out, 1, MPI_INTEGER, MPI_COMM_WORLD, data_requests(7), ierr)
  rs_in(0:nranks - 1) = [(rank + 10 * i, i = 0, nranks - 1)]
  call MPI_Ireduce_scatter_block(rs_in, rs_out, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, data_requests(8), ierr)
  deadline = MPI_Wtime() + 120
  do i = 8, 1, -1
    done = .false.
    do while (.not. done)
      call MPI_Test(data_requests(i), done, MPI_STATUS_IGNORE, ierr)
      if (.not. done .and. MPI_Wtime() > deadline) then
        print '(a,i0,a)', 'FAIL: nonblocking request ', i, ' not complete after 120 s of MPI_Test'
        call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
      end if
    end do
  end do
  if (rank == root .and. any(reduced /= [nranks * (nranks - 1) / 2, nranks * (nranks - 1)])) failures = failures + 1
  if (rank == 1 .and. any(gathered(2, 0:nranks - 1) /= [(2 * i, i = 0, nranks - 1)])) failures = failures + 1
  if (any(scattered /= [2 * rank, 2 * rank + 1])) failures = failures + 1
  if (any(everyone(0:nranks - 1) /= [(i, i = 0, nranks - 1)])) failures = failures + 1
  if (v_got(1) /= displs(rank)) failures = failures + 1
  if (v_all(displs(rank)) /= rank) failures = failures + 1
  if (any(a2a_out(0:nranks - 1) /= [(100 * i + rank, i = 0, nranks - 1)])) failures = failures + 1
  if (rs_out /= nranks * (nranks - 1) / 2 + 10 * nranks * rank) failures = failures + 1
  if (rank == 0) then
    print '(a,2(1x,i0))', 'iscatter at 0:', scattered
    print '(a,*(1x,i0))', 'iallgather:', everyone(0:nranks - 1)
    print '(a,*(1x,i0))', 'iallgatherv:', v_all(0:2 * nranks - 1)
    print '(a,*(1x,i0))', 'ialltoall:', a2a_out(0:nranks - 1)
    print '(a,1x,i0)', 'ireduce_scatter_block:', rs_out
  end if

  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
  if (total /= 0) stop 1
end program collectives_nonblocking_fortran
