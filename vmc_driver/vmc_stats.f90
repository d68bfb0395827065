! vmc_stats.f90 -- error bars of correlated series by reblocking (Flyvbjerg-Petersen), the block
! length chosen by the criterion of Lee, Needs and Towler (pyblock's "optimal block"):
! smallest level B with 2^(3B) > 2 n (sigma_B / sigma_0)^4.
module vmc_stats
  use, intrinsic :: iso_fortran_env, only: real64
  implicit none
  private
  public :: reblock, mean_err

contains

  subroutine mean_err(x, mean, err)
    real(real64), intent(in) :: x(:)
    real(real64), intent(out) :: mean, err
    integer :: n
    n = size(x)
    mean = sum(x) / n
    err = 0
    if (n > 1) err = sqrt(sum((x - mean)**2) / (real(n, real64) * (n - 1)))
  end subroutine

  ! err: the reblocked standard error; level: the blocking level used (block length 2^level);
  ! converged: the criterion was met (else the largest blocks were taken: 2 or 3 of them, an error bar
  ! that cannot be trusted; callers and tests check this).
  subroutine reblock(x, mean, err, level, converged)
    real(real64), intent(in) :: x(:)
    real(real64), intent(out) :: mean, err
    integer, intent(out) :: level
    logical, intent(out), optional :: converged
    real(real64), allocatable :: y(:)
    real(real64) :: e0, eb, m
    integer :: n, b, i, n0
    n0 = size(x)
    allocate(y(n0))
    y = x
    call mean_err(y, mean, e0)
    err = e0; level = 0
    if (present(converged)) converged = .false.
    n = n0; b = 0
    do while (n >= 4)
      b = b + 1
      n = n / 2
      do i = 1, n
        y(i) = 0.5_real64 * (y(2*i - 1) + y(2*i))
      end do
      call mean_err(y(1:n), m, eb)
      if (e0 > 0) then
        if (2.0_real64**(3 * b) > 2 * real(n0, real64) * (eb / e0)**4 .and. level == 0) then
          level = b; err = eb
          if (present(converged)) converged = .true.
        end if
      end if
    end do
    if (level == 0 .and. b > 0) then   ! criterion never met: take the largest blocks, flagged by level
      err = eb; level = b
    end if
  end subroutine

end module vmc_stats
