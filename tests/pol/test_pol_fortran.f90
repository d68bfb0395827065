! test_pol_fortran.f90 -- the pol family through module qmmm_accel: sites from a .pot file and from arrays
! (1-based exclusion lists, 0 padding), the same dipoles both ways; the two-site closed form; errors.
program test_pol_fortran
  use qmmm_accel
  use, intrinsic :: iso_c_binding
  implicit none
  character(len=1024) :: path
  type(qmmm_pol) :: p, q
  type(qmmm_pol_stats) :: st
  type(qmmm_pol_options) :: o
  integer(c_int64_t) :: n, np
  real(c_double), allocatable :: xyz(:,:), ch(:), dip(:,:), al(:,:), e(:,:), mu1(:,:), mu2(:,:)
  integer, allocatable :: excl(:,:)
  real(c_double) :: x2(3, 2), mu(3, 2), e2(3, 2), expect
  integer :: s, i, failures
  failures = 0
  call get_command_argument(1, path)
  call check(o%max_iter == 200 .and. o%tolerance == 1d-8 .and. o%damping_induced == 2.1304d0, 'option defaults')
  s = qmmm_pol_create_from_pot(p, path)
  call check(s == QMMM_SUCCESS, 'qmmm_pol_create_from_pot')
  s = qmmm_pol_sizes(p, n, np)
  call check(s == QMMM_SUCCESS .and. n == 9 .and. np == 9, 'sizes')
  allocate(xyz(3, n), ch(n), dip(3, n), al(6, n), e(3, n), mu1(3, n), mu2(3, n), excl(3, n))
  s = qmmm_pol_sites(p, xyz, ch, dip, al)
  call check(s == QMMM_SUCCESS .and. ch(1) == -0.67072060d0 .and. al(3, 5) == -0.35d0, 'sites')
  ! each site excludes its molecule; the third column pads with 0 and lists the site itself (ignored)
  do i = 1, int(n)
    excl(:, i) = [3 * ((i - 1) / 3) + 1, 3 * ((i - 1) / 3) + 2, 0]
  end do
  s = qmmm_pol_create(q, xyz, charge=ch, dipole=dip, alpha=al, excl=excl)
  call check(s == QMMM_SUCCESS, 'qmmm_pol_create')
  e = 0.01d0
  s = qmmm_pol_solve(p, mu1, e_ext=e, stats=st)
  call check(s == QMMM_SUCCESS .and. st%iterations > 0 .and. st%residual <= 1d-8 .and. st%e_pol < 0, 'solve (file)')
  ! the lists above name one or two other sites of the molecule each; either side's listing excludes a pair
  s = qmmm_pol_solve(q, mu2, e_ext=e)
  call check(s == QMMM_SUCCESS .and. all(mu1 == mu2), 'same dipoles from the file and the arrays')
  call check(qmmm_pol_destroy(q) == QMMM_SUCCESS, 'destroy q')
  call check(qmmm_pol_destroy(p) == QMMM_SUCCESS, 'destroy p')
  ! two isotropic sites on the z axis, field along z: mu = alpha E / (1 - 2 alpha / R^3)
  x2 = reshape([0d0, 0d0, 0d0, 0d0, 0d0, 4d0], [3, 2])
  e2 = reshape([0d0, 0d0, 0.01d0, 0d0, 0d0, 0.01d0], [3, 2])
  s = qmmm_pol_create(q, x2, alpha_iso=[3d0, 3d0], tolerance=1d-14)
  call check(s == QMMM_SUCCESS, 'two sites')
  s = qmmm_pol_solve(q, mu, e_ext=e2)
  expect = 3d0 * 0.01d0 / (1d0 - 2d0 * 3d0 / 64d0)
  call check(s == QMMM_SUCCESS .and. abs(mu(3, 1) - expect) < 1d-15 .and. abs(mu(3, 2) - expect) < 1d-15, &
       'two-site closed form')
  s = qmmm_pol_set_tolerance(q, 0.5d0)
  call check(s == QMMM_ERR_INVALID_ARG .and. index(qmmm_error_message(), 'tolerance') > 0, 'set_tolerance out of range')
  call check(qmmm_pol_set_tolerance(q, 1d-6) == QMMM_SUCCESS, 'set_tolerance')
  s = qmmm_pol_solve(q, mu, e_ext=e2, stats=st)
  call check(s == QMMM_SUCCESS .and. st%residual <= 1d-6 .and. abs(mu(3, 1) - expect) < 1d-6 * expect, &
       'solve after set_tolerance')
  ! errors: wrong shapes (C not called), indices counted from 1 in messages
  s = qmmm_pol_solve(q, mu1, e_ext=e2)
  call check(s == QMMM_ERR_INVALID_ARG, 'mu of the wrong shape')
  s = qmmm_pol_create(p, x2, alpha_iso=[3d0, 3d0], excl=reshape([3, 0], [1, 2]))
  call check(s == QMMM_ERR_INVALID_ARG .and. index(qmmm_error_message(), 'site 1') > 0, 'exclusion out of range')
  s = qmmm_pol_create(p, x2, alpha_iso=[3d0, 3d0], backend=5)
  call check(s == QMMM_ERR_INVALID_ARG .and. index(qmmm_error_message(), 'backend') > 0, 'backend out of range')
  s = qmmm_pol_create_from_pot(p, trim(path) // '.missing')
  call check(s == QMMM_ERR_FILE_OPEN, 'missing file')
  call check(qmmm_pol_destroy(q) == QMMM_SUCCESS, 'destroy')
  s = qmmm_pol_solve(q, mu, e_ext=e2)
  call check(s == QMMM_ERR_BAD_HANDLE, 'solve on a destroyed handle')
  if (failures == 0) then
    print '(a)', 'pol_fortran: all passed'
  else
    print '(a, i0, a)', 'pol_fortran: ', failures, ' failed'
    stop 1
  end if
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (.not. ok) then
      failures = failures + 1
      print '(3a)', 'FAIL: ', what, ' ', trim(qmmm_error_message())
    end if
  end subroutine
end program test_pol_fortran
