! mpi_semantics.f90: the Fortran twin of mpi_semantics.c, a plain MPI program (`use mpi`, no
! LongPipe anything) that calls every point-to-point, completion and communicator routine the MPI
! front end interposes through its Fortran names, with the Fortran sentinels (MPI_STATUS_IGNORE,
! MPI_STATUSES_IGNORE, MPI_BOTTOM) and 1-based indices, and prints a transcript (transcript.f90)
! that must be the same with and without LD_PRELOAD=liblongpipe.so. Four ranks, run as two sites
! {0,1} and {2,3}.
!
!   mpi_semantics_f            every phase, then MPI_Finalize
!   mpi_semantics_f abort      MPI_Init, then rank 0 calls MPI_Abort(MPI_COMM_WORLD, 3)
!   mpi_semantics_f unreachable-return | unreachable-fatal
!                              rank 2 (the other site) stops itself (SIGSTOP) after one message;
!                              rank 0 keeps sending to it: with MPI_ERRORS_RETURN the failure must
!                              reach `ierror` (printed with its class, then MPI_Abort(.., 3)); with
!                              MPI_ERRORS_ARE_FATAL the job must be aborted. Under LongPipe only (Open
!                              MPI alone does not notice a stopped peer).
program mpi_semantics_f
  use mpi
  use transcript
  implicit none
  integer, parameter :: ranks = 4, order_messages = 10
  integer :: rank, world_size, provided, ierr, comm, i, k, value, count, elements, source
  integer :: status(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 5)
  integer :: requests(5), request, message, indices(5), outcount, index, next(0:ranks - 1)
  integer :: data(64), got(2), bsend_buffer(1000), pair, absolute, dup, split, created
  integer :: world_group, pair_group, lengths(2), types(2), a, b, detached_size
  integer(kind=MPI_ADDRESS_KIND) :: addresses(2)
  integer, parameter :: sources(3) = [3, 1, 2]
  logical :: flag, done(3), ok, right
  character(len=32) :: mode
  character(len=line_length) :: text
  character(len=line_length), allocatable :: all_lines(:, :)

  call get_command_argument(1, mode)
  if (mode == 'abort') then
    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    if (rank == 0) then
      print '(a)', 'abort: rank 0 calls MPI_Abort(MPI_COMM_WORLD, 3)'
      flush (6)
      call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
    end if
    do
      call sleep(1)
    end do
  end if

  if (mode == 'unreachable-return' .or. mode == 'unreachable-fatal') call unreachable_peer(mode)

  call MPI_Init_thread(MPI_THREAD_FUNNELED, provided, ierr)
  call must(ierr, 'init_thread')
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, world_size, ierr)
  if (world_size /= ranks) call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  write (text, '(a, a)') 'init: MPI_Init_thread provides FUNNELED: ', yes_no(provided >= MPI_THREAD_FUNNELED)
  call note(text)
  call MPI_Buffer_attach(bsend_buffer, 4 * size(bsend_buffer), ierr)

  ! --- order and wildcards: ranks 1..3 send to 0, which takes them with ANY_SOURCE / ANY_TAG -----
  call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
  if (rank == 0) then
    next = 0
    ok = .true.
    do i = 1, (ranks - 1) * order_messages
      call MPI_Recv(data, 64, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, status, ierr)
      call must(ierr, 'recv')
      source = status(MPI_SOURCE)
      call MPI_Get_count(status, MPI_INTEGER, count, ierr)
      if (data(1) /= next(source) .or. status(MPI_TAG) /= mod(next(source), 3) .or. count /= 1 + next(source)) ok = .false.
      next(source) = next(source) + 1
    end do
    write (text, '(a, 3i4, a, a)') 'order: messages from ranks 1 2 3:', next(1:3), '; in order with tags and counts: ', yes_no(ok)
    call note(text)
  else
    do i = 0, order_messages - 1
      data(1:i + 1) = i
      call MPI_Send(data, i + 1, MPI_INTEGER, 0, mod(i, 3), comm, ierr)
      call must(ierr, 'send')
    end do
  end if
  call end_phase()

  ! --- Ssend synchrony across the sites ----------------------------------------------------------
  call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
  if (rank == 0) then
    value = 42
    call MPI_Issend(value, 1, MPI_INTEGER, 2, 40, comm, request, ierr)
    call sleep_ms(300)
    call MPI_Test(request, flag, status, ierr)
    call note('ssend: Issend complete before the receive was posted: ' // yes_no(flag))
    call MPI_Send(value, 1, MPI_INTEGER, 2, 41, comm, ierr)
    call MPI_Wait(request, MPI_STATUS_IGNORE, ierr)
    call MPI_Ssend(value, 1, MPI_INTEGER, 2, 42, comm, ierr)
    call note('ssend: Issend and Ssend complete after the match')
  else if (rank == 2) then
    call MPI_Recv(value, 1, MPI_INTEGER, 0, 41, comm, MPI_STATUS_IGNORE, ierr)
    call MPI_Recv(value, 1, MPI_INTEGER, 0, 40, comm, MPI_STATUS_IGNORE, ierr)
    call MPI_Recv(value, 1, MPI_INTEGER, 0, 42, comm, MPI_STATUS_IGNORE, ierr)
  end if
  call end_phase()

  ! --- probe, iprobe, mprobe + mrecv, improbe + imrecv --------------------------------------------
  call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
  if (rank == 2) then
    do k = 0, 3
      data = 1000 * k + [(i, i = 1, 64)]
      call MPI_Send(data, 37 + k, MPI_INTEGER, 0, 50 + k, comm, ierr)
    end do
  else if (rank == 0) then
    call MPI_Probe(MPI_ANY_SOURCE, 50, comm, status, ierr)
    call MPI_Get_count(status, MPI_INTEGER, count, ierr)
    call MPI_Recv(data, count, MPI_INTEGER, status(MPI_SOURCE), 50, comm, MPI_STATUS_IGNORE, ierr)
    write (text, '(a, 3i6)') 'probe: source, count, last:', status(MPI_SOURCE), count, data(count)
    call note(text)
    flag = .false.
    do while (.not. flag)
      call MPI_Iprobe(2, 51, comm, flag, status, ierr)
    end do
    call MPI_Get_count(status, MPI_INTEGER, count, ierr)
    call MPI_Recv(data, count, MPI_INTEGER, 2, 51, comm, status, ierr)
    write (text, '(a, 3i6)') 'iprobe: source, count, last:', status(MPI_SOURCE), count, data(count)
    call note(text)
    call MPI_Mprobe(2, MPI_ANY_TAG, comm, message, status, ierr)
    call MPI_Get_count(status, MPI_INTEGER, count, ierr)
    call MPI_Mrecv(data, count, MPI_INTEGER, message, status, ierr)
    write (text, '(a, 3i6, a, a)') 'mprobe+mrecv: tag, count, last:', status(MPI_TAG), count, data(count), &
      '; message null: ', yes_no(message == MPI_MESSAGE_NULL)
    call note(text)
    call MPI_Improbe(2, 99, comm, flag, message, status, ierr)
    call note('improbe: a tag nobody sent found: ' // yes_no(flag))
    flag = .false.
    do while (.not. flag)
      call MPI_Improbe(2, 53, comm, flag, message, status, ierr)
    end do
    call MPI_Get_count(status, MPI_INTEGER, count, ierr)
    call MPI_Imrecv(data, count, MPI_INTEGER, message, request, ierr)
    call MPI_Wait(request, status, ierr)
    write (text, '(a, 3i6)') 'improbe+imrecv: tag, count, last:', status(MPI_TAG), count, data(count)
    call note(text)
  end if
  call end_phase()

  ! --- persistent requests in every send mode; Startall; Request_free ------------------------------
  call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
  if (rank == 1 .or. rank == 2) then
    call MPI_Send_init(value, 1, MPI_INTEGER, 0, 60, comm, request, ierr)
    do k = 0, 2
      value = 10 * rank + k
      call MPI_Start(request, ierr)
      call MPI_Wait(request, MPI_STATUS_IGNORE, ierr)
    end do
    call MPI_Request_free(request, ierr)
  end if
  if (rank == 2) then
    value = 700
    call MPI_Ssend_init(value, 1, MPI_INTEGER, 0, 61, comm, requests(1), ierr)
    call MPI_Bsend_init(value, 1, MPI_INTEGER, 0, 62, comm, requests(2), ierr)
    call MPI_Recv(k, 1, MPI_INTEGER, 0, 64, comm, MPI_STATUS_IGNORE, ierr)   ! rank 0's receive is posted
    call MPI_Rsend_init(value, 1, MPI_INTEGER, 0, 63, comm, requests(3), ierr)
    call MPI_Startall(3, requests, ierr)
    call MPI_Waitall(3, requests, MPI_STATUSES_IGNORE, ierr)
    do k = 1, 3
      call MPI_Request_free(requests(k), ierr)
    end do
  else if (rank == 0) then
    call MPI_Recv_init(got(1), 1, MPI_INTEGER, 1, 60, comm, requests(1), ierr)
    call MPI_Recv_init(got(2), 1, MPI_INTEGER, 2, 60, comm, requests(2), ierr)
    do k = 0, 2
      call MPI_Startall(2, requests, ierr)
      call MPI_Waitall(2, requests, statuses, ierr)
      write (text, '(a, i2, a, 2i4, a, 2i3, a, a)') 'persistent: round', k, ' got', got, ' from', &
        statuses(MPI_SOURCE, 1:2), '; live: ', yes_no(all(requests(1:2) /= MPI_REQUEST_NULL))
      call note(text)
    end do
    call MPI_Request_free(requests(1), ierr)
    call MPI_Request_free(requests(2), ierr)
    do k = 61, 63
      call MPI_Irecv(data(k - 60), 1, MPI_INTEGER, 2, k, comm, requests(k - 60), ierr)
    end do
    call MPI_Send(k, 1, MPI_INTEGER, 2, 64, comm, ierr)
    call MPI_Waitall(3, requests, MPI_STATUSES_IGNORE, ierr)
    write (text, '(a, 3i5)') 'persistent: Ssend_init, Bsend_init, Rsend_init delivered', data(1:3)
    call note(text)
  end if
  call end_phase()

  ! --- the other send modes: Bsend, Ibsend, Rsend, Irsend, Isend -----------------------------------
  call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
  if (rank == 2) then
    value = 801
    call MPI_Bsend(value, 1, MPI_INTEGER, 0, 70, comm, ierr)
    value = 802
    call MPI_Ibsend(value, 1, MPI_INTEGER, 0, 71, comm, request, ierr)
    call MPI_Wait(request, MPI_STATUS_IGNORE, ierr)
    call MPI_Recv(k, 1, MPI_INTEGER, 0, 72, comm, MPI_STATUS_IGNORE, ierr)
    value = 803
    call MPI_Rsend(value, 1, MPI_INTEGER, 0, 73, comm, ierr)
    value = 804
    call MPI_Irsend(value, 1, MPI_INTEGER, 0, 74, comm, request, ierr)
    call MPI_Wait(request, MPI_STATUS_IGNORE, ierr)
    value = 805
    call MPI_Isend(value, 1, MPI_INTEGER, 0, 75, comm, request, ierr)
    call MPI_Wait(request, MPI_STATUS_IGNORE, ierr)
  else if (rank == 0) then
    call MPI_Recv(data(1), 1, MPI_INTEGER, 2, 70, comm, MPI_STATUS_IGNORE, ierr)
    call MPI_Recv(data(2), 1, MPI_INTEGER, 2, 71, comm, MPI_STATUS_IGNORE, ierr)
    call MPI_Irecv(data(3), 1, MPI_INTEGER, 2, 73, comm, requests(1), ierr)
    call MPI_Irecv(data(4), 1, MPI_INTEGER, 2, 74, comm, requests(2), ierr)
    call MPI_Send(k, 1, MPI_INTEGER, 2, 72, comm, ierr)
    call MPI_Waitall(2, requests, MPI_STATUSES_IGNORE, ierr)
    call MPI_Recv(data(5), 1, MPI_INTEGER, 2, 75, comm, MPI_STATUS_IGNORE, ierr)
    write (text, '(a, 5i5)') 'modes: Bsend Ibsend Rsend Irsend Isend delivered', data(1:5)
    call note(text)
  end if
  call end_phase()

  ! --- cancel an unmatched receive -------------------------------------------------------------------
  if (rank == 0) then
    call MPI_Irecv(value, 1, MPI_INTEGER, 2, 99, MPI_COMM_WORLD, request, ierr)
    call MPI_Cancel(request, ierr)
    call MPI_Wait(request, status, ierr)
    call MPI_Test_cancelled(status, flag, ierr)
    call note('cancel: unmatched receive cancelled: ' // yes_no(flag) // '; request null: ' // &
      yes_no(request == MPI_REQUEST_NULL))
  end if

  ! --- mixed requests (ranks 3, 1, 2: both paths) in every completion call; 1-based indices ---------
  call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
  if (rank /= 0) then
    do k = 0, 5
      value = 1000 * rank + k
      call MPI_Send(value, 1, MPI_INTEGER, 0, 80 + k, comm, ierr)
    end do
    if (rank == 2) then
      call MPI_Recv(k, 1, MPI_INTEGER, 0, 88, comm, MPI_STATUS_IGNORE, ierr)
      value = 2468
      call MPI_Send(value, 1, MPI_INTEGER, 0, 87, comm, ierr)
    end if
  else
    do k = 0, 5
      do i = 1, 3
        call MPI_Irecv(data(i), 1, MPI_INTEGER, sources(i), 80 + k, comm, requests(i), ierr)
      end do
      done = .false.
      right = .true.
      do while (.not. all(done))
        select case (k)
        case (0)
          call MPI_Waitall(3, requests, statuses, ierr)
          done = .true.
          right = all(statuses(MPI_SOURCE, 1:3) == sources)
        case (1)
          call MPI_Waitany(3, requests, index, status, ierr)
          call complete(index, status(MPI_SOURCE))
        case (2, 5)
          if (k == 2) call MPI_Waitsome(3, requests, outcount, indices, statuses, ierr)
          if (k == 5) call MPI_Testsome(3, requests, outcount, indices, statuses, ierr)
          do i = 1, outcount
            call complete(indices(i), statuses(MPI_SOURCE, i))
          end do
        case (3)
          call MPI_Testall(3, requests, flag, statuses, ierr)
          if (flag) then
            done = .true.
            right = all(statuses(MPI_SOURCE, 1:3) == sources)
          end if
        case (4)
          call MPI_Testany(3, requests, index, flag, status, ierr)
          if (flag) call complete(index, status(MPI_SOURCE))
        end select
      end do
      right = right .and. all(data(1:3) == 1000 * sources + k) .and. all(requests(1:3) == MPI_REQUEST_NULL)
      call note('mixed: ' // trim(call_name(k)) // &
        ': indices, sources, values and null requests right: ' // yes_no(right))
    end do
    call MPI_Irecv(value, 1, MPI_INTEGER, 2, 87, comm, request, ierr)
    call MPI_Send(k, 1, MPI_INTEGER, 2, 88, comm, ierr)
    flag = .false.
    do while (.not. flag)
      call MPI_Request_get_status(request, flag, status, ierr)
    end do
    call note('request_get_status: request still live: ' // yes_no(request /= MPI_REQUEST_NULL))
    call MPI_Wait(request, status, ierr)
    write (text, '(a, i6, a, i3)') 'request_get_status: then Wait gave', value, ' from', status(MPI_SOURCE)
    call note(text)
  end if
  call end_phase()

  ! --- derived datatypes: Get_count / Get_elements; MPI_BOTTOM with absolute addresses -------------
  call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
  call MPI_Type_contiguous(2, MPI_INTEGER, pair, ierr)
  call MPI_Type_commit(pair, ierr)
  if (rank == 2) then
    data(1:7) = [(i, i = 1, 7)]
    call MPI_Send(data, 7, MPI_INTEGER, 0, 90, comm, ierr)
    a = 31
    b = 32
    call MPI_Get_address(a, addresses(1), ierr)
    call MPI_Get_address(b, addresses(2), ierr)
    lengths = 1
    types = MPI_INTEGER
    call MPI_Type_create_struct(2, lengths, addresses, types, absolute, ierr)
    call MPI_Type_commit(absolute, ierr)
    call MPI_Send(MPI_BOTTOM, 1, absolute, 0, 91, comm, ierr)
    call MPI_Type_free(absolute, ierr)
  else if (rank == 0) then
    data = 0
    call MPI_Recv(data, 4, pair, 2, 90, comm, status, ierr)
    call MPI_Get_count(status, pair, count, ierr)
    call MPI_Get_elements(status, pair, elements, ierr)
    call note('datatypes: 7 integers into pairs: Get_count undefined: ' // yes_no(count == MPI_UNDEFINED))
    write (text, '(a, i3, a, i3)') 'datatypes: Get_elements', elements, ', last', data(7)
    call note(text)
    call MPI_Recv(got, 2, MPI_INTEGER, 2, 91, comm, MPI_STATUS_IGNORE, ierr)
    write (text, '(a, 2i4)') 'datatypes: sent from MPI_BOTTOM:', got
    call note(text)
  end if
  call MPI_Type_free(pair, ierr)
  call end_phase()

  ! --- Sendrecv and Sendrecv_replace around the ring -----------------------------------------------
  value = -1
  call MPI_Sendrecv(rank * 11, 1, MPI_INTEGER, mod(rank + 1, ranks), 100, value, 1, MPI_INTEGER, &
                    MPI_ANY_SOURCE, 100, MPI_COMM_WORLD, status, ierr)
  write (text, '(a, i4, a, i2)') 'sendrecv: got', value, ' from', status(MPI_SOURCE)
  call note(text)
  value = rank * 111
  call MPI_Sendrecv_replace(value, 1, MPI_INTEGER, mod(rank + ranks - 1, ranks), 101, mod(rank + 1, ranks), 101, &
                            MPI_COMM_WORLD, status, ierr)
  write (text, '(a, i4, a, i2)') 'sendrecv_replace: got', value, ' from', status(MPI_SOURCE)
  call note(text)

  ! --- four communicators, one tag -------------------------------------------------------------------
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), -rank, split, ierr)
  call MPI_Comm_group(MPI_COMM_WORLD, world_group, ierr)
  call MPI_Group_incl(world_group, 2, [0, 2], pair_group, ierr)
  call MPI_Comm_create(MPI_COMM_WORLD, pair_group, created, ierr)
  if (rank == 2) then
    call MPI_Send(1, 1, MPI_INTEGER, 0, 5, MPI_COMM_WORLD, ierr)
    call MPI_Send(2, 1, MPI_INTEGER, 0, 5, dup, ierr)
    call MPI_Send(3, 1, MPI_INTEGER, 1, 5, split, ierr)
    call MPI_Send(4, 1, MPI_INTEGER, 0, 5, created, ierr)
  else if (rank == 0) then
    call MPI_Recv(got(1), 1, MPI_INTEGER, MPI_ANY_SOURCE, 5, created, MPI_STATUS_IGNORE, ierr)
    call MPI_Recv(got(2), 1, MPI_INTEGER, MPI_ANY_SOURCE, 5, split, MPI_STATUS_IGNORE, ierr)
    write (text, '(a, 2i3)') 'communicators: tag 5 on created, split:', got
    call note(text)
    call MPI_Recv(got(1), 1, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, MPI_STATUS_IGNORE, ierr)
    call MPI_Recv(got(2), 1, MPI_INTEGER, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    write (text, '(a, 2i3)') 'communicators: tag 5 on dup, world:', got
    call note(text)
  end if
  call MPI_Group_free(pair_group, ierr)
  call MPI_Group_free(world_group, ierr)
  call MPI_Comm_free(dup, ierr)
  call MPI_Comm_free(split, ierr)
  if (created /= MPI_COMM_NULL) call MPI_Comm_free(created, ierr)
  call note('communicators: freed: ' // yes_no(dup == MPI_COMM_NULL .and. split == MPI_COMM_NULL .and. &
    created == MPI_COMM_NULL))

  call MPI_Buffer_detach(bsend_buffer, detached_size, ierr)
  ! Rank 0 prints every rank's transcript, rank by rank.
  allocate (all_lines(max_lines, 0:ranks - 1))
  call MPI_Gather(lines, max_lines * line_length, MPI_CHARACTER, all_lines, max_lines * line_length, &
                  MPI_CHARACTER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) call print_transcripts(all_lines)
  call MPI_Finalize(ierr)

contains
  subroutine unreachable_peer(handler)
    character(len=*), intent(in) :: handler
    integer, parameter :: sigstop = 19, give_up_ms = 60000, pause_ms = 100
    integer :: error_class, waited
    value = 1
    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    if (rank == 2) then
      call MPI_Recv(value, 1, MPI_INTEGER, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)  ! the session is up
      call kill(getpid(), sigstop)
    else if (rank == 0) then
      if (handler == 'unreachable-return') call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
      call MPI_Send(value, 1, MPI_INTEGER, 2, 1, MPI_COMM_WORLD, ierr)
      waited = 0
      do while (ierr == MPI_SUCCESS .and. waited < give_up_ms)
        call MPI_Send(value, 1, MPI_INTEGER, 2, 2, MPI_COMM_WORLD, ierr)
        call sleep_ms(pause_ms)
        waited = waited + pause_ms
      end do
      call MPI_Error_class(ierr, error_class, k)
      if (ierr == MPI_SUCCESS) then
        print '(a)', 'send to the stopped rank: never failed'
      else if (error_class == MPI_ERR_OTHER) then
        print '(a)', 'send to the stopped rank: failed (class MPI_ERR_OTHER)'
      else
        print '(a, i0, a)', 'send to the stopped rank: failed (class ', error_class, ')'
      end if
      flush (6)
      call MPI_Abort(MPI_COMM_WORLD, 3, k)
    end if
    do
      call sleep(1)
    end do
  end subroutine unreachable_peer

  subroutine must(code, what)
    integer, intent(in) :: code
    character(len=*), intent(in) :: what
    if (code /= MPI_SUCCESS) then
      write (0, '(a, a)') 'FAILED: ', what
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
  end subroutine must

  subroutine end_phase()
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_Comm_free(comm, ierr)
  end subroutine end_phase

  ! One request of the mixed phase completed: its (1-based) index must be new and match its source.
  subroutine complete(at, from)
    integer, intent(in) :: at, from
    if (at < 1 .or. at > 3) then
      right = .false.
      done = .true.
    else
      if (done(at) .or. from /= sources(at)) right = .false.
      done(at) = .true.
    end if
  end subroutine complete

  character(len=8) function call_name(which)
    integer, intent(in) :: which
    character(len=8), parameter :: names(0:5) = [character(len=8) :: 'Waitall', 'Waitany', 'Waitsome', 'Testall', &
                                                 'Testany', 'Testsome']
    call_name = names(which)
  end function call_name

end program mpi_semantics_f
