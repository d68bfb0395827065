! test_cube_fortran.f90 -- the cube family through module qmmm_accel: read psi4's water cube, copy the
! environment, build fields two ways and check they agree with a direct sum; errors name the file.
program test_cube_fortran
  use qmmm_accel
  use, intrinsic :: iso_c_binding
  implicit none
  character(len=1024) :: path
  type(qmmm_env) :: env
  type(qmmm_field) :: f, g
  integer(c_int64_t) :: nc, nn
  real(c_double) :: dv, p(3, 1), u(1), v(1), ref
  real(c_double), allocatable :: cx(:,:), cq(:), nx(:,:), nz(:)
  integer :: s, m, failures
  failures = 0
  call get_command_argument(1, path)
  s = qmmm_cube_read(env, path, 1.0d-3)
  call check(s == QMMM_SUCCESS, 'qmmm_cube_read')
  s = qmmm_env_sizes(env, nc, nn, dv)
  call check(s == QMMM_SUCCESS .and. nc == 2655 .and. nn == 3 .and. abs(dv - 0.064d0) < 1d-12, 'sizes')
  allocate(cx(3, nc), cq(nc), nx(3, nn), nz(nn))
  s = qmmm_env_copy(env, cx, cq, nx, nz)
  call check(s == QMMM_SUCCESS .and. nz(1) == 8 .and. abs(sum(cq) - 9.8605) < 1d-3, 'copy')
  p(:, 1) = [-4.0d0, 0.5d0, 0.3d0]
  ref = 0
  do m = 1, int(nc)
    ref = ref + cq(m) / norm2(p(:, 1) - cx(:, m))
  end do
  do m = 1, int(nn)
    ref = ref - nz(m) / norm2(p(:, 1) - nx(:, m))
  end do
  s = qmmm_field_create_from_env(f, env)
  call check(s == QMMM_SUCCESS, 'field from env')
  s = qmmm_field_eval(f, p, u)
  call check(s == QMMM_SUCCESS .and. abs(u(1) - ref) < 1d-12, 'U_ES from env vs direct sum')
  s = qmmm_field_create_from_cubes(g, [character(len=1024) :: path], 1.0d-3)
  call check(s == QMMM_SUCCESS, 'field from cubes')
  s = qmmm_field_eval(g, p, v)
  call check(s == QMMM_SUCCESS .and. v(1) == u(1), 'same field both ways')
  s = qmmm_field_destroy(f); s = qmmm_field_destroy(g)
  call check(qmmm_env_destroy(env) == QMMM_SUCCESS, 'destroy')
  s = qmmm_cube_read(env, 'no/such/file.cube', 0d0)
  call check(s == QMMM_ERR_FILE_OPEN .and. index(qmmm_error_message(), 'no/such/file.cube') > 0, 'missing file')
  if (failures == 0) then
    print '(a)', 'cube_fortran: all passed'
  else
    print '(a,i0,a)', 'cube_fortran: ', failures, ' failed'
    stop 1
  end if
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      failures = failures + 1
      print '(3a)', 'FAILED: ', what, ': ' // qmmm_error_message()
    end if
  end subroutine
end program
