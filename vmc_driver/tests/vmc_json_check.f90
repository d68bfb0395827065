! vmc_json_check -- the JSON writer's arrays of reals (vmc_json put_reals) against the text written number by number
! (vmc_util rtoa, null for NaN and Inf, ', ' between): lengths 0, 1 and around the writer's runs of 64 numbers,
! signs, -0, subnormal, huge and tiny magnitudes, NaN and Inf at a run's start, middle and end. Exit 0 only if
! every array's text is the reference's.
program vmc_json_check
  use, intrinsic :: iso_fortran_env, only: real64
  use, intrinsic :: ieee_arithmetic, only: ieee_value, ieee_quiet_nan, ieee_positive_inf, ieee_negative_inf
  use vmc_util, only: rtoa, is_finite
  use vmc_json
  implicit none
  integer, parameter :: sizes(9) = [0, 1, 2, 63, 64, 65, 128, 129, 300]
  real(real64), allocatable :: x(:)
  integer :: t, i, nfail, s
  nfail = 0
  do t = 1, size(sizes)
    do s = 0, 1   ! s = 1: with NaN and Inf
      allocate(x(sizes(t)))
      do i = 1, size(x)
        x(i) = (-1.0_real64)**i * 10.0_real64**(mod(37 * i, 617) - 308) * (1 + 1e-3_real64 * i)
      end do
      if (size(x) >= 3) x(3) = -0.0_real64
      if (size(x) >= 5) x(5) = tiny(1.0_real64) / 7
      if (size(x) >= 7) x(7) = huge(1.0_real64)
      if (s == 1 .and. size(x) >= 1) then
        x(1) = ieee_value(1.0_real64, ieee_quiet_nan)
        x(size(x)) = ieee_value(1.0_real64, ieee_positive_inf)
        x((size(x) + 1) / 2) = ieee_value(1.0_real64, ieee_negative_inf)
      end if
      call check(x, nfail)
      deallocate(x)
    end do
  end do
  if (nfail > 0) then
    print '(a,i0,a)', 'vmc_json_check: ', nfail, ' arrays differ'
    error stop 1
  end if
  print '(a)', 'vmc_json_check: all passed'

contains

  subroutine check(x, nfail)
    real(real64), intent(in) :: x(:)
    integer, intent(inout) :: nfail
    type(json_writer) :: js
    character(len=:), allocatable :: want, got, line
    character(len=256) :: msg
    integer :: ios, u, i, a, b, sz
    want = '['
    do i = 1, size(x)
      if (i > 1) want = want // ', '
      if (is_finite(x(i))) then
        want = want // rtoa(x(i))
      else
        want = want // 'null'
      end if
    end do
    want = want // ']'
    call js%open('vmc_json_check.json', ios, msg)
    if (ios /= 0) error stop 'vmc_json_check: cannot write vmc_json_check.json'
    call js%put('x', x)
    call js%close()
    open(newunit=u, file='vmc_json_check.json', access='stream', form='unformatted', action='read')
    inquire(unit=u, size=sz)
    allocate(character(len=sz) :: line)
    read(u) line
    close(u, status='delete')
    a = index(line, '"x": ') + 5
    b = index(line, ']', back=.true.)
    got = line(a:b)
    if (got /= want) then
      nfail = nfail + 1
      print '(a,i0,a)', 'size ', size(x), ': differs'
      print '(a)', '  got  ' // got(1:min(len(got), 200))
      print '(a)', '  want ' // want(1:min(len(want), 200))
    end if
  end subroutine
end program
