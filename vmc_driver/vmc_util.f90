! vmc_util.f90 -- fatal errors, small string helpers and the wall clock, shared by the driver's modules.
! The driver stops on the first error: a message on stderr naming the key or the file and line,
! exit status 2, and no result file (the JSON is only opened once the run has finished). The readers
! (vmc_input, vmc_molden) do not stop: they return a status and this message to their caller.
module vmc_util
  use, intrinsic :: iso_fortran_env, only: error_unit, real64, int64
  implicit none
  private
  public :: die, warn, lower, itoa, rtoa, short, fixed, right, clock_ticks, clock_seconds, is_finite
  ! rtoa's edit descriptor and its field width (vmc_json's arrays format runs of numbers with it: the same text).
  character(len=*), parameter, public :: rtoa_edit = 'es24.16e3'
  integer, parameter, public :: rtoa_width = 24

  ! Set by vmc_par when the run has several MPI ranks: the message names the rank and host, and the hook
  ! (MPI_Abort) stops every rank, so one failing rank cannot leave the others waiting in a collective.
  abstract interface
    subroutine die_hook_iface()
    end subroutine
  end interface
  procedure(die_hook_iface), pointer, public :: die_hook => null()
  character(len=160), public :: die_prefix = ''

  interface itoa
    module procedure itoa4, itoa8
  end interface

contains

  subroutine die(msg)
    character(len=*), intent(in) :: msg
    !$omp critical (vmc_die)
    if (len_trim(die_prefix) > 0) then
      write(error_unit, '(a)') 'qmmm_vmc: error: ' // trim(die_prefix) // ': ' // trim(msg)
    else
      write(error_unit, '(a)') 'qmmm_vmc: error: ' // trim(msg)
    end if
    flush(error_unit)
    if (associated(die_hook)) call die_hook()
    call exit(2)   ! GNU extension: a plain exit status, no "ERROR STOP" backtrace noise
    !$omp end critical (vmc_die)
  end subroutine

  ! A warning on stderr ("qmmm_vmc: warning: ..."): the run goes on, but its result needs a second look.
  subroutine warn(msg)
    character(len=*), intent(in) :: msg
    write(error_unit, '(a)') 'qmmm_vmc: warning: ' // trim(msg)
    flush(error_unit)
  end subroutine

  pure function lower(s) result(t)
    character(len=*), intent(in) :: s
    character(len=len(s)) :: t
    integer :: i, c
    t = s
    do i = 1, len(s)
      c = iachar(s(i:i))
      if (c >= iachar('A') .and. c <= iachar('Z')) t(i:i) = achar(c + 32)
    end do
  end function

  function itoa4(i) result(s)
    integer, intent(in) :: i
    character(len=:), allocatable :: s
    character(len=24) :: b
    write(b, '(i0)') i
    s = trim(b)
  end function

  function itoa8(i) result(s)
    integer(int64), intent(in) :: i
    character(len=:), allocatable :: s
    character(len=24) :: b
    write(b, '(i0)') i
    s = trim(b)
  end function

  ! Full precision (17 significant digits: a real64 reads back bitwise).
  function rtoa(x) result(s)
    real(real64), intent(in) :: x
    character(len=:), allocatable :: s
    character(len=32) :: b
    write(b, '(' // rtoa_edit // ')') x
    s = trim(adjustl(b))
  end function

  ! A number for a message, 4 significant digits: "0.05000", "99.90", "1.000E-12", "1.000E+300", "NaN".
  function short(x) result(s)
    real(real64), intent(in) :: x
    character(len=:), allocatable :: s
    character(len=24) :: b, f
    integer :: k
    if (abs(x) >= 1e-3_real64 .and. abs(x) < 1e4_real64) then
      write(f, '(a,i0,a)') '(f0.', max(0, 3 - floor(log10(abs(x)))), ')'
      write(b, f) x
      s = trim(adjustl(b))
      k = index(s, '.')
      if (k == len(s)) s = s(1:k-1)
      if (s(1:1) == '.') s = '0' // s             ! F0.d leaves the leading zero out
      if (s(1:2) == '-.') s = '-0' // s(2:)
      return
    else if (abs(x) < 1e-99_real64 .and. x /= 0 .or. abs(x) >= 1e100_real64) then
      write(b, '(es11.3e3)') x
    else
      write(b, '(es10.3)') x   ! also 0, NaN and Inf
    end if
    s = trim(adjustl(b))
  end function

  ! x as the edit descriptor Fw.d writes it where that fits, else in ES form with w - 9 decimals (so that a blank
  ! still leads and the column keeps its width), but at least min(d, 4) (then wider): never asterisks. NaN and Inf
  ! as Fw.d writes them.
  function fixed(x, w, d) result(s)
    real(real64), intent(in) :: x
    integer, intent(in) :: w, d
    character(len=:), allocatable :: s
    character(len=64) :: b
    character(len=24) :: f
    integer :: de
    write(f, '(a,i0,a,i0,a)') '(f', w, '.', d, ')'
    write(b, f) x
    if (index(b(1:w), '*') == 0) then
      s = b(1:w); return
    end if
    de = max(w - 9, min(d, 4))
    write(f, '(a,i0,a,i0,a)') '(es', de + 9, '.', de, 'e3)'
    write(b, f) x
    s = b(1:de + 9)
  end function

  ! s right-justified in at least w characters (an integer column: itoa's digits, never asterisks).
  function right(s, w) result(t)
    character(len=*), intent(in) :: s
    integer, intent(in) :: w
    character(len=:), allocatable :: t
    t = repeat(' ', max(0, w - len(s))) // s
  end function

  ! Neither NaN nor +-Inf (without ieee_arithmetic: NaN fails every comparison).
  elemental logical function is_finite(x)
    real(real64), intent(in) :: x
    is_finite = abs(x) <= huge(x)
  end function

  ! Wall-clock ticks (system_clock, 64-bit) and their conversion to seconds.
  integer(int64) function clock_ticks() result(t)
    call system_clock(t)
  end function

  real(real64) function clock_seconds(ticks) result(s)
    integer(int64), intent(in) :: ticks
    integer(int64) :: rate
    call system_clock(count_rate=rate)
    s = real(ticks, real64) / real(rate, real64)
  end function

end module vmc_util
