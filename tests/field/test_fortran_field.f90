! test_fortran_field.f90 -- the Fortran module: options, create/eval against closed forms, async,
! error statuses and messages through the wrappers.
program test_fortran_field
  use qmmm_accel
  use, intrinsic :: iso_c_binding, only: c_associated, c_loc
  use, intrinsic :: iso_fortran_env, only: error_unit
  implicit none
  real(8), target :: pts(3,3), u(3)
  real(8) :: cells(3,8), q(8), nuc(3,2), z(2), v(3), empty(3,0), noq(0)
  real(8) :: wsums(3), wu(3)
  real(8) :: g(3,3), g2(3,3), usum, w(1), phi(10), ef(3,10), phi2(10), ef2(3,10), wsum, tot(3)
  integer(8) :: ncalls, ndip
  real(8) :: dsite(3,1), dmu(3,1), dpt(3,1), du(1), dg(3,1), eg(6,10), eg2(6,10)
  type(qmmm_field) :: f
  type(qmmm_options) :: opt
  integer :: i, j, k, n, s, b, p, d, failures
  character(len=:), allocatable :: msg

  failures = 0
  n = 0
  do i = -1, 1, 2
    do j = -1, 1, 2
      do k = -1, 1, 2
        n = n + 1
        cells(:, n) = [dble(i), dble(j), dble(k)]
      end do
    end do
  end do
  q = 0.125d0
  nuc(:, 1) = [0d0, 0d0, 3d0]; nuc(:, 2) = [0d0, 4d0, 0d0]
  z = [1d0, 2d0]
  pts(:, 1) = [0d0, 0d0, 0d0]
  pts(:, 2) = [0d0, 0d0, 1d0]
  pts(:, 3) = [5d0, 5d0, 5d0]

  opt%backend = QMMM_BACKEND_CPU
  call check(qmmm_field_create(f, cells, q, nuc, z, opt=opt) == QMMM_SUCCESS, 'create')
  call check(qmmm_field_eval(f, pts, u) == QMMM_SUCCESS, 'eval')
  ! centre: 8 x 0.125 / sqrt(3) minus 1/3 + 2/4
  call check(abs(u(1) - (1d0 / sqrt(3d0) - 1d0 / 3d0 - 2d0 / 4d0)) < 1d-14, 'cube centre value')
  call check(abs(u(2) - (4 * 0.125d0 / sqrt(2d0) + 4 * 0.125d0 / sqrt(6d0) - 1d0 / 2d0 - 2d0 / sqrt(17d0))) &
       < 1d-14, 'off-centre value')
  call check(qmmm_field_backend(f, b, p, d) == QMMM_SUCCESS .and. b == QMMM_BACKEND_CPU .and. &
       p == QMMM_PRECISION_DOUBLE .and. d == -1, 'backend report')
  v = -1
  call check(qmmm_field_eval_async(f, pts, v) == QMMM_SUCCESS, 'eval_async')
  call check(qmmm_field_wait(f) == QMMM_SUCCESS, 'wait')
  call check(all(u == v), 'async values equal sync values')
  call check(qmmm_field_destroy(f) == QMMM_SUCCESS, 'destroy')
  call check(.not. c_associated(f%ptr), 'destroy clears the handle')

  ! Empty cell set: nuclei alone.
  call check(qmmm_field_create(f, empty, noq, nuc, z, backend=QMMM_BACKEND_CPU, &
       precision=QMMM_PRECISION_MIXED) == QMMM_SUCCESS, 'create nuclei only')
  call check(qmmm_field_eval(f, pts(:, 1:1), u(1:1)) == QMMM_SUCCESS, 'eval nuclei only')
  call check(abs(u(1) - (-1d0 / 3d0 - 0.5d0)) < 1d-15, 'nuclei-only value')
  ! Errors through the wrappers: a point on a nucleus, a used-up handle.
  s = qmmm_field_eval(f, reshape([0d0, 0d0, 3d0], [3, 1]), u(1:1))
  call check(s == QMMM_ERR_SINGULAR, 'point on nucleus is QMMM_ERR_SINGULAR')
  msg = qmmm_error_message()
  call check(index(msg, 'nucleus 1') > 0 .and. index(msg, 'point 1 ') > 0, 'message counts from 1: '//msg)
  call check(qmmm_status_string(s) == 'QMMM_ERR_SINGULAR', 'status string')
  call check(qmmm_field_destroy(f) == QMMM_SUCCESS, 'destroy 2')
  call check(qmmm_field_eval(f, pts, u) == QMMM_ERR_BAD_HANDLE, 'destroyed handle is rejected')
  call check(qmmm_field_eval(f, pts(:, 1:2), u) == QMMM_ERR_INVALID_ARG, 'shape mismatch is rejected')
  call check(index(qmmm_error_message(), 'xyz must be (3, size(u))') > 0, 'shape mismatch has its message')
  opt%precision = 9
  call check(qmmm_field_create(f, cells, q, nuc, z, opt=opt) == QMMM_ERR_INVALID_ARG, 'bad precision')
  call check(index(qmmm_error_message(), 'precision') > 0, 'message names precision')

  ! Forces: the gradient at the cube's centre (the cells cancel; the nuclei give Z (r - R)/|r - R|^3) and the field
  ! of one electron there at the 10 sites (8 cells, then 2 nuclei): phi = w / d, E = w (R - r) / d^3.
  call check(qmmm_field_create(f, cells, q, nuc, z, backend=QMMM_BACKEND_CPU) == QMMM_SUCCESS, 'create for forces')
  call check(qmmm_field_eval_grad(f, pts, v, g) == QMMM_SUCCESS, 'eval_grad')
  call check(maxval(abs(g(:, 1) - [0d0, -0.125d0, -1d0 / 9d0])) < 1d-15, 'gradient at the centre')
  call check(qmmm_field_eval(f, pts, u) == QMMM_SUCCESS, 'eval for the gradient')
  call check(maxval(abs(u - v)) < 1d-14, 'eval_grad values')
  ! (a status in its own statement: Fortran may evaluate the operands of .and. in any order)
  call check(qmmm_field_eval_grad_async(f, pts, u, g2) == QMMM_SUCCESS, 'eval_grad_async')
  call check(qmmm_field_wait(f) == QMMM_SUCCESS, 'wait for the gradient')
  call check(all(g2 == g) .and. all(u == v), 'async gradient equal')
  g2 = 0
  call check(qmmm_field_eval_grad_sum(f, 3, pts, usum, g2) == QMMM_SUCCESS, 'eval_grad_sum')
  call check(all(g2 == g) .and. usum == (v(1) + v(2)) + v(3), 'eval_grad_sum values')
  w = -1
  call check(qmmm_field_site_field(f, pts(:, 1:1), w, phi, ef) == QMMM_SUCCESS, 'site_field')
  call check(maxval(abs(phi(1:8) + 1d0 / sqrt(3d0))) < 1d-15 .and. abs(phi(9) + 1d0 / 3d0) < 1d-15 .and. &
       abs(phi(10) + 0.25d0) < 1d-15, 'site potentials')
  call check(maxval(abs(ef(:, 1) + cells(:, 1) / sqrt(27d0))) < 1d-15 .and. &
       maxval(abs(ef(:, 10) - [0d0, -1d0 / 16d0, 0d0])) < 1d-15, 'site fields')
  ! Newton's third law: the forces on the sites (Q = -q cells, Z nuclei) and on the electron (w grad) cancel.
  tot = w(1) * g(:, 1) + z(1) * ef(:, 9) + z(2) * ef(:, 10)
  do i = 1, 8
    tot = tot - q(i) * ef(:, i)
  end do
  call check(maxval(abs(tot)) < 1d-15, 'forces sum to zero')
  call check(qmmm_field_site_accum_reset(f) == QMMM_SUCCESS, 'accum_reset')
  call check(qmmm_field_site_accum_add(f, pts(:, 1:1), w) == QMMM_SUCCESS, 'accum_add')
  call check(qmmm_field_site_accum_add(f, pts(:, 1:1), w, weight=0.5d0) == QMMM_SUCCESS, 'accum_add weight')
  call check(qmmm_field_site_accum_read(f, phi2, ef2, wsum, ncalls) == QMMM_SUCCESS, 'accum_read')
  
  call check(wsum == 1.5d0 .and. ncalls == 2 .and. all(phi2 == phi + 0.5d0 * phi) .and. &
       all(ef2 == ef + 0.5d0 * ef), 'accumulated sums')
  ! The field gradient (xx xy xz yy yz zz) of the electron at the origin at the nuclei (0, 0, 3) and (0, 4, 0):
  ! w (delta_ab / d^3 - 3 v_a v_b / d^5), v = R - 0.
  call check(qmmm_field_site_field_grad(f, pts(:, 1:1), w, eg) == QMMM_SUCCESS, 'site_field_grad')
  call check(maxval(abs(eg(:, 9) - [-1d0, 0d0, 0d0, -1d0, 0d0, 2d0] / 27d0)) < 1d-16 .and. &
       maxval(abs(eg(:, 10) - [-1d0, 0d0, 0d0, 2d0, 0d0, -1d0] / 64d0)) < 1d-16, 'site field gradients')
  call check(qmmm_field_site_accum_set_grad(f, .true.) == QMMM_SUCCESS, 'accum_set_grad')
  call check(qmmm_field_site_accum_add(f, pts(:, 1:1), w, weight=2d0) == QMMM_SUCCESS, 'accum_add with gradient')
  call check(qmmm_field_site_accum_read_grad(f, eg2) == QMMM_SUCCESS, 'accum_read_grad')
  call check(all(eg2 == 2d0 * eg), 'accumulated field gradient')
  s = qmmm_field_site_field_grad(f, pts(:, 1:1), w, eg(:, 1:9))
  call check(s == QMMM_ERR_INVALID_ARG .and. index(qmmm_error_message(), 'egrad') > 0, 'egrad size checked')
  s = qmmm_field_site_field(f, pts(:, 1:1), w, phi(1:9), ef)
  call check(s == QMMM_ERR_INVALID_ARG, 'phi size checked')
  call check(index(qmmm_error_message(), 'n_sites') > 0, 'phi size message')
  s = qmmm_field_eval_grad(f, reshape([0d0, 4d0, 0d0], [3, 1]), u(1:1), g(:, 1:1))
  msg = qmmm_error_message()
  call check(s == QMMM_ERR_SINGULAR .and. index(msg, 'nucleus 2') > 0, 'gradient on a nucleus: '//msg)
  call check(qmmm_field_destroy(f) == QMMM_SUCCESS, 'destroy forces field')

  ! Point dipoles: (0, 0, 1) at the origin of a field of one nucleus of Z = 0 far away. On the axis at z = 2:
  ! U = -1/z^2 = -1/4, dU/dz = 2/z^3 = 1/4; the update to (0, 0, 2) doubles both; a set of size 0 removes them.
  call check(qmmm_field_create(f, empty, noq, reshape([50d0, 50d0, 50d0], [3, 1]), [0d0], &
       backend=QMMM_BACKEND_CPU) == QMMM_SUCCESS, 'create for dipoles')
  dsite = 0; dmu = reshape([0d0, 0d0, 1d0], [3, 1]); dpt = reshape([0d0, 0d0, 2d0], [3, 1])
  call check(qmmm_field_set_dipoles(f, dsite, dmu) == QMMM_SUCCESS, 'set_dipoles')
  call check(qmmm_field_eval_grad(f, dpt, du, dg) == QMMM_SUCCESS, 'eval_grad with a dipole')
  call check(abs(du(1) + 0.25d0) < 1d-15 .and. maxval(abs(dg(:, 1) - [0d0, 0d0, 0.25d0])) < 1d-15, 'dipole term')
  call check(qmmm_field_update_dipoles(f, 2 * dmu) == QMMM_SUCCESS, 'update_dipoles')
  call check(qmmm_field_eval(f, dpt, du) == QMMM_SUCCESS, 'eval with the updated dipole')
  call check(abs(du(1) + 0.5d0) < 1d-15, 'updated dipole term')
  call check(qmmm_field_dipole_count(f, ndip) == QMMM_SUCCESS, 'dipole_count')
  call check(ndip == 1, 'one dipole site')
  s = qmmm_field_update_dipoles(f, reshape([1d0, 2d0, 3d0, 4d0, 5d0, 6d0], [3, 2]))
  call check(s == QMMM_ERR_INVALID_ARG .and. index(qmmm_error_message(), 'dipole sites') > 0, 'update size checked')
  s = qmmm_field_eval(f, dsite, du)
  msg = qmmm_error_message()
  call check(s == QMMM_ERR_SINGULAR .and. index(msg, 'dipole site 1') > 0, 'point on a dipole site: '//msg)
  call check(qmmm_field_set_dipoles(f, empty) == QMMM_SUCCESS, 'remove the dipoles')
  call check(qmmm_field_eval(f, dpt, du) == QMMM_SUCCESS, 'eval without dipoles')
  call check(du(1) == 0, 'no dipole term left')
  call check(qmmm_field_destroy(f) == QMMM_SUCCESS, 'destroy dipoles field')

  ! Crowds: walkers by counts, the sums of qmmm_field_eval_sum per walker (bit for bit), the values of qmmm_field_eval;
  ! a point on a nucleus counted from 1 over the whole crowd; a CPU field refuses device-resident calls.
  call check(qmmm_field_create(f, cells, q, nuc, z, backend=QMMM_BACKEND_CPU) == QMMM_SUCCESS, 'create for walkers')
  call check(qmmm_field_eval_walkers(f, [2, 0, 1], pts, wsums, wu) == QMMM_SUCCESS, 'eval_walkers')
  call check(qmmm_field_eval_sum(f, 2, pts, usum) == QMMM_SUCCESS, 'eval_sum of walker 1')
  call check(wsums(1) == usum, 'walker 1 sum')
  call check(qmmm_field_eval_sum(f, 1, pts(:, 3), usum) == QMMM_SUCCESS, 'eval_sum of walker 3')
  call check(wsums(2) == 0 .and. wsums(3) == usum, 'walkers 2 and 3 sums')
  call check(qmmm_field_eval(f, pts, u) == QMMM_SUCCESS, 'eval for the walkers')
  call check(all(wu == u), 'walkers values')
  wsums = 0
  call check(qmmm_field_eval_walkers_async(f, [1, 2], pts, wsums(1:2)) == QMMM_SUCCESS, 'eval_walkers_async')
  call check(qmmm_field_wait(f) == QMMM_SUCCESS, 'wait for the walkers')
  call check(wsums(1) == u(1) .and. wsums(2) == u(2) + u(3), 'eval_walkers_async sums')
  s = qmmm_field_eval_walkers(f, [1, 1], reshape([0d0, 0d0, 0d0, 0d0, 4d0, 0d0], [3, 2]), wsums(1:2))
  msg = qmmm_error_message()
  call check(s == QMMM_ERR_SINGULAR .and. index(msg, 'point 2 ') > 0 .and. index(msg, 'nucleus 2') > 0, &
       'walker point on a nucleus: '//msg)
  call check(qmmm_field_eval_walkers(f, [1, 1], pts, wsums) == QMMM_ERR_INVALID_ARG, 'sums size checked')
  call check(qmmm_field_eval_walkers(f, [1, -1, 1], pts, wsums) == QMMM_ERR_INVALID_ARG, 'negative count')
  call check(index(qmmm_error_message(), 'counts must be >= 0') > 0, 'negative count message')
  call check(qmmm_field_eval_device(f, 3, c_loc(pts), c_loc(u)) == QMMM_ERR_UNSUPPORTED, 'CPU field: no device calls')
  call check(qmmm_field_destroy(f) == QMMM_SUCCESS, 'destroy walkers field')

  if (failures == 0) then
    print '(a)', 'fortran_field: all passed'
  else
    write(error_unit, '(i0,a)') failures, ' check(s) failed'
    error stop 1
  end if
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (.not. ok) then
      failures = failures + 1
      write(error_unit, '(a,a)') 'FAILED: ', what
    end if
  end subroutine
end program test_fortran_field
