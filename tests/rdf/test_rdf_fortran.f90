! test_rdf_fortran.f90 -- the Fortran interface: simple cubic lattice shells (exact coordination numbers),
! results arrays, and statuses for bad arguments.
program test_rdf_fortran
  use qmmm_accel
  implicit none
  integer, parameter :: m = 6, n = m**3, nb = 69
  real(8) :: xyz(3, n), box(3, 3), r(nb), g(nb), ncum(nb), lim, xyz3(3, n, 3), box3(3, 3, 3)
  integer(8) :: hist(nb), nf, hist3(nb)
  type(qmmm_rdf) :: rdf
  integer :: i, j, k, a, s, fails
  fails = 0
  a = 0
  do k = 0, m - 1
    do j = 0, m - 1
      do i = 0, m - 1
        a = a + 1
        xyz(:, a) = [real(i, 8), real(j, 8), real(k, 8)]
      end do
    end do
  end do
  box = 0
  box(1, 1) = m; box(2, 2) = m; box(3, 3) = m
  call check(qmmm_rdf_box_limit(box, lim), 'box_limit')
  if (abs(lim - 3d0) > 1d-12) call bad('box limit')
  call check(qmmm_rdf_create(rdf, 0.025d0, 2.975d0, 59, backend=QMMM_BACKEND_CPU), 'create')
  call check(qmmm_rdf_set_selection_self(rdf, n), 'selection')
  call check(qmmm_rdf_add_frame(rdf, xyz, box), 'frame')
  call check(qmmm_rdf_add_frame(rdf, xyz, box), 'frame 2')
  call check(qmmm_rdf_results(rdf, r(1:59), g(1:59), ncum(1:59), hist(1:59), nf), 'results')
  if (nf /= 2) call bad('frame count')
  ! shells 1, sqrt 2, sqrt 3, 2 hold 6, 12, 8, 6 neighbours
  if (ncum(20) /= 6d0 .or. ncum(28) /= 18d0 .or. ncum(35) /= 26d0 .or. ncum(40) /= 32d0) call bad('n(r) shells')
  if (hist(20) /= 2 * n * 6 / 2) call bad('first shell count')
  ! three frames in one call: the same counts as three single frames
  call check(qmmm_rdf_reset(rdf), 'reset')
  do k = 1, 3
    xyz3(:, :, k) = xyz
    box3(:, :, k) = box
  end do
  call check(qmmm_rdf_add_frames(rdf, xyz3, box3), 'frames')
  call check(qmmm_rdf_results(rdf, hist=hist3(1:59), n_frames=nf), 'results 3')
  if (nf /= 3 .or. any(2 * hist3(1:59) /= 3 * hist(1:59))) call bad('add_frames counts')
  if (qmmm_rdf_add_frames(rdf, xyz3, box3(:, :, 1:2)) /= QMMM_ERR_INVALID_ARG) call bad('frames shape check')
  ! wrong shapes and bad handles are statuses, not crashes
  if (qmmm_rdf_add_frame(rdf, xyz(1:2, :), box) /= QMMM_ERR_INVALID_ARG) call bad('shape check')
  call check(qmmm_rdf_destroy(rdf), 'destroy')
  if (qmmm_rdf_reset(rdf) /= QMMM_ERR_BAD_HANDLE) call bad('destroyed handle')
  if (qmmm_rdf_create(rdf, 1d0, 0.5d0, 10) /= QMMM_ERR_INVALID_ARG) call bad('r_max < r_min')
  if (fails == 0) print '(a)', 'fortran_rdf: all passed'
contains
  subroutine check(st, what)
    integer, intent(in) :: st
    character(*), intent(in) :: what
    if (st /= QMMM_SUCCESS) then
      print '(3a)', what, ': ', qmmm_error_message()
      fails = fails + 1
    end if
  end subroutine
  subroutine bad(what)
    character(*), intent(in) :: what
    print '(2a)', 'FAILED: ', what
    fails = fails + 1
  end subroutine
end program
