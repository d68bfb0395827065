! qmmm_accel_pol.f90 -- Fortran interface to the pol family of qmmm-accel (re-exported by qmmm_accel).
! Polarizable MM sites and their induced dipoles (model, units and signs: qmmm_accel_pol.h and
! docs/user-guide/polarizable.md): xyz(3,n) in bohr, charges in e, dipoles in e bohr, polarizabilities in bohr^3,
! fields in hartree/(e bohr). Site numbers count from 1, as in .pot files; excl(:,i) lists the sites site i
! excludes, 0 pads (the EXCLISTS layout without the leading site number).
module qmmm_accel_pol
  use, intrinsic :: iso_c_binding, only: c_ptr, c_null_ptr, c_loc, c_char, c_null_char, c_int32_t, c_int64_t, &
       c_double
  use qmmm_accel_core
  use qmmm_accel_pol_c
  implicit none
  ! Public by default: the generated interfaces pass through; this file's helpers are private.
  public
  private :: c_ptr, c_null_ptr, c_loc, c_char, c_null_char, c_int32_t, c_int64_t, c_double, n_of

  ! Polarizable sites; type(qmmm_pol) :: p is ready for qmmm_pol_create or qmmm_pol_create_from_pot.
  type :: qmmm_pol
    type(c_ptr) :: ptr = c_null_ptr
  end type qmmm_pol

contains

  ! The site count of p; -1 when p is not a live handle (the C call's status and message are then the caller's).
  integer(c_int64_t) function n_of(p) result(n)
    type(qmmm_pol), intent(in) :: p
    integer(c_int64_t), target :: m
    n = -1
    if (c_qmmm_pol_sizes(p%ptr, c_loc(m), c_null_ptr) == QMMM_SUCCESS) n = m
  end function

  ! Sites from arrays: xyz(3,n); optional charge(n), dipole(3,n), alpha_iso(n) or alpha(6,n) (xx xy xz yy yz zz),
  ! excl(w,n) (1-based site numbers, 0 pads). Options from opt, then the keywords given (backend: where the
  ! solver's products run, QMMM_BACKEND_AUTO, _CPU or _CUDA; device: the GPU, -1 the current one).
  integer function qmmm_pol_create(p, xyz, charge, dipole, alpha_iso, alpha, excl, opt, n_threads, max_iter, &
       tolerance, damp_induced, damp_multipole, start_from_mu, backend, device) result(s)
    type(qmmm_pol), intent(out) :: p
    real(c_double), intent(in), target, contiguous :: xyz(:,:)
    real(c_double), intent(in), target, contiguous, optional :: charge(:), dipole(:,:), alpha_iso(:), alpha(:,:)
    integer, intent(in), optional :: excl(:,:)
    type(qmmm_pol_options), intent(in), optional :: opt
    integer, intent(in), optional :: n_threads, max_iter, backend, device
    real(c_double), intent(in), optional :: tolerance
    logical, intent(in), optional :: damp_induced, damp_multipole, start_from_mu
    type(qmmm_pol_options), target :: o
    integer(c_int64_t), allocatable, target :: ex(:,:)
    type(c_ptr) :: pq, pd, pa, pe
    integer(c_int32_t) :: ncomp, width
    integer :: n
    integer :: ib  ! the caller's index base, restored after the call
    if (present(opt)) o = opt
    if (present(n_threads)) o%n_threads = n_threads
    if (present(max_iter)) o%max_iter = max_iter
    if (present(tolerance)) o%tolerance = tolerance
    if (present(damp_induced)) o%damp_induced = merge(1, 0, damp_induced)
    if (present(damp_multipole)) o%damp_multipole = merge(1, 0, damp_multipole)
    if (present(start_from_mu)) o%start_from_mu = merge(1, 0, start_from_mu)
    if (present(backend)) o%backend = backend
    if (present(device)) o%device = device
    n = size(xyz, 2)
    s = QMMM_SUCCESS
    if (size(xyz, 1) /= 3) s = QMMM_ERR_INVALID_ARG
    if (present(charge)) then
      if (size(charge) /= n) s = QMMM_ERR_INVALID_ARG
    end if
    if (present(dipole)) then
      if (size(dipole, 1) /= 3 .or. size(dipole, 2) /= n) s = QMMM_ERR_INVALID_ARG
    end if
    if (present(alpha_iso) .and. present(alpha)) s = QMMM_ERR_INVALID_ARG
    if (present(alpha_iso)) then
      if (size(alpha_iso) /= n) s = QMMM_ERR_INVALID_ARG
    end if
    if (present(alpha)) then
      if (size(alpha, 1) /= 6 .or. size(alpha, 2) /= n) s = QMMM_ERR_INVALID_ARG
    end if
    if (present(excl)) then
      if (size(excl, 2) /= n) s = QMMM_ERR_INVALID_ARG
    end if
    if (s /= QMMM_SUCCESS) then
      s = fortran_error(s, 'qmmm_pol_create: xyz must be (3, n), charge (n), dipole (3, n), alpha_iso (n) or ' // &
           'alpha (6, n) (not both), excl (w, n)')
      return
    end if
    pq = c_null_ptr; pd = c_null_ptr; pa = c_null_ptr; pe = c_null_ptr
    ncomp = 1
    width = 0
    if (present(charge)) pq = c_loc(charge)
    if (present(dipole)) pd = c_loc(dipole)
    if (present(alpha_iso)) pa = c_loc(alpha_iso)
    if (present(alpha)) then
      pa = c_loc(alpha); ncomp = 6
    end if
    if (present(excl)) then
      width = int(size(excl, 1), c_int32_t)
      allocate(ex(size(excl, 1), n))
      ex = int(excl, c_int64_t) - 1     ! 0 pads -> -1, site numbers -> C indices
      if (width > 0) pe = c_loc(ex)
    end if
    ib = fortran_indices_on()
    s = c_qmmm_pol_create(p%ptr, int(n, c_int64_t), c_loc(xyz), pq, pd, ncomp, pa, width, pe, c_loc(o))
    call fortran_indices_restore(ib)
  end function

  ! Sites from a potential file (.pot of PElib, CPPE and PyFraME).
  integer function qmmm_pol_create_from_pot(p, path, opt, n_threads, max_iter, tolerance, damp_induced, &
       damp_multipole, start_from_mu, backend, device) result(s)
    type(qmmm_pol), intent(out) :: p
    character(len=*), intent(in) :: path
    type(qmmm_pol_options), intent(in), optional :: opt
    integer, intent(in), optional :: n_threads, max_iter, backend, device
    real(c_double), intent(in), optional :: tolerance
    logical, intent(in), optional :: damp_induced, damp_multipole, start_from_mu
    type(qmmm_pol_options), target :: o
    character(kind=c_char, len=:), allocatable, target :: cp
    if (present(opt)) o = opt
    if (present(n_threads)) o%n_threads = n_threads
    if (present(max_iter)) o%max_iter = max_iter
    if (present(tolerance)) o%tolerance = tolerance
    if (present(damp_induced)) o%damp_induced = merge(1, 0, damp_induced)
    if (present(damp_multipole)) o%damp_multipole = merge(1, 0, damp_multipole)
    if (present(start_from_mu)) o%start_from_mu = merge(1, 0, start_from_mu)
    if (present(backend)) o%backend = backend
    if (present(device)) o%device = device
    cp = trim(path) // c_null_char
    s = c_qmmm_pol_create_from_pot(p%ptr, c_loc(cp), c_loc(o))
  end function

  ! Sizes: sites, and those with a non-zero polarizability.
  integer function qmmm_pol_sizes(p, n_sites, n_polarizable) result(s)
    type(qmmm_pol), intent(in) :: p
    integer(c_int64_t), intent(out), target :: n_sites
    integer(c_int64_t), intent(out), optional, target :: n_polarizable
    integer(c_int64_t), target :: np
    s = c_qmmm_pol_sizes(p%ptr, c_loc(n_sites), c_loc(np))
    if (present(n_polarizable)) n_polarizable = np
  end function

  ! Copies the sites out: any of xyz(3,n), charge(n), dipole(3,n), alpha(6,n).
  integer function qmmm_pol_sites(p, xyz, charge, dipole, alpha) result(s)
    type(qmmm_pol), intent(in) :: p
    real(c_double), intent(out), target, contiguous, optional :: xyz(:,:), charge(:), dipole(:,:), alpha(:,:)
    type(c_ptr) :: px, pq, pd, pa
    integer(c_int64_t) :: n
    n = n_of(p)
    if (n < 0) then
      s = c_qmmm_pol_sizes(p%ptr, c_null_ptr, c_null_ptr)   ! QMMM_ERR_BAD_HANDLE with its message
      return
    end if
    s = QMMM_SUCCESS
    px = c_null_ptr; pq = c_null_ptr; pd = c_null_ptr; pa = c_null_ptr
    if (present(xyz)) then
      if (size(xyz, 1) /= 3 .or. size(xyz, 2) /= n) s = QMMM_ERR_INVALID_ARG
      px = c_loc(xyz)
    end if
    if (present(charge)) then
      if (size(charge) /= n) s = QMMM_ERR_INVALID_ARG
      pq = c_loc(charge)
    end if
    if (present(dipole)) then
      if (size(dipole, 1) /= 3 .or. size(dipole, 2) /= n) s = QMMM_ERR_INVALID_ARG
      pd = c_loc(dipole)
    end if
    if (present(alpha)) then
      if (size(alpha, 1) /= 6 .or. size(alpha, 2) /= n) s = QMMM_ERR_INVALID_ARG
      pa = c_loc(alpha)
    end if
    if (s /= QMMM_SUCCESS) then
      s = fortran_error(s, 'qmmm_pol_sites: arrays must be (3, n), (n), (3, n), (6, n) for the n sites of p')
      return
    end if
    s = c_qmmm_pol_sites(p%ptr, px, pq, pd, pa)
  end function

  ! The permanent field E_mm(3,n) at every site.
  integer function qmmm_pol_static_field(p, field) result(s)
    type(qmmm_pol), intent(in) :: p
    real(c_double), intent(out), target, contiguous :: field(:,:)
    if (n_of(p) < 0) then
      s = c_qmmm_pol_sizes(p%ptr, c_null_ptr, c_null_ptr)   ! QMMM_ERR_BAD_HANDLE with its message
      return
    end if
    if (size(field, 1) /= 3 .or. size(field, 2) /= n_of(p)) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_pol_static_field: field must be (3, n) for the n sites of p')
      return
    end if
    s = c_qmmm_pol_static_field(p%ptr, c_loc(field))
  end function

  ! The induced dipoles mu(3,n) in the field e_ext(3,n) of the QM side (none when absent); with start_from_mu
  ! set at create, mu's values on entry are the starting point.
  integer function qmmm_pol_solve(p, mu, e_ext, stats) result(s)
    type(qmmm_pol), intent(in) :: p
    real(c_double), intent(inout), target, contiguous :: mu(:,:)
    real(c_double), intent(in), target, contiguous, optional :: e_ext(:,:)
    type(qmmm_pol_stats), intent(out), optional, target :: stats
    type(qmmm_pol_stats), target :: st
    type(c_ptr) :: pe
    integer(c_int64_t) :: n
    integer :: ib  ! the caller's index base, restored after the call
    n = n_of(p)
    if (n < 0) then
      s = c_qmmm_pol_sizes(p%ptr, c_null_ptr, c_null_ptr)   ! QMMM_ERR_BAD_HANDLE with its message
      return
    end if
    pe = c_null_ptr
    if (present(e_ext)) then
      if (size(e_ext, 1) /= 3 .or. size(e_ext, 2) /= n) n = -1
      pe = c_loc(e_ext)
    end if
    if (size(mu, 1) /= 3 .or. size(mu, 2) /= n) then
      s = fortran_error(QMMM_ERR_INVALID_ARG, 'qmmm_pol_solve: mu and e_ext must be (3, n) for the n sites of p')
      return
    end if
    ib = fortran_indices_on()
    s = c_qmmm_pol_solve(p%ptr, pe, c_loc(mu), c_loc(st))
    call fortran_indices_restore(ib)
    if (present(stats)) stats = st
  end function

  ! The tolerance of the next solves (the create's tolerance until then).
  integer function qmmm_pol_set_tolerance(p, tolerance) result(s)
    type(qmmm_pol), intent(in) :: p
    real(c_double), intent(in) :: tolerance
    s = c_qmmm_pol_set_tolerance(p%ptr, tolerance)
  end function

  integer function qmmm_pol_destroy(p) result(s)
    type(qmmm_pol), intent(inout) :: p
    s = c_qmmm_pol_destroy(p%ptr)
    if (s == QMMM_SUCCESS) p%ptr = c_null_ptr
  end function

end module qmmm_accel_pol
