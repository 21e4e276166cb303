! collectives_exchange.f90: MPI_Alltoall, MPI_Alltoallv, MPI_Alltoallw, MPI_Reduce_scatter, MPI_Reduce_scatter_block,
! MPI_Scan and MPI_Exscan from Fortran (`use mpi`) on MPI_COMM_WORLD, once each (and MPI_Alltoall
! and MPI_Exscan with MPI_IN_PLACE). Every rank checks what it received; rank 0 prints every rank's
! results. Run with and without the preload: the transcripts must be identical (run_collectives.sh,
! scenario exchange-fortran). Exit status 1 on a failed check.
program collectives_exchange_fortran
  use mpi
  implicit none
  integer, parameter :: max_ranks = 16, width = 4 * max_ranks
  integer :: ierr, rank, nranks, i, j, failures, total, position, integer_bytes
  integer :: send(2 * max_ranks), received(2 * max_ranks), in_place(2 * max_ranks)
  integer :: send_counts(max_ranks), send_displacements(max_ranks)
  integer :: receive_counts(max_ranks), receive_displacements(max_ranks), vector_in(3 * max_ranks)
  integer :: vector_out(3 * max_ranks), counts(max_ranks), w_out(3 * max_ranks)
  integer :: types(max_ranks), byte_displacements(max_ranks), receive_byte_displacements(max_ranks)
  integer :: block_sums(2), scan_sums(2), exscan_sums(2), exscan_in_place(2)
  integer :: line(width), all_lines(width, max_ranks)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  if (nranks > max_ranks) call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  failures = 0
  line = -1

  ! Alltoall: two integers to every rank; then in place.
  do j = 0, nranks - 1
    send(2 * j + 1) = 1000 * rank + 10 * j
    send(2 * j + 2) = 1000 * rank + 10 * j + 1
  end do
  call MPI_Alltoall(send, 2, MPI_INTEGER, received, 2, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do j = 0, nranks - 1
    if (received(2 * j + 1) /= 1000 * j + 10 * rank) failures = failures + 1
  end do
  line(1:2 * nranks) = received(1:2 * nranks)
  in_place(1:2 * nranks) = send(1:2 * nranks) + 7
  call MPI_Alltoall(MPI_IN_PLACE, 0, MPI_INTEGER, in_place, 2, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  if (any(in_place(1:2 * nranks) /= received(1:2 * nranks) + 7)) failures = failures + 1

  ! Alltoallv: (rank + peer) mod 3 integers each way, blocks one apart.
  position = 0
  do j = 0, nranks - 1
    send_counts(j + 1) = mod(rank + j, 3)
    send_displacements(j + 1) = position
    receive_counts(j + 1) = mod(rank + j, 3)
    receive_displacements(j + 1) = position
    do i = 1, send_counts(j + 1)
      vector_in(position + i) = 100 * rank + 10 * j + i
    end do
    position = position + send_counts(j + 1) + 1
  end do
  vector_out = -1
  call MPI_Alltoallv(vector_in, send_counts, send_displacements, MPI_INTEGER, vector_out, receive_counts, &
                     receive_displacements, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do j = 0, nranks - 1
    do i = 1, receive_counts(j + 1)
      if (vector_out(receive_displacements(j + 1) + i) /= 100 * j + 10 * rank + i) failures = failures + 1
    end do
  end do
  line(2 * nranks + 1:2 * nranks + position) = vector_out(1:position)

  ! Alltoallw: the same blocks as Alltoallv, described with a datatype per peer and byte displacements.
  types = MPI_INTEGER
  call MPI_Type_size(MPI_INTEGER, integer_bytes, ierr)
  byte_displacements = integer_bytes * send_displacements
  receive_byte_displacements = integer_bytes * receive_displacements
  w_out = -1
  call MPI_Alltoallw(vector_in, send_counts, byte_displacements, types, w_out, receive_counts, &
                     receive_byte_displacements, types, MPI_COMM_WORLD, ierr)
  if (any(w_out(1:position) /= vector_out(1:position))) failures = failures + 1

  ! Reduce_scatter_block (2 each) and Reduce_scatter (counts 1, 2, 1, 2, ...): sums.
  do i = 1, 2 * nranks
    vector_in(i) = rank * 5 + i
  end do
  call MPI_Reduce_scatter_block(vector_in, block_sums, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (block_sums(1) /= 5 * nranks * (nranks - 1) / 2 + nranks * (2 * rank + 1)) failures = failures + 1
  total = 0
  do j = 1, nranks
    counts(j) = 1 + mod(j - 1, 2)
    total = total + counts(j)
  end do
  vector_out = -1
  call MPI_Reduce_scatter(vector_in, vector_out, counts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)

  ! Scan and Exscan (in place): sums of rank + 1 and of 2 * rank.
  call MPI_Scan([rank + 1, 2 * rank], scan_sums, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (scan_sums(1) /= (rank + 1) * (rank + 2) / 2) failures = failures + 1
  exscan_sums = -5
  call MPI_Exscan([rank + 1, 2 * rank], exscan_sums, 2, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  exscan_in_place = [rank + 1, 2 * rank]
  call MPI_Exscan(MPI_IN_PLACE, exscan_in_place, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank > 0 .and. exscan_in_place(1) /= rank * (rank + 1) / 2) failures = failures + 1
  if (rank == 0) then  ! undefined at rank 0
    exscan_sums = 0
    exscan_in_place = 0
  end if

  i = 2 * nranks + position
  line(i + 1:i + 2) = block_sums
  line(i + 3:i + 2 + counts(rank + 1)) = vector_out(1:counts(rank + 1))
  i = i + 2 + counts(rank + 1)
  line(i + 1:i + 2) = scan_sums
  line(i + 3:i + 4) = exscan_sums
  line(i + 5:i + 6) = exscan_in_place
  call MPI_Gather(line, width, MPI_INTEGER, all_lines, width, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    do j = 1, nranks
      print '(a,i0,a,*(1x,i0))', 'rank ', j - 1, ':', pack(all_lines(:, j), all_lines(:, j) /= -1)
    end do
  end if

  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
  if (total /= 0) stop 1
end program collectives_exchange_fortran
