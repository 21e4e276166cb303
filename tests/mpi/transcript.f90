! transcript: what the Fortran test programs (mpi_semantics.f90, mpi_semantics_f08.f90) print. Each
! rank notes its lines; at the end rank 0 gathers every rank's lines and prints them rank by rank,
! so the output does not depend on how mpirun interleaves the ranks' streams. No MPI in here: the
! two programs use different MPI bindings.
module transcript
  implicit none
  integer, parameter :: max_lines = 80, line_length = 120
  character(len=line_length) :: lines(max_lines) = ' '
  integer :: used = 0
contains
  subroutine note(text)
    character(len=*), intent(in) :: text
    if (used < max_lines) then
      used = used + 1
      lines(used) = text
    end if
  end subroutine note

  character(len=3) function yes_no(flag)
    logical, intent(in) :: flag
    yes_no = merge('yes', 'no ', flag)
  end function yes_no

  ! Prints the gathered lines of every rank (all_lines(:, rank)), then 'done'.
  subroutine print_transcripts(all_lines)
    character(len=line_length), intent(in) :: all_lines(:, 0:)
    integer :: rank, i
    do rank = 0, size(all_lines, 2) - 1
      do i = 1, max_lines
        if (all_lines(i, rank) /= ' ') print '(a, i1, a, a)', 'rank ', rank, ': ', trim(all_lines(i, rank))
      end do
    end do
    print '(a)', 'done'
  end subroutine print_transcripts

  ! Busy-waits (the MPI library keeps no progress thread to hand the time to).
  subroutine sleep_ms(milliseconds)
    integer, intent(in) :: milliseconds
    integer(kind=8) :: start, now, rate
    call system_clock(start, rate)
    do
      call system_clock(now)
      if ((now - start) * 1000 >= milliseconds * rate) exit
    end do
  end subroutine sleep_ms
end module transcript
