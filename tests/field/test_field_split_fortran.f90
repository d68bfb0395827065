! test_field_split_fortran -- QMMM_METHOD_SPLIT from Fortran: the optional arguments method/tolerance/region of
! qmmm_field_create, qmmm_region_around, qmmm_field_split_params/_stats, and the error on a bad tolerance; the split
! field agrees with the direct one within the tolerance (normwise, as the README defines the error).
program test_field_split_fortran
  use, intrinsic :: iso_c_binding
  use qmmm_accel
  implicit none
  integer, parameter :: m = 3000, k = 2, n = 400
  real(c_double) :: cells(3, m), q(m), nuc(3, k), z(k), pts(3, n), u(n), ud(n), us(n), qm(3, 2), region(6)
  real(c_double) :: alpha, r_cut, spacing, est, worst, r(3)
  integer(c_int64_t) :: values, bytes, np, nout
  type(qmmm_field) :: fs, fd, fa
  integer :: s, i, failures = 0

  ! Cells on a jittered lattice (a smooth positive density), two nuclei.
  call random_seed(put=[(12345 + i, i = 1, 64)])
  do i = 1, m
    call random_number(r)
    cells(:, i) = [mod(i, 15), mod(i / 15, 15), i / 225] * 0.5_c_double - 3.5_c_double + 0.1_c_double * r
    q(i) = 1e-3_c_double * exp(-0.1_c_double * sum(cells(:, i)**2))
  end do
  nuc(:, 1) = [0.3_c_double, -0.2_c_double, 0.1_c_double]; z(1) = 6
  nuc(:, 2) = [-1.1_c_double, 0.9_c_double, 0.4_c_double]; z(2) = 1
  qm(:, 1) = [-0.5_c_double, -0.5_c_double, -0.5_c_double]
  qm(:, 2) = [0.5_c_double, 0.7_c_double, 0.2_c_double]
  call expect(qmmm_region_around(qm, 1.0_c_double, region) == QMMM_SUCCESS, 'qmmm_region_around')
  call expect(all(abs(region - [-1.5_c_double, -1.5_c_double, -1.5_c_double, 1.5_c_double, 1.7_c_double, &
       1.2_c_double]) < 1e-15_c_double), 'region values')
  do i = 1, n
    call random_number(r)
    pts(:, i) = region(1:3) + r * (region(4:6) - region(1:3))
  end do

  s = qmmm_field_create(fs, cells, q, nuc, z, backend=QMMM_BACKEND_CPU, method=QMMM_METHOD_SPLIT, &
       tolerance=1e-8_c_double, region=region)
  call expect(s == QMMM_SUCCESS, 'create split: ' // qmmm_error_message())
  s = qmmm_field_create(fd, cells, q, nuc, z, backend=QMMM_BACKEND_CPU)
  call expect(s == QMMM_SUCCESS, 'create direct')
  s = qmmm_field_create(fa, cells, abs(q), nuc, -z, backend=QMMM_BACKEND_CPU)   ! sum |q|/d + sum Z/d
  call expect(s == QMMM_SUCCESS, 'create scale')
  call expect(qmmm_field_eval(fs, pts, u) == QMMM_SUCCESS, 'eval split')
  call expect(qmmm_field_eval(fd, pts, ud) == QMMM_SUCCESS, 'eval direct')
  call expect(qmmm_field_eval(fa, pts, us) == QMMM_SUCCESS, 'eval scale')
  s = qmmm_field_destroy(fa)
  worst = maxval(abs(u - ud) / us)
  print '(a,es10.3)', 'split vs direct, tolerance 1e-8: max normwise error ', worst
  call expect(worst <= 1e-8_c_double, 'within the tolerance')
  call expect(qmmm_field_split_params(fs, alpha, r_cut, spacing, est) == QMMM_SUCCESS, 'split_params')
  call expect(alpha > 0 .and. r_cut > 0 .and. spacing > 0 .and. est > 0 .and. est <= 1e-8_c_double, 'params values')
  call expect(qmmm_field_split_stats(fs, values, bytes, np, nout) == QMMM_SUCCESS, 'split_stats')
  call expect(values > 0 .and. bytes > 0 .and. np == n .and. nout == 0, 'stats values')
  call expect(qmmm_field_split_params(fd, alpha) == QMMM_ERR_UNSUPPORTED, 'params of a DIRECT field')

  ! Bad tolerance and a missing region: errors with the option's name.
  s = qmmm_field_create(fa, cells, q, nuc, z, backend=QMMM_BACKEND_CPU, method=QMMM_METHOD_SPLIT, &
       tolerance=-1.0_c_double, region=region)
  call expect(s == QMMM_ERR_INVALID_ARG .and. index(qmmm_error_message(), 'opt->tolerance') > 0, 'negative tolerance')
  s = qmmm_field_create(fa, cells, q, nuc, z, backend=QMMM_BACKEND_CPU, method=QMMM_METHOD_SPLIT, &
       tolerance=0.0_c_double, region=region)
  call expect(s == QMMM_ERR_INVALID_ARG .and. index(qmmm_error_message(), 'opt->tolerance') > 0, 'zero tolerance')
  s = qmmm_field_create(fa, cells, q, nuc, z, backend=QMMM_BACKEND_CPU, method=QMMM_METHOD_SPLIT)
  call expect(s == QMMM_ERR_NULL_ARG .and. index(qmmm_error_message(), 'opt->region') > 0, 'no region')

  s = qmmm_field_destroy(fs); s = qmmm_field_destroy(fd)
  if (failures > 0) then
    print '(a,i0,a)', 'field_split_fortran: ', failures, ' failure(s)'
    error stop 1
  end if
  print '(a)', 'field_split_fortran: all passed'

contains

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      print '(a)', 'FAILED: ' // what
      failures = failures + 1
    end if
  end subroutine

end program test_field_split_fortran
