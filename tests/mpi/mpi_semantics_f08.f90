! mpi_semantics_f08.f90: the `use mpi_f08` binding (mpi_<call>_f08_ entry points, TYPE(MPI_Comm)
! handles, TYPE(MPI_Status), ierror left out) through the same calls as mpi_semantics.f90, in
! short: a plain MPI program whose transcript must be the same with and without the preload.
! Four ranks, run as two sites {0,1} and {2,3}.
program mpi_semantics_f08
  use mpi_f08
  use transcript
  implicit none
  integer, parameter :: ranks = 4
  integer :: rank, world_size, provided, i, k, value, count, index, outcount, indices(3), got(3)
  integer :: data(40), sources(3) = [3, 1, 2]
  type(MPI_Comm) :: comm, split, order_comm
  type(MPI_Request) :: requests(3), request
  type(MPI_Status) :: status, statuses(3)
  type(MPI_Message) :: message
  type(MPI_Datatype) :: pair
  logical :: flag, right
  character(len=line_length) :: text
  character(len=line_length), allocatable :: all_lines(:, :)

  call MPI_Init_thread(MPI_THREAD_FUNNELED, provided)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, world_size)
  if (world_size /= ranks) call MPI_Abort(MPI_COMM_WORLD, 2)
  call MPI_Comm_dup(MPI_COMM_WORLD, comm)

  ! wildcards and order: ranks 1..3 send 8 messages each to rank 0 (on a communicator of its own:
  ! the wildcard receives must not take the later phases' messages)
  call MPI_Comm_dup(MPI_COMM_WORLD, order_comm)
  if (rank == 0) then
    right = .true.
    got = 0
    do i = 1, 3 * 8
      call MPI_Recv(data, 40, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, order_comm, status)
      call MPI_Get_count(status, MPI_INTEGER, count)
      k = status%MPI_SOURCE
      if (data(1) /= got(k) .or. status%MPI_TAG /= got(k) .or. count /= got(k) + 1) right = .false.
      got(k) = got(k) + 1
    end do
    write (text, '(a, 3i3, a, l1)') 'order: from ranks 1 2 3:', got, '; in order: ', right
    call note(text)
  else
    do i = 0, 7
      data(1:i + 1) = i
      call MPI_Send(data, i + 1, MPI_INTEGER, 0, i, order_comm)
    end do
  end if
  call MPI_Comm_free(order_comm)

  ! Issend synchrony, probe, mprobe/mrecv, persistent send, Get_elements with rank 2 (other site)
  if (rank == 0) then
    value = 7
    call MPI_Issend(value, 1, MPI_INTEGER, 2, 20, comm, request)
    call sleep_ms(300)
    call MPI_Test(request, flag, MPI_STATUS_IGNORE)
    write (text, '(a, l1)') 'issend: complete before the receive was posted: ', flag
    call note(text)
    call MPI_Send(value, 1, MPI_INTEGER, 2, 21, comm)
    call MPI_Wait(request, MPI_STATUS_IGNORE)
    call MPI_Probe(2, 22, comm, status)
    call MPI_Get_count(status, MPI_INTEGER, count)
    call MPI_Recv(data, count, MPI_INTEGER, 2, 22, comm, MPI_STATUS_IGNORE)
    call MPI_Mprobe(MPI_ANY_SOURCE, 23, comm, message, status)
    call MPI_Mrecv(data(count + 1:), 5, MPI_INTEGER, message, status)
    write (text, '(a, i3, a, 2i4)') 'probe count', count, '; probe and mprobe data', data(count), data(count + 5)
    call note(text)
    call MPI_Type_contiguous(2, MPI_INTEGER, pair)
    call MPI_Type_commit(pair)
    call MPI_Recv(data, 4, pair, 2, 24, comm, status)
    call MPI_Get_elements(status, pair, count)
    call MPI_Type_free(pair)
    write (text, '(a, i3)') 'datatypes: Get_elements of 7 integers as pairs:', count
    call note(text)
  else if (rank == 2) then
    call MPI_Recv(value, 1, MPI_INTEGER, 0, 21, comm, MPI_STATUS_IGNORE)
    call MPI_Recv(value, 1, MPI_INTEGER, 0, 20, comm, MPI_STATUS_IGNORE)
    data = [(i, i = 1, 40)]
    call MPI_Send(data, 11, MPI_INTEGER, 0, 22, comm)
    call MPI_Send_init(data(20), 5, MPI_INTEGER, 0, 23, comm, request)
    call MPI_Start(request)
    call MPI_Wait(request, MPI_STATUS_IGNORE)
    call MPI_Request_free(request)
    call MPI_Send(data, 7, MPI_INTEGER, 0, 24, comm)
  end if

  ! mixed requests: Waitany and Waitsome over receives from ranks 3, 1, 2; Waitall with statuses ignored
  if (rank /= 0) then
    do k = 30, 32
      call MPI_Send(rank * 100 + k, 1, MPI_INTEGER, 0, k, comm)
    end do
  else
    do k = 30, 32
      do i = 1, 3
        call MPI_Irecv(got(i), 1, MPI_INTEGER, sources(i), k, comm, requests(i))
      end do
      right = .true.
      select case (k)
      case (30)
        do i = 1, 3
          call MPI_Waitany(3, requests, index, status)
          if (index < 1 .or. index > 3) then
            right = .false.
          else if (status%MPI_SOURCE /= sources(index)) then
            right = .false.
          end if
        end do
      case (31)
        outcount = 0
        do while (outcount /= MPI_UNDEFINED)
          call MPI_Waitsome(3, requests, outcount, indices, statuses)
          do i = 1, max(outcount, 0)
            if (statuses(i)%MPI_SOURCE /= sources(indices(i))) right = .false.
          end do
        end do
      case (32)
        call MPI_Waitall(3, requests, MPI_STATUSES_IGNORE)
      end select
      right = right .and. all(got == sources * 100 + k) .and. all(requests == MPI_REQUEST_NULL)
      write (text, '(a, i3, a, l1)') 'mixed: tag', k, ' indices, sources, values right: ', right
      call note(text)
    end do
  end if

  ! the same tag on a split communicator and on the duplicate
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, split)
  if (rank == 2) then
    call MPI_Send(1, 1, MPI_INTEGER, 0, 5, comm)
    call MPI_Send(2, 1, MPI_INTEGER, 0, 5, split)
  else if (rank == 0) then
    call MPI_Recv(got(1), 1, MPI_INTEGER, MPI_ANY_SOURCE, 5, split, MPI_STATUS_IGNORE)
    call MPI_Recv(got(2), 1, MPI_INTEGER, MPI_ANY_SOURCE, 5, comm, MPI_STATUS_IGNORE)
    write (text, '(a, 2i3)') 'communicators: tag 5 on split, dup:', got(1:2)
    call note(text)
  end if
  call MPI_Comm_free(split)
  call MPI_Comm_free(comm)

  allocate (all_lines(max_lines, 0:ranks - 1))
  call MPI_Gather(lines, max_lines * line_length, MPI_CHARACTER, all_lines, max_lines * line_length, &
                  MPI_CHARACTER, 0, MPI_COMM_WORLD)
  if (rank == 0) call print_transcripts(all_lines)
  call MPI_Finalize()

end program mpi_semantics_f08
