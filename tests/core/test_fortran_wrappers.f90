! test_fortran_wrappers.f90 -- the Fortran wrappers that came with the generated bindings, against independent
! references: qmmm_field_create(..., flags=) (a field that sums exactly what Coulomb's law says, and unknown flag
! bits refused, so the flags reach C), qmmm_rdf_set_cut (the shells of a simple cubic lattice below the cut vanish,
! those above keep their exact counts and g) and qmmm_rdf_stats_last (N_pairs and the distances a brute-force
! frame computes, n (n - 1) / 2), qmmm_version_string (the numbers of qmmm_version).
program test_fortran_wrappers
  use qmmm_accel
  implicit none
  integer :: fails = 0
  call field_flags()
  call rdf_cut_and_stats()
  call version_text()
  call index_base_kept()
  call explicit_counts()
  if (fails == 0) print '(a)', 'fortran_wrappers: all passed'
  if (fails > 0) error stop 1
contains

  subroutine field_flags()
    real(8) :: cxyz(3, 2), cq(2), nxyz(3, 1), nz(1), p(3, 2), u(2), ref(2)
    type(qmmm_field) :: f
    integer :: i, s
    cxyz = reshape([0d0, 0d0, 0d0, 3d0, 0d0, 0d0], [3, 2])
    cq = [0.5d0, 1.5d0]
    nxyz(:, 1) = [0d0, 4d0, 0d0]
    nz = [2d0]
    p = reshape([1d0, 1d0, 0d0, -2d0, 0.5d0, 1d0], [3, 2])
    do i = 1, 2   ! U = sum_m q_m / |r - r_m| - sum_b Z_b / |r - R_b|
      ref(i) = cq(1) / norm2(p(:, i) - cxyz(:, 1)) + cq(2) / norm2(p(:, i) - cxyz(:, 2)) &
           - nz(1) / norm2(p(:, i) - nxyz(:, 1))
    end do
    call check(qmmm_field_create(f, cxyz, cq, nxyz, nz, backend=QMMM_BACKEND_CPU, flags=QMMM_FLAG_LOW_LATENCY), &
         'create with flags')
    call check(qmmm_field_eval(f, p, u), 'eval')
    if (any(abs(u - ref) > 1d-14 * abs(ref))) then
      print '(a,2es24.16,a,2es24.16)', 'field values ', u, ' reference ', ref
      call bad('field with flags = LOW_LATENCY: values')
    end if
    call check(qmmm_field_destroy(f), 'destroy')
    s = qmmm_field_create(f, cxyz, cq, nxyz, nz, backend=QMMM_BACKEND_CPU, flags=2)
    if (s /= QMMM_ERR_INVALID_ARG .or. index(qmmm_error_message(), 'flags') == 0) &
         call bad('unknown flag bit: ' // qmmm_status_string(s) // ' ' // qmmm_error_message())
  end subroutine

  subroutine rdf_cut_and_stats()
    integer, parameter :: m = 6, n = m**3, nb = 59
    real(8) :: xyz(3, n), box(3, 3), ncut(nb), nfull(nb), gcut(nb), gfull(nb), xyz3(3, n, 3), box3(3, 3, 3)
    integer(8) :: hcut(nb)
    type(qmmm_rdf) :: rdf
    type(qmmm_rdf_stats) :: st
    integer :: i, j, k, a
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
    ! Bins of 0.05 from 0.025: the shells 1, sqrt 2, sqrt 3, 2 (6, 12, 8, 6 neighbours) end bins 20, 28, 35, 40.
    call check(qmmm_rdf_create(rdf, 0.025d0, 2.975d0, nb, backend=QMMM_BACKEND_CPU, method=QMMM_RDF_METHOD_BRUTE), &
         'rdf create')
    call check(qmmm_rdf_set_selection_self(rdf, n), 'selection')
    call check(qmmm_rdf_add_frame(rdf, xyz, box), 'frame')
    call check(qmmm_rdf_results(rdf, g=gfull, n_cum=nfull), 'results')
    call check(qmmm_rdf_stats_last(rdf, st), 'stats_last')
    if (st%backend /= QMMM_BACKEND_CPU .or. st%method /= QMMM_RDF_METHOD_BRUTE .or. st%identical /= 1) &
         call bad('stats: backend, method or identical')
    if (st%n_pairs /= n * (n - 1) / 2d0 .or. st%pairs_visited /= n * (n - 1) / 2d0) then
      print '(a,2f12.1)', 'n_pairs, pairs_visited ', st%n_pairs, st%pairs_visited
      call bad('stats: N_pairs and pairs visited of one brute-force frame')
    end if
    if (.not. (st%seconds >= 0d0)) call bad('stats: seconds')
    ! The cut leaves out the first shell; the frame count is reset with the selections.
    call check(qmmm_rdf_reset(rdf), 'reset')
    call check(qmmm_rdf_set_cut(rdf, 1.2d0), 'set_cut')
    call check(qmmm_rdf_add_frame(rdf, xyz, box), 'frame with cut')
    call check(qmmm_rdf_results(rdf, g=gcut, n_cum=ncut, hist=hcut), 'results with cut')
    if (any(hcut(1:24) /= 0)) call bad('set_cut: pairs below the cut counted')
    if (ncut(20) /= 0d0 .or. ncut(28) /= 12d0 .or. ncut(35) /= 20d0 .or. ncut(40) /= 26d0) then
      print '(a,4f8.2)', 'n(r) at the shells ', ncut(20), ncut(28), ncut(35), ncut(40)
      call bad('set_cut: n(r) above the cut')
    end if
    ! N_pairs is unchanged, so g above the cut is g without it, bit for bit.
    if (any(gcut(25:nb) /= gfull(25:nb)) .or. gfull(28) <= 0d0) call bad('set_cut: g above the cut')
    if (qmmm_rdf_set_cut(rdf, 1d0) /= QMMM_ERR_INVALID_ARG) call bad('set_cut after a frame')
    ! Three frames in one call: stats_last describes the batch, the distances summed.
    call check(qmmm_rdf_reset(rdf), 'reset 2')
    do k = 1, 3
      xyz3(:, :, k) = xyz
      box3(:, :, k) = box
    end do
    call check(qmmm_rdf_add_frames(rdf, xyz3, box3), 'frames')
    call check(qmmm_rdf_stats_last(rdf, st), 'stats_last 3')
    if (st%pairs_visited /= 3 * (n * (n - 1) / 2d0)) call bad('stats: pairs visited of three frames')
    call check(qmmm_rdf_destroy(rdf), 'rdf destroy')
    if (qmmm_rdf_stats_last(rdf, st) /= QMMM_ERR_BAD_HANDLE) call bad('stats_last of a destroyed handle')
    call check(qmmm_rdf_create(rdf, 0d0, 2d0, 10, backend=QMMM_BACKEND_CPU), 'rdf create 2')
    if (qmmm_rdf_set_cut(rdf, 2d0) /= QMMM_ERR_INVALID_ARG) call bad('set_cut at r_max')
    call check(qmmm_rdf_destroy(rdf), 'rdf destroy 2')
  end subroutine

  subroutine version_text()
    integer :: major, minor, patch
    character(len=40) :: expect
    call check(qmmm_version(major, minor, patch), 'version')
    write (expect, '(i0,a,i0,a,i0)') major, '.', minor, '.', patch
    if (qmmm_version_string() /= trim(expect)) call bad('version string ' // qmmm_version_string() // ' /= ' // expect)
  end subroutine

  ! The wrappers count from 1 in their call and give the caller's base back, also a base of 1 set as C code would
  ! (before, every wrapper call left 0), and qmmm_get_index_base reads it.
  subroutine index_base_kept()
    real(8) :: cxyz(3, 1), cq(1), nxyz(3, 1), nz(1), p(3, 2), u(2)
    type(qmmm_field) :: f
    integer :: base, b
    cxyz(:, 1) = [0d0, 0d0, 0d0]; cq = 1; nxyz(:, 1) = [2d0, 0d0, 0d0]; nz = 1
    p = reshape([5d0, 5d0, 5d0, 2d0, 0d0, 0d0], [3, 2])   ! point 2 on nucleus 1
    call check(qmmm_field_create(f, cxyz, cq, nxyz, nz, backend=QMMM_BACKEND_CPU), 'create for the index base')
    do base = 1, 0, -1
      call check(qmmm_set_index_base(base), 'set_index_base')
      if (qmmm_field_eval(f, p, u) /= QMMM_ERR_SINGULAR) call bad('eval on a nucleus')
      if (index(qmmm_error_message(), 'point 2 ') == 0) call bad('the wrapper counts from 1: '//qmmm_error_message())
      call check(qmmm_get_index_base(b), 'get_index_base')
      if (b /= base) call bad('the caller''s index base changed by a wrapper call')
    end do
    call check(qmmm_field_destroy(f), 'destroy for the index base')
  end subroutine

  ! Arrays sized to a compile-time maximum, used in part through n= (eval), n_cells= / n_nuclei= (create) and n= /
  ! n_nuclei= (create_charges): the same bits as the slices passed whole; a count below 0 or beyond an array is
  ! refused with its name. Before, the count was size(x) and such arrays had to be sliced.
  subroutine explicit_counts()
    integer, parameter :: mx = 40, nc = 7, nn = 2, np = 5
    real(8) :: cxyz(3, mx), cq(mx), nxyz(3, mx), nz(mx), p(3, mx), u(mx), v(np), a(mx), b(mx)
    type(qmmm_field) :: f, g
    integer :: i
    do i = 1, mx
      cxyz(:, i) = [sin(1.1d0 * i), cos(0.7d0 * i), 0.3d0 * i]; cq(i) = 0.1d0 * mod(i, 4) + 0.05d0
      nxyz(:, i) = [-2d0 + i, 1.5d0, -1d0]; nz(i) = 1 + mod(i, 3)
      p(:, i) = [0.37d0 * i, -0.21d0 * i, 5d0 + 0.1d0 * i]
      a(i) = 0.5d0; b(i) = 0.8d0
    end do
    u = -7
    ! Cells and nuclei.
    call check(qmmm_field_create(f, cxyz, cq, nxyz, nz, backend=QMMM_BACKEND_CPU, n_cells=nc, n_nuclei=nn), &
         'create with n_cells, n_nuclei')
    call check(qmmm_field_create(g, cxyz(:, 1:nc), cq(1:nc), nxyz(:, 1:nn), nz(1:nn), backend=QMMM_BACKEND_CPU), &
         'create from slices')
    call check(qmmm_field_eval(f, p, u, n=np), 'eval n=')
    call check(qmmm_field_eval(g, p(:, 1:np), v), 'eval of a slice')
    if (any(u(1:np) /= v)) call bad('eval with n= differs from the slice')
    if (any(u(np + 1:) /= -7)) call bad('eval with n= wrote beyond n')
    u = -7
    call check(qmmm_field_eval_async(f, p, u, n=np), 'eval_async n=')
    call check(qmmm_field_wait(f), 'wait')
    if (any(u(1:np) /= v) .or. any(u(np + 1:) /= -7)) call bad('eval_async with n=')
    if (qmmm_field_eval(f, p, u, n=mx + 1) /= QMMM_ERR_INVALID_ARG) call bad('eval n beyond the arrays')
    if (index(qmmm_error_message(), 'n = 41 exceeds the arrays'' size (40)') == 0) &
         call bad('its message: ' // qmmm_error_message())
    if (qmmm_field_eval(f, p, u, n=-1) /= QMMM_ERR_INVALID_ARG) call bad('eval n negative')
    call check(qmmm_field_destroy(f), 'destroy f')
    call check(qmmm_field_destroy(g), 'destroy g')
    if (qmmm_field_create(g, cxyz, cq, nxyz, nz, n_cells=mx + 1) /= QMMM_ERR_INVALID_ARG) call bad('n_cells too big')
    if (index(qmmm_error_message(), 'n_cells = 41') == 0) call bad('its message: ' // qmmm_error_message())
    ! Point charges, both layouts, with screening and nuclei.
    call check(qmmm_field_create_charges(f, cxyz(1, :), cxyz(2, :), cxyz(3, :), cq, screen_a=a, screen_b=b, &
         nuc_xyz=nxyz, nuc_z=nz, backend=QMMM_BACKEND_CPU, n=nc, n_nuclei=nn), 'charges with n, n_nuclei')
    call check(qmmm_field_create_charges(g, cxyz(:, 1:nc), cq(1:nc), screen_a=a(1:nc), screen_b=b(1:nc), &
         nuc_xyz=nxyz(:, 1:nn), nuc_z=nz(1:nn), backend=QMMM_BACKEND_CPU), 'charges from slices')
    call check(qmmm_field_eval(f, p, u, n=np), 'charges eval n=')
    call check(qmmm_field_eval(g, p(:, 1:np), v), 'charges eval of a slice')
    if (any(u(1:np) /= v)) call bad('charges with n= differ from the slices')
    call check(qmmm_field_destroy(f), 'destroy charges f')
    call check(qmmm_field_create_charges(f, cxyz, cq, backend=QMMM_BACKEND_CPU, n=nc), 'charges xyz with n')
    call check(qmmm_field_destroy(f), 'destroy charges xyz')
    if (qmmm_field_create_charges(f, cxyz, cq(1:3), n=nc) /= QMMM_ERR_INVALID_ARG) call bad('n beyond q')
    if (qmmm_field_create_charges(f, cxyz, cq, n_nuclei=1) /= QMMM_ERR_INVALID_ARG) call bad('n_nuclei alone')
    call check(qmmm_field_destroy(g), 'destroy charges g')
  end subroutine

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
end program test_fortran_wrappers
