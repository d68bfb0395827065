! test_fortran_charges.f90 -- the module's point-charge bindings: both position layouts, both screening forms,
! the summing call on an assumed-size coord(3,*), messages counted from 1, shape checks with their own message.
program test_fortran_charges
  use qmmm_accel
  use, intrinsic :: iso_fortran_env, only: error_unit
  implicit none
  integer, parameter :: m = 200, ne = 7
  real(8) :: x(m), y(m), z(m), q(m), xyz(3, m), a(m), b(m), sig(m), coord(3, ne), esum, eref, e2, nuc(3, 1), zn(1), &
       uv(ne), ua(ne), us(2 * ne)
  type(qmmm_field) :: f, g
  integer :: i, k, failures, nt
  real(8) :: split_alpha
  failures = 0
  do i = 1, m
    x(i) = 9d0 * sin(1.3d0 * i); y(i) = 9d0 * cos(0.7d0 * i); z(i) = 9d0 * sin(0.31d0 * i + 1)
    q(i) = merge(0.3d0, -0.2d0, mod(i, 3) == 0)
    a(i) = merge(1d0, 0.5d0, mod(i, 2) == 0); b(i) = 0.8d0; sig(i) = 0.6d0
  end do
  xyz(1, :) = x; xyz(2, :) = y; xyz(3, :) = z
  do k = 1, ne
    coord(:, k) = [0.1d0 * k, -0.2d0 * k, 0.05d0 * k]
  end do
  nuc(:, 1) = [0.3d0, 0.3d0, 0.3d0]; zn = 6

  ! No screening: the closed form, both layouts, with a nucleus.
  call check(qmmm_field_create_charges(f, x, y, z, q, nuc_xyz=nuc, nuc_z=zn, backend=QMMM_BACKEND_CPU) == 0, 'create')
  call check(qmmm_field_create_charges(g, xyz, q, nuc_xyz=nuc, nuc_z=zn, backend=QMMM_BACKEND_CPU) == 0, 'create xyz')
  call check(qmmm_field_eval_sum(f, ne, coord, esum) == 0, 'eval_sum')
  call check(qmmm_field_eval_sum(g, ne, coord, e2) == 0, 'eval_sum xyz')
  eref = 0
  do k = 1, ne
    eref = eref - sum(q / sqrt((coord(1, k) - x)**2 + (coord(2, k) - y)**2 + (coord(3, k) - z)**2)) &
         - zn(1) / norm2(coord(:, k) - nuc(:, 1))
  end do
  call check(abs(esum - eref) <= 1d-12 * abs(eref), 'unscreened sum')
  call check(esum == e2, 'layouts give the same bits')
  ! Electron 4 on charge 6 (unscreened): singular, counted from 1.
  coord(:, 4) = xyz(:, 6)
  call check(qmmm_field_eval_sum(f, ne, coord, esum) == QMMM_ERR_SINGULAR, 'singular')
  call check(index(qmmm_error_message(), 'point 4 ') > 0 .and. index(qmmm_error_message(), 'charge 6,') > 0, &
       'message counts from 1: '//qmmm_error_message())
  call check(qmmm_field_destroy(f) == 0 .and. qmmm_field_destroy(g) == 0, 'destroy')

  ! EXP screening: electron 4 sits on charge 6, whose a = 1: finite.
  call check(qmmm_field_create_charges(f, x, y, z, q, screen_a=a, screen_b=b, backend=QMMM_BACKEND_CPU) == 0, 'exp')
  call check(qmmm_field_eval_sum(f, ne, coord, esum) == 0, 'exp sum on a screened charge')
  eref = 0
  do k = 1, ne
    do i = 1, m
      if (k == 4 .and. i == 6) cycle
      eref = eref - q(i) * (1 - a(i) * exp(-b(i) * sum((coord(:, k) - xyz(:, i))**2))) / norm2(coord(:, k) - xyz(:, i))
    end do
  end do
  call check(abs(esum - eref) <= 1d-12 * abs(eref), 'exp sum')
  ! The asynchronous form writes u in place: a whole array gets the values of qmmm_field_eval; a strided section
  ! (which the compiler would pass as a temporary, freed before qmmm_field_wait) is refused with a message.
  call check(qmmm_field_eval(f, coord, uv) == 0, 'exp eval')
  ua = 0
  call check(qmmm_field_eval_async(f, coord, ua) == 0 .and. qmmm_field_wait(f) == 0, 'exp eval_async')
  call check(all(ua == uv), 'eval_async gives the bits of eval')
  us = 0
  call check(qmmm_field_eval_async(f, coord, us(1:2 * ne:2)) == QMMM_ERR_INVALID_ARG, 'eval_async into a strided u')
  call check(index(qmmm_error_message(), 'u must be contiguous') > 0, 'its message: '//qmmm_error_message())
  call check(qmmm_field_wait(f) == 0 .and. all(us == 0), 'nothing pending, us untouched')
  call check(qmmm_field_destroy(f) == 0, 'destroy exp')
  ! Gaussian charges.
  call check(qmmm_field_create_charges(f, xyz, q, sigma=sig, backend=QMMM_BACKEND_CPU) == 0, 'gaussian')
  call check(qmmm_field_eval_sum(f, ne, coord, esum) == 0, 'gaussian sum')
  eref = 0
  do k = 1, ne
    do i = 1, m
      if (k == 4 .and. i == 6) then
        eref = eref - q(i) * 2 / (sig(i) * sqrt(acos(-1d0)))
      else
        eref = eref - q(i) * erf(norm2(coord(:, k) - xyz(:, i)) / sig(i)) / norm2(coord(:, k) - xyz(:, i))
      end if
    end do
  end do
  call check(abs(esum - eref) <= 1d-12 * abs(eref), 'gaussian sum')
  call check(qmmm_field_destroy(f) == 0, 'destroy gaussian')

  ! Shape checks say what is wrong.
  call check(qmmm_field_create_charges(f, x, y(1:5), z, q) == QMMM_ERR_INVALID_ARG, 'sizes differ')
  call check(index(qmmm_error_message(), 'x, y, z and q must have one size') > 0, 'its message')
  call check(qmmm_field_create_charges(f, x, y, z, q, screen_a=a) == QMMM_ERR_INVALID_ARG, 'a without b')
  call check(index(qmmm_error_message(), 'needs screen_a and screen_b') > 0, 'its message')
  ! Nuclei need both arrays, either way round (nuc_xyz alone dropped the nuclei with success).
  call check(qmmm_field_create_charges(f, x, y, z, q, nuc_xyz=nuc) == QMMM_ERR_INVALID_ARG, 'nuc_xyz without nuc_z')
  call check(index(qmmm_error_message(), 'nuc_xyz without nuc_z') > 0, 'its message')
  call check(qmmm_field_create_charges(f, xyz, q, nuc_xyz=nuc) == QMMM_ERR_INVALID_ARG, 'xyz: nuc_xyz without nuc_z')
  call check(qmmm_field_create_charges(f, xyz, q, nuc_z=zn) == QMMM_ERR_INVALID_ARG, 'nuc_z without nuc_xyz')
  call check(index(qmmm_error_message(), 'nuc_z without nuc_xyz') > 0, 'its message')
  call check(qmmm_default_threads(nt) == 0 .and. nt >= 1, 'default threads')

  ! One call for plain and screened charges: screening= chooses whatever arrays come with it (NONE ignores them,
  ! GAUSSIAN takes sigma from screen_a); each gives the bits of the call with only its own arrays.
  do k = 1, ne
    coord(:, k) = [0.1d0 * k, -0.2d0 * k, 0.05d0 * k]
  end do
  call check(qmmm_field_create_charges(f, xyz, q, backend=QMMM_BACKEND_CPU) == 0, 'plain')
  call check(qmmm_field_create_charges(g, xyz, q, screen_a=a, screen_b=b, screening=QMMM_SCREEN_NONE, &
       backend=QMMM_BACKEND_CPU) == 0, 'screening NONE with arrays')
  call check(qmmm_field_eval_sum(f, ne, coord, esum) == 0 .and. qmmm_field_eval_sum(g, ne, coord, e2) == 0, 'NONE sums')
  call check(esum == e2, 'screening NONE ignores screen_a and screen_b')
  call check(qmmm_field_destroy(f) == 0 .and. qmmm_field_destroy(g) == 0, 'destroy NONE')
  call check(qmmm_field_create_charges(f, xyz, q, sigma=sig, backend=QMMM_BACKEND_CPU) == 0, 'sigma')
  call check(qmmm_field_create_charges(g, xyz, q, screen_a=sig, screen_b=b, screening=QMMM_SCREEN_GAUSSIAN, &
       backend=QMMM_BACKEND_CPU) == 0, 'screening GAUSSIAN from screen_a')
  call check(qmmm_field_eval_sum(f, ne, coord, esum) == 0 .and. qmmm_field_eval_sum(g, ne, coord, e2) == 0, 'G sums')
  call check(esum == e2, 'screening GAUSSIAN takes sigma from screen_a')
  call check(qmmm_field_destroy(f) == 0 .and. qmmm_field_destroy(g) == 0, 'destroy GAUSSIAN')
  call check(qmmm_field_create_charges(f, xyz, q, screening=QMMM_SCREEN_EXP) == QMMM_ERR_NULL_ARG, 'EXP without arrays')
  call check(index(qmmm_error_message(), 'needs screen_a and screen_b') > 0, 'its message: '//qmmm_error_message())
  call check(qmmm_field_create_charges(f, xyz, q, screening=7) == QMMM_ERR_INVALID_ARG, 'not a screening')

  ! The split method from Fortran: method=, tolerance=, region= as qmmm_field_create takes them.
  call check(qmmm_field_create_charges(f, xyz, q, backend=QMMM_BACKEND_CPU, precision=QMMM_PRECISION_DOUBLE) == 0, &
       'direct for the split')
  call check(qmmm_field_create_charges(g, xyz, q, backend=QMMM_BACKEND_CPU, precision=QMMM_PRECISION_DOUBLE, &
       method=QMMM_METHOD_SPLIT, tolerance=1d-9, region=[-2d0, -2d0, -2d0, 2d0, 2d0, 2d0]) == 0, &
       'split: '//qmmm_error_message())
  call check(qmmm_field_split_params(g, split_alpha) == 0 .and. split_alpha > 0, 'the split field has an alpha')
  call check(qmmm_field_split_params(f, split_alpha) == QMMM_ERR_UNSUPPORTED, 'the direct field has none')
  call check(qmmm_field_eval_sum(f, ne, coord, esum) == 0 .and. qmmm_field_eval_sum(g, ne, coord, e2) == 0, 'S sums')
  call check(abs(esum - e2) <= 1d-7 * abs(esum), 'split within its tolerance of the direct sum')
  call check(esum /= e2, 'a split sum equal to the direct one to the bit would be suspicious')
  call check(qmmm_field_destroy(f) == 0 .and. qmmm_field_destroy(g) == 0, 'destroy split')

  if (failures == 0) then
    print '(a)', 'fortran_charges: all passed'
  else
    write (error_unit, '(i0,a)') failures, ' check(s) failed'
    error stop 1
  end if
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (.not. ok) then
      failures = failures + 1
      write (error_unit, '(a,a)') 'FAILED: ', what
    end if
  end subroutine
end program test_fortran_charges
